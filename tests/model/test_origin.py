"""One time origin per trace (Trace.origin), never moved by hiding Python frames: details and memory count from it."""

from __future__ import annotations

import numpy as np
from conftest import SAMPLES

from tui.model.analyses.details import brief, describe
from tui.model.analyses.results import Results
from tui.model.cats import Cat
from tui.model.load import load_trace

BERT = SAMPLES / "h100-bert-small.json.gz"  # with_stack: the first Python frame starts before any op


def test_the_origin_is_the_earliest_event_frames_included_and_p_does_not_move_it():
    a = Results(load_trace(str(BERT), use_cache=False))
    x = a.trace.x
    assert a.trace.origin == int(x.ts.min())
    frameless = a.frameless
    # the case that went wrong: without frames the timeline starts later than the trace does
    assert frameless.lane_arrays.t_min > a.lane_arrays.t_min >= a.trace.origin
    step = next(i for i in range(a.trace.n) if a.trace.name_of(i).startswith("ProfilerStep#"))
    kernel = int(np.flatnonzero(x.cat == int(Cat.KERNEL))[0])
    for i in (step, kernel):
        shown, hidden = describe(a, i, frames=a), describe(frameless, i, frames=a)
        assert shown.start_ns == hidden.start_ns == int(x.ts[i]) - a.trace.origin
        assert brief(frameless, i).start_ns == shown.start_ns


def test_memory_peaks_count_from_the_same_origin():
    a = Results(load_trace(str(BERT), use_cache=False))
    for d, c in zip(a.memory, a.memory_curves, strict=True):
        k = int(np.argmax(c.allocated))
        assert d.peak_ts_us == (int(c.ts[k]) - a.trace.origin) / 1000
