"""The timeline's ruler: tick steps, labels and units (pure functions of the ruler widget module)."""

from __future__ import annotations

from conftest import SAMPLES

from tui.model import load_trace
from tui.model.view.viewport import Viewport, fit_whole
from tui.widgets.ruler import ruler_text, tick_step


def test_ruler_ticks_and_units_follow_the_zoom():
    assert tick_step(100) == 2000  # 100 ns cells: a tick every 2 us (>= 12 cells apart)
    v = Viewport(0, 1 << 20, 80)  # ~1 ms per cell
    text = ruler_text(v, 0, None, gutter=10).plain
    labels = text.splitlines()[0]
    assert "ms" in labels and "us" not in labels
    fine = ruler_text(Viewport(0, 64, 80), 0, (0, 1000), gutter=10)
    assert "us" in fine.plain.splitlines()[0] or "ns" in fine.plain.splitlines()[0]
    assert any("on #5a4a00" in str(span.style) for span in fine.spans)  # the marked range is shaded


def test_tick_labels_have_enough_digits_to_differ():
    from tui.text.fmt import fmt_tick

    assert [fmt_tick(t, 250) for t in (880_000, 880_250, 880_500)] == ["880.00us", "880.25us", "880.50us"]
    assert fmt_tick(2_000_000, 1_000_000) == "2ms" and fmt_tick(-200_000_000, 100_000_000) == "-200ms"
    assert fmt_tick(0, 100) == "0ns" and fmt_tick(1_500_000_000, 500_000_000) == "1.5s"


def test_the_whole_trace_starts_at_its_first_event_not_half_a_bucket_before_it(tmp_path):
    """The H100 BERT sample cut at 20 KB spans 0 to 4.43 ms; the quantized bucket shows 5.57 ms at 137 cells.
    Centered, the ruler began at -0.6 ms ("-500us"); the whole view starts 1% of the span before the first event
    and keeps the room left over after the last."""
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes((SAMPLES / "h100-bert-small.json.gz").read_bytes()[:20_000])
    t = load_trace(cut, use_cache=False)
    start, end = int(t.x.ts.min()), int((t.x.ts + t.x.dur).max())
    v = fit_whole(start, end, 137)
    assert start - 0.01 * (end - start) - v.bucket <= v.t0 <= start < end <= v.t1
    labels = ruler_text(v, t.origin, None).plain.splitlines()[0]
    assert "-" not in labels and "0us" in labels
