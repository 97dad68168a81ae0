"""The marked range: self time inside it, CPU and GPU apart, adding up to the busy time the range holds."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SAMPLES

from tui.model.analyses.rangeagg import aggregate_range, range_totals
from tui.model.analyses.results import Results
from tui.model.cats import GPU_CATS, Cat
from tui.model.load import load_trace

BERT = SAMPLES / "h100-bert-small.json.gz"


@pytest.fixture(scope="module")
def bert() -> Results:
    return Results(load_trace(str(BERT), use_cache=False))


def busy(a, t0: int, t1: int, gpu: bool, frames: bool) -> int:
    """The union, per track, of the events' time inside [t0, t1], summed over the tracks (a reference)."""
    x = a.trace.x
    cats = x.cat
    on_gpu = np.isin(cats, [int(c) for c in GPU_CATS])
    mask = (on_gpu if gpu else ~on_gpu) & (x.ts < t1) & (a.end > t0) & (cats != int(Cat.GPU_ANNOTATION))
    if not frames:
        mask &= cats != int(Cat.PYTHON)
    mask[~np.isin(np.arange(a.trace.n), a.nesting.order)] = False
    total = 0
    for track in np.unique(x.track[mask]):
        idx = np.flatnonzero(mask & (x.track == track))
        spans = sorted(zip(np.maximum(x.ts[idx], t0).tolist(), np.minimum(a.end[idx], t1).tolist(), strict=True))
        end = t0
        for s, e in spans:
            total += max(e - max(s, end), 0)
            end = max(end, e)
    return total


def step_span(a) -> tuple[int, int]:
    step = next(i for i in a.nesting.order if a.trace.name_of(int(i)).startswith("ProfilerStep#"))
    return int(a.trace.x.ts[step]), int(a.end[step])


@pytest.mark.parametrize("frames", [True, False])
def test_rows_add_up_to_the_busy_time_of_the_range(bert, frames):
    a = bert if frames else bert.frameless
    t0, t1 = step_span(a)
    t0 += (t1 - t0) // 4  # a range that cuts events at both ends
    rows = aggregate_range(a, t0, t1)
    totals = range_totals(a, rows, t0, t1)
    assert totals.cpu_ns == busy(a, t0, t1, gpu=False, frames=frames)
    assert totals.gpu_ns == busy(a, t0, t1, gpu=True, frames=frames) > 0
    assert totals.cpu_ns <= totals.span_ns * totals.threads and totals.gpu_ns <= totals.span_ns * totals.streams
    assert all(r.self_ns == r.cpu_self_ns + r.gpu_self_ns and r.total_ns <= r.count * (t1 - t0) for r in rows)
    assert sum(r.self_ns for r in rows) <= sum(r.total_ns for r in rows)


def test_the_range_follows_p(bert):
    t0, t1 = step_span(bert)
    python = {bert.trace.name_of(int(i)) for i in np.flatnonzero(bert.trace.x.cat == int(Cat.PYTHON))}
    shown = {r.name for r in aggregate_range(bert, t0, t1)}
    hidden = aggregate_range(bert.frameless, t0, t1)
    assert shown & python and not {r.name for r in hidden} & python
    linear = next(r for r in hidden if r.name == "aten::linear")
    x = bert.trace.x
    assert linear.count == int(
        ((x.name == bert.trace.names.index("aten::linear")) & (x.ts < t1) & (bert.end > t0)).sum()
    )
    assert linear.gpu_self_ns == 0 and linear.cpu_self_ns > 0
    kernel = next(r for r in hidden if r.gpu_self_ns)
    assert kernel.cpu_self_ns == 0 and kernel.self_ns == kernel.total_ns  # a kernel holds no child
    assert not any(r.name.startswith("ProfilerStep") and r.gpu_self_ns for r in hidden)  # a GPU span is not work


def test_the_panel_says_what_its_rows_add_up_to(bert):
    from tui.text.fmt import fmt_dur
    from tui.widgets.range_panel import range_cells, range_title

    t0, t1 = step_span(bert.frameless)
    rows = aggregate_range(bert.frameless, t0, t1)
    totals = range_totals(bert.frameless, rows, t0, t1)
    title = range_title(rows, (t0, t1))
    assert title == (
        f"Marked range: {fmt_dur(t1 - t0)} · CPU self {fmt_dur(totals.cpu_ns)} · GPU self {fmt_dur(totals.gpu_ns)}"
        " (times inside it, summed over threads and streams)"
    )
    kernel = next(r for r in rows if r.gpu_self_ns)
    assert range_cells(kernel)[2] == "-" and range_cells(kernel)[3] == fmt_dur(kernel.gpu_self_ns)
