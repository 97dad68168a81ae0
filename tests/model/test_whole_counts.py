"""Whole counts: the details panel counts everything a selection launched, explain counts every event it is about,
and names are cut at a word with … (the full name one key away), never mid-word."""

from __future__ import annotations

import re

import pytest
from conftest import SAMPLES, X, shared_traces, write_trace
from rich.console import Console

from tui.model.analyses.details import describe, launched_by, launched_events
from tui.model.analyses.results import Results
from tui.model.load import load_trace
from tui.tables.explain import note
from tui.widgets.details import DetailsPanel, details_renderable, launched_text

BERT = SAMPLES / "h100-bert-small.json.gz"


@pytest.fixture(scope="module")
def bert() -> Results:
    return Results(load_trace(BERT, use_cache=False))


def _step(a: Results) -> int:
    return next(i for i in range(a.trace.n) if a.trace.name_of(i) == "ProfilerStep#6" and a.trace.x.cat[i] == 1)


def _text(renderable, width: int = 120) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115 - rich closes nothing
    console.print(renderable)
    return console.export_text()


def test_the_panel_counts_every_kernel_and_copy_a_step_launched(bert):
    w = describe(bert, _step(bert), frames=bert).launched
    assert w is not None and (w.count, w.kernels, w.copies, w.sets) == (61, 60, 1, 0)
    assert w.device_ns == pytest.approx(bert.summary.gpu_busy_us * 1000, abs=1)
    assert sum(n for _, n, _ in w.top) < w.count and w.names == len({r.name for r in bert.kernels})
    assert [ns for _, _, ns in w.top] == sorted((ns for _, _, ns in w.top), reverse=True)
    text = _text(launched_text(w))
    assert text.startswith("61 launched (60 kernels, 1 copy), 309us on the GPU; the most time:")
    assert "(+" not in text and "20 launched" not in text  # the old count of a list cut at 20


def test_a_step_with_more_kernels_than_any_list_holds_counts_them_all(tmp_path):
    events = [X("aten::foreach_add", 0, 1000, External_id=1)]
    for k in range(45):
        events.append(X("cudaLaunchKernel", 1 + 20 * k, 5, cat="cuda_runtime", External_id=1, correlation=100 + k))
        events.append(
            X(f"kernel_{k % 9}", 10 + 20 * k, 4, cat="kernel", pid=0, tid=7, External_id=1, correlation=100 + k)
        )
    a = Results(load_trace(write_trace(tmp_path / "many.json", events), use_cache=False))
    w = launched_by(a, 0)
    assert (w.count, w.names, len(w.top)) == (45, 9, 5) and w.device_ns == 45 * 4000
    assert len(launched_events(a, 0)) == 45
    assert "and 4 more names" in _text(launched_text(w))


def test_names_are_cut_at_a_word_with_an_ellipsis_and_shown_whole_on_f(bert):
    d = describe(bert, _step(bert), frames=bert)
    short, full = _text(details_renderable(d), 160), _text(details_renderable(d, full=True), 400)
    assert "indexSelectLargeInde " not in short and not re.search(r"indexSelectLargeInde\b", short)
    assert "Enter, then f: full names" in short and "Enter, then f: full names" not in full
    longest = max((name for name, _, _ in d.launched.top), key=len)
    assert longest not in short and longest in " ".join(full.split())
    assert any(b.key == "f" and b.action == "toggle_full_names" for b in DetailsPanel.BINDINGS)


def test_explain_counts_every_event_a_finding_is_about(bert):
    found = {f.rule: f for f in bert.findings}
    gaps = found["overhead-gaps"]
    assert gaps.count == gaps.figures["gaps"] == 60 and len(gaps.events) == gaps.figures["marked"] == 50
    fuse = found["roofline-memory"]
    assert fuse.count == fuse.figures["calls"] == 25  # five op shapes, not the first four's 24 calls
    assert "25 calls" in note(fuse)


async def test_f_in_the_details_panel_shows_the_full_names():
    from conftest import wait_for_main

    from tui.app import TraceApp

    app = TraceApp([str(BERT)], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        a = screen.timeline.analysis
        screen.timeline.select(_step(a))
        await pilot.press("enter", "enter")  # open the panel, then move into it
        await pilot.pause()
        panel = screen.query_one(DetailsPanel)
        body = screen.query_one("#details-body")
        assert panel.has_focus and "Enter, then f: full names" in _text(body.content, 160)
        await pilot.press("f")
        await pilot.pause()
        assert panel.full_names and "Enter, then f: full names" not in _text(body.content, 160)
        assert "cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>" in "".join(
            _text(body.content, 400).split()
        )


@pytest.mark.parametrize(
    "path", sorted(SAMPLES.glob("*.json.gz")) + shared_traces(), ids=lambda p: p.parent.name + "/" + p.name
)
def test_every_finding_counts_the_events_its_note_counts(path):
    for f in Results(load_trace(path)).findings:
        if f.rule.startswith("roofline-") and isinstance(f.figures.get("calls"), int):
            assert f.count == f.figures["calls"], f.title
        if f.rule == "overhead-gaps":
            assert f.count == f.figures["gaps"] >= len(f.events)
        assert len(f.events) <= f.count


async def test_the_details_panels_more_lines_hint_follows_the_focus_and_its_room():
    """A fresh-eyes run: the hint said "Enter, then ↓ to scroll" once Enter had moved into the panel, and its count
    of lines below stayed that of the smaller panel (7, then 15 once in it)."""
    from conftest import wait_for_main

    from tui.app import TraceApp

    app = TraceApp([str(BERT)], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        import numpy as np

        from tui.model.cats import Cat

        a = screen.timeline.analysis
        screen.timeline.select(int(np.flatnonzero(a.trace.x.cat == int(Cat.KERNEL))[0]))  # a long one: more below
        panel = screen.query_one(DetailsPanel)
        for _ in range(2):  # open the panel, then move into it (at this size the first Enter does both)
            if not panel.has_focus_within:
                await pilot.press("enter")
                await pilot.pause()
        await pilot.pause()
        hidden = int(panel.max_scroll_y - panel.scroll_y)
        title = str(panel.border_title or "")
        assert panel.has_focus_within and hidden > 0 and "Enter, then" not in title
        assert f"↓ {hidden} more lines: ↓ scrolls" in title
