"""GPU annotations are read back to the spans torch timed (load/margins.py).

Kineto's JSON writer widens each gpu_user_annotation (libkineto/src/output_json.cpp): since kineto#944 (2024-06)
1 ns earlier and 1 ns later, before that 1000 ns earlier and 500 ns later. The constructed stream below checks our
reading of that rule; test_ops_h200.py checks it against the tables torch printed for real captures.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import X, write_trace

from tui.model import load_trace
from tui.model.cats import Cat

KERNEL = {"cat": "kernel", "pid": 0, "tid": 7}
ANNOTATION = {"cat": "gpu_user_annotation", "pid": 0, "tid": 7}


def _annotation_span(tmp_path, kernels: list[tuple[float, float]], span: tuple[float, float], **where) -> tuple:
    events = [X(f"k{i}", ts, dur, **KERNEL) for i, (ts, dur) in enumerate(kernels)]
    events.append(X("block", *span, **{**ANNOTATION, **where}))
    trace = load_trace(write_trace(tmp_path / "t.json", events), use_cache=False)
    (i,) = np.flatnonzero(trace.x.cat == int(Cat.GPU_ANNOTATION))
    return int(trace.x.ts[i]) - int(trace.x.ts.min()), int(trace.x.dur[i])


@pytest.mark.parametrize(
    ("span", "why"),
    [
        ((9.999, 5.002), "since 2024: 1 ns before the first kernel, 1 ns past the last"),
        ((9.0, 6.5), "until 2024: 1000 ns before, 500 ns past"),
        ((10.0, 5.0), "written as measured"),
    ],
)
def test_an_annotation_is_its_kernels_span_whatever_the_margin(tmp_path, span, why):
    kernels = [(10.0, 2.0), (12.5, 2.5)]  # 10.0-12.0 and 12.5-15.0: the span torch timed is 10.0-15.0
    start, dur = _annotation_span(tmp_path, [(0.0, 1.0), *kernels, (20.0, 1.0)], span)
    assert (start, dur) == (10_000, 5_000), why


@pytest.mark.parametrize(
    ("kernels", "span", "where", "why"),
    [
        ([(9.5, 1.0)], (9.999, 5.002), {}, "a kernel crosses its start"),
        ([(10.0, 6.0)], (9.999, 5.002), {}, "a kernel crosses its end"),
        ([], (9.999, 5.002), {}, "no kernel on the stream"),
        ([(20.0, 1.0)], (9.999, 5.002), {}, "no kernel inside it"),
        ([(10.0, 5.0)], (9.999, 5.002), {"tid": 8}, "its kernels are on another stream"),
    ],
)
def test_an_annotation_that_holds_no_whole_kernel_is_left_as_written(tmp_path, kernels, span, where, why):
    start, dur = _annotation_span(tmp_path, [(0.0, 1.0), *kernels], span, **where)
    assert (start, dur) == (9_999, 5_002), why
