"""GPU annotation spans in the ops table: torch's numbers headless (with a footnote), each kernel once in the viewer."""

from __future__ import annotations

import re

import pytest
from conftest import SAMPLES

from tui.model.analyses.results import Results
from tui.model.load import load_trace
from tui.tables import ops as O
from tui.tables.base import fit

BERT = SAMPLES / "h100-bert-small.json.gz"  # ProfilerStep#N has a GPU-side annotation span
CPU = SAMPLES / "cpu" / "linear_fwd.json.gz"


@pytest.fixture(scope="module")
def bert() -> Results:
    return Results(load_trace(str(BERT), use_cache=False))


def test_a_step_is_a_span_not_work_and_torchs_numbers_stay(bert):
    t = bert.ops
    host, device = (next(r for r in t.rows if r.name == "ProfilerStep*" and r.is_device == d) for d in (False, True))
    assert host.self_device_us > t.self_device_total_us  # torch's count: the span is the row's own CUDA time
    assert host.span_device_us == host.self_device_us and host.work_self_device_us == 0 and host.is_span
    assert device.is_span and device.work_device_total_us == 0
    gpu = sum(r.total_us for r in bert.kernels)
    assert host.work_device_total_us == pytest.approx(gpu)  # every kernel of the step, each once
    assert max(r.work_device_total_us for r in t.rows) == pytest.approx(gpu)  # _call_impl in _call_impl: once
    assert all(r.work_device_total_us <= r.device_total_us + 1e-6 for r in t.rows)


def test_the_viewer_columns_show_no_share_over_100_percent(bert):
    t = bert.ops
    fitted = fit(O.columns(t, False, viewer=True), t.rows, t, 0)
    k = fitted.headers.index("Self CUDA %")
    shares = [row[k] for row in fitted.cells]
    assert "span" in shares
    assert all(float(s.rstrip("%")) <= 100 for s in shares if s != "span")
    torch_like = fit(O.columns(t, False), t.rows, t, 0)
    assert any(float(row[k].rstrip("%")) > 100 for row in torch_like.cells)  # headless: torch's 1262.88%


def test_the_headless_table_says_why_only_when_spans_are_there(bert):
    assert any(
        re.match(r"\(ProfilerStep\*: CUDA time includes GPU-side annotation spans", f) for f in O.footers(bert.ops)
    )
    cpu = Results(load_trace(str(CPU), use_cache=False))
    assert not cpu.ops.spans and not any("span" in f for f in O.footers(cpu.ops))


def test_the_viewer_note_is_short_and_names_what_it_shows(bert):
    note = O.footers(bert.ops, viewer=True)[-1]
    assert note == "ProfilerStep*: GPU-side annotation spans, not work (Self CUDA says span)"
    assert "100%" not in note  # the viewer shows no share over 100%, so it does not explain one
