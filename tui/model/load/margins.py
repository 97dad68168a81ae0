"""GPU annotations as torch measured them: Kineto widens each one when it writes the trace, for Chrome's sake.

Kineto makes a gpu_user_annotation span from the start of the first GPU activity its CPU annotation launched on a
stream to the end of the last (GpuUserEventMap::insertOrExtendEvent, libkineto/src/GenericActivityProfiler.cpp),
and torch's key_averages() times the annotation's row by that span. The JSON writer then widens it, so that
Chrome draws it above its kernels (ChromeTraceLogger::handleActivity, libkineto/src/output_json.cpp): since
kineto#944 (2024-06) it starts 1 ns earlier and ends 1 ns later; before, 1000 ns earlier and 500 ns later; in
2022, 1 us earlier. Read as written, every GPU annotation row of `ops` was 2 ns per call longer than torch's
(the H200 series: linear_fwd 5.444 us against torch's 5.440 us, and a Self CUDA % of 100.07%).

Each span is narrowed back to the device activities (kernels, copies, sets) it holds on its own stream, which gives
torch's span whatever margin the writer used. A span holding none, or crossed by one, is left as written.
"""

from __future__ import annotations

import numpy as np

from ..cats import Cat
from ..columns import Events
from ..sets import distinct

_ACTIVITIES = (int(Cat.KERNEL), int(Cat.MEMCPY), int(Cat.MEMSET))  # what CUPTI reports, and Kineto spans


def narrow_gpu_annotations(x: Events) -> None:
    """Narrow every GPU annotation of x (in place) to the first start and the last end of the device activities it
    holds on its stream."""
    ann = np.flatnonzero(x.cat == int(Cat.GPU_ANNOTATION))
    if not len(ann):
        return
    work = np.flatnonzero(np.isin(x.cat, _ACTIVITIES))
    for track in distinct(x.track[ann]).tolist():
        mine = ann[x.track[ann] == track]
        on = work[x.track[work] == track]
        _narrow(x, mine, on[np.argsort(x.ts[on], kind="stable")])


def _narrow(x: Events, ann: np.ndarray, work: np.ndarray) -> None:
    """Narrow the annotations ann to the activities of one stream (work, by start) that each holds whole."""
    if not len(work):
        return
    starts, ends = x.ts[work], x.ts[work] + x.dur[work]
    a_start, a_end = x.ts[ann], x.ts[ann] + x.dur[ann]
    lo = np.searchsorted(starts, a_start, side="left")  # the first activity starting in the span
    hi = np.searchsorted(starts, a_end, side="right")  # past the last one starting in it
    some = np.flatnonzero(hi > lo)
    last_end = np.full(len(ann), -1, np.int64)
    if len(some):
        run_max = np.maximum.accumulate(ends)  # the latest end of the activities up to each one
        last_end[some] = run_max[hi[some] - 1]
        crossed_before = lo[some] > 0
        whole = last_end[some] <= a_end[some]  # nothing started in the span ends past it
        whole &= ~crossed_before | (run_max[np.maximum(lo[some] - 1, 0)] <= a_start[some])  # nor begins before it
        some = some[whole]
    if not len(some):
        return
    first = starts[lo[some]]
    x.ts[ann[some]] = first
    x.dur[ann[some]] = last_end[some] - first
