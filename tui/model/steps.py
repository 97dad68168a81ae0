"""Profiler steps: one rule to find them, what each one put on the device, and one rule for a slow (cold) step.

A step is a ProfilerStep#N event on a CPU thread, whatever its category (user_annotation since
2022, Operator or cpu_op in 2021 builds). The copy Kineto writes on the GPU (gpu_user_annotation) is
not a second step. Its device work is what was launched inside it: the kernels, copies and sets whose
launching call starts within the step's CPU span, on any thread of its rank (the autograd thread's
backward too); device_us is the union of their busy time, and the step ends when its CPU span and that
work have both ended (end_us). elapsed_us is the step as the user waits for it: from its start until that
end, or, when the previous step was not done yet at its start, from when it was. While its CPU span runs the
time is the step's, even where the device is still finishing work queued before the step (launched before the
profiler started, or by a warm-up outside any step): a synchronize inside the step waits for it, and the
critical path of the step counts it (queued_us says how long it ran into the step). Only the stretch after its
CPU span ended in which the step waited for that queue, with nothing of its own running, is left out, so a short
first step behind a warm-up's queue is not called cold for it. A CPU that runs ahead of the GPU does not make
every later step count the whole queue in front of it, and the steps' elapsed times add up to the wall time
they took, less those stretches. A step is slow when it takes at least
SLOW_FACTOR times the typical step (the median of the others, elapsed) and at least SLOW_MIN_EXCESS_US
more: the first step, slow, is a cold start.

The typical step is the warm step whose elapsed time is their median; of an even count, the lower of the middle
two: a step that ran, not their mean (of steps of 35.7 ms, 8.6 ms, 706 us and 429 us the mean of the middle two,
4.65 ms, is a time no step took). It is the step whose critical path the verdict reads and the one a first step
is measured against. Its spread is how much the warm steps differ from one another: half the range of
their elapsed times (of 10 or more, from the 10th to the 90th percentile, so that one hitch does not widen it)
as a share of the typical step, so "±12%" reads "the steps ran within 12% either side of it". A change between
two captures smaller than the larger of their spreads is the runs' own noise (changes.py's within_spread).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .cats import BUSY_CATS, Cat, of_cats
from .sets import distinct
from .trace import TraceColumns

STEP_NAME = re.compile(r"^ProfilerStep#(\d+)$")
SLOW_FACTOR = 1.5
SLOW_MIN_EXCESS_US = 100.0
UNCERTAIN_UNDER = 3  # a typical step of fewer steps is said to be uncertain
TRIM_FROM = 10  # from this many steps, the spread leaves out the fastest and slowest tenth


@dataclass
class Step:
    """One step; times in microseconds, start_us and end_us from the window's start."""

    name: str
    dur_us: float  # its CPU span
    start_us: float
    device_us: float = 0.0  # the union of the device busy time launched inside it
    end_us: float = 0.0  # when its CPU span and its device work had both ended
    launches: int = 0  # the calls inside it that put work on the device
    event: int = -1
    elapsed_us: float = 0.0  # as the user waits for it: to end_us, from its start or the end of what ran before it
    queued_us: float = 0.0  # how long into it the device still ran work queued before it (not its own)
    rank: int = 0


def step_events(trace: TraceColumns, rank: int | None = None) -> np.ndarray:
    """The ProfilerStep#N events on CPU threads (of one rank, if given), in time order."""
    ids = [k for k, n in enumerate(trace.names) if STEP_NAME.match(n)]
    x = trace.x
    on_cpu = np.array([t.kind == "cpu" and (rank is None or t.rank == rank) for t in trace.tracks] or [False])
    marked = of_cats(x.cat, (Cat.USER_ANNOTATION, Cat.CPU_OP))  # not a copy of its name (an export's lane)
    sel = np.flatnonzero(np.isin(x.name, ids) & marked & on_cpu[x.track])
    return sel[np.argsort(x.ts[sel], kind="stable")]


def steps(trace: TraceColumns, t0: int, rank: int | None = None, callers: np.ndarray | None = None) -> list[Step]:
    """The steps in step order, times relative to t0; callers: per event, the CPU call that put it on the device
    (-1: none, or not device work), for each step's device work (none without it)."""
    x = trace.x
    number = {n: int(m.group(1)) for n in trace.names if (m := STEP_NAME.match(n))}
    events = step_events(trace, rank)
    work = _device_work(trace, events, callers) if callers is not None else [_Work()] * len(events)
    out, prev_end = [], dict[int, int]()  # per rank, when its last step so far ended (steps come in time order)
    for i, w in zip(events.tolist(), work, strict=True):
        r, start, dur = trace.tracks[int(x.track[i])].rank, int(x.ts[i]), int(x.dur[i])
        end, since = max(start + dur, w.last), max(start, prev_end.get(r, start))
        idle = max(w.ahead - max(start + dur, since), 0)  # its CPU span over, it waited on the queue ahead alone
        waited, queued = max(end - since - idle, 0), max(min(w.ahead, end) - since, 0)
        prev_end[r] = max(end, prev_end.get(r, end))
        us = [float(v) / 1000.0 for v in (dur, start - t0, w.busy, end - t0, waited, queued)]
        out.append(Step(trace.name_of(i), us[0], us[1], us[2], us[3], w.launches, i, us[4], us[5], r))
    return sorted(out, key=lambda s: (number[s.name], s.start_us))


@dataclass
class _Work:
    """A step's device work (ns): the union of its busy time, when it ended, how many calls launched it, and when
    the device finished the work queued ahead of it (0: none)."""

    busy: int = 0
    last: int = 0
    launches: int = 0
    ahead: int = 0


def _device_work(trace: TraceColumns, events: np.ndarray, callers: np.ndarray) -> list[_Work]:
    """Per step event, what it launched: the device work whose launching call starts inside it, on its rank (all
    the steps at once: a trace of a thousand steps took 0.1 s one step at a time)."""
    x = trace.x
    track_rank = np.array([t.rank for t in trace.tracks] or [0])
    work = np.flatnonzero(callers >= 0)
    call = callers[work]
    call_rank = track_rank[x.track[call]]
    order = np.lexsort((x.ts[call], call_rank))
    work, call, call_rank = work[order], call[order], call_rank[order]
    step_rank = track_rank[x.track[events]]
    a = _per_rank(call_rank, x.ts[call], step_rank, x.ts[events], "left")
    b = _per_rank(call_rank, x.ts[call], step_rank, x.ts[events] + x.dur[events], "right")
    size = np.maximum(b - a, 0)
    head = np.cumsum(size) - size  # where each step's run starts among the runs laid one after the other
    seg = np.repeat(np.arange(len(events)), size)
    pos = np.arange(int(size.sum())) - np.repeat(head, size) + np.repeat(a, size)
    mine = work[pos]
    starts, ends = x.ts[mine], x.ts[mine] + x.dur[mine]
    some = np.flatnonzero(size)
    out = [_Work()] * len(events)
    if not len(some):
        return out
    heads = head[some]
    first, last = np.minimum.reduceat(starts, heads), np.maximum.reduceat(ends, heads)
    busy = _union_lengths(seg, starts, ends, len(events))
    pairs = distinct(seg.astype(np.int64) * trace.n + call[pos])  # distinct (step, launching call)
    launches = np.bincount(pairs // trace.n, minlength=len(events))
    ahead = np.minimum(_Queue(trace, track_rank).ahead_of(step_rank[some], first), first)
    for i, end, queued in zip(some.tolist(), last.tolist(), ahead.tolist(), strict=True):
        out[i] = _Work(int(busy[i]), end, int(launches[i]), queued)
    return out


def _per_rank(rank: np.ndarray, ts: np.ndarray, want_rank: np.ndarray, want_ts: np.ndarray, side: str) -> np.ndarray:
    """Positions in (rank, ts)-sorted columns of each wanted (rank, time): searchsorted within its rank's run."""
    out = np.zeros(len(want_rank), np.int64)
    for r in distinct(want_rank).tolist():
        lo, hi = np.searchsorted(rank, [r, r + 1])
        mine = want_rank == r
        out[mine] = lo + np.searchsorted(ts[lo:hi], want_ts[mine], side=side)  # type: ignore[call-overload]
    return out


class _Queue:
    """The device work of each rank by start, with the latest end so far: what was queued ahead of a moment."""

    def __init__(self, trace: TraceColumns, track_rank: np.ndarray) -> None:
        x = trace.x
        dev = np.flatnonzero(of_cats(x.cat, BUSY_CATS))
        self.rank = track_rank[x.track[dev]]
        order = np.lexsort((x.ts[dev], self.rank))
        dev, self.rank = dev[order], self.rank[order]
        self.ts, self.ran_until = x.ts[dev], x.ts[dev] + x.dur[dev]
        for r in distinct(self.rank).tolist():
            lo, hi = np.searchsorted(self.rank, [r, r + 1])
            self.ran_until[lo:hi] = np.maximum.accumulate(self.ran_until[lo:hi])

    def ahead_of(self, ranks: np.ndarray, t: np.ndarray) -> np.ndarray:
        """When each rank's device finished the work that started before t (0: none started before)."""
        if not len(self.ts):
            return np.zeros(len(t), np.int64)
        k = _per_rank(self.rank, self.ts, ranks, t, "left") - 1
        return np.where(k >= np.searchsorted(self.rank, ranks), self.ran_until[np.maximum(k, 0)], 0)


def _union_lengths(seg: np.ndarray, starts: np.ndarray, ends: np.ndarray, count: int) -> np.ndarray:
    """Per segment (seg: each interval's, non-decreasing), the length its intervals cover, overlaps counted once."""
    out = np.zeros(count, np.int64)
    if not len(seg):
        return out
    low = int(starts.min())
    span = int(ends.max()) - low + 1
    if span * count >= 2**62:  # the segments cannot be laid end to end in 64 bits: one at a time
        for g in distinct(seg).tolist():
            out[g] = _union_length(starts[seg == g], ends[seg == g])
        return out
    order = np.lexsort((starts, seg))
    g, s = seg[order], starts[order] - low
    offset = g.astype(np.int64) * span  # each segment above every earlier one: the running end restarts with it
    e = np.maximum.accumulate(ends[order] - low + offset) - offset
    new = np.ones(len(s), bool)
    new[1:] = (g[1:] != g[:-1]) | (s[1:] > e[:-1])
    runs = np.flatnonzero(new)
    np.add.at(out, g[runs], np.maximum.reduceat(e, runs) - s[runs])
    return out


def _union_length(starts: np.ndarray, ends: np.ndarray) -> int:
    """Total length covered by intervals, overlaps counted once."""
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], np.maximum.accumulate(ends[order])
    new = np.ones(len(s), bool)
    new[1:] = s[1:] > e[:-1]
    return int((np.maximum.reduceat(e, np.flatnonzero(new)) - s[new]).sum())


def typical(durations: Sequence[float]) -> float:
    """The typical step of these durations: their median, of an even count the lower of the middle two (a time a
    step took), as TypicalStep.us is (0 without steps). The cold-start rule measures a first step against it, and
    says this one number beside its ratio."""
    return float(sorted(durations)[(len(durations) - 1) // 2]) if durations else 0.0


@dataclass(frozen=True)
class TypicalStep:
    """The typical step: step, the warm step of median elapsed time (a first step the cold-start rule calls slow,
    and the steps that compiled, left out; all of them when that leaves none; of an even count the lower of the
    middle two, a step that ran), and us, its elapsed time; the verdict reads its critical path. Every view that
    says "typical step" reads this one (summary, overview, steps, diff, watch, ranks, the verdict, explain); 0 and
    None without steps."""

    us: float
    of: int  # how many steps it is the median of
    left_out: tuple[str, ...] = ()  # the names of the steps left out, as cold, as compiling or as empty
    empty: tuple[str, ...] = ()  # of those, the steps that launched nothing where others did (real_steps)
    step: Step | None = None
    spread: float | None = None  # the warm steps' elapsed times' spread, a share of us (spread()); None under 2
    device_spread: float | None = None  # the same of their GPU busy time per step; None without device work
    low_us: float = 0.0  # the range spread is half of: the fastest and slowest elapsed times (of 10 or more, the
    high_us: float = 0.0  # 10th and 90th percentiles)

    @property
    def uncertain(self) -> bool:
        """Fewer than 3 steps: a third could have moved the median anywhere between them."""
        return 0 < self.of < UNCERTAIN_UNDER


def real_steps(steps: Sequence[Step]) -> list[Step]:
    """The steps less those that launched nothing and ran no device work where another step did: a step the
    profiler opened and closed around no work (a last step cut short, an idle wait) is no step of the model, and
    neither its time nor a first step's cold start is measured against it. All of them when none launched."""
    if not any(st.launches for st in steps):
        return list(steps)
    return [st for st in steps if st.launches or st.device_us]


def first_rank(steps: Sequence[Step]) -> list[Step]:
    """The steps of the lowest rank that has any: a job's typical step is its first rank's, the rank whose critical
    path the verdict reads (each rank's own is in its ranks row); a step of one rank's is never measured against
    another's."""
    low = min((st.rank for st in steps), default=0)
    return [st for st in steps if st.rank == low]


def typical_step(steps: Sequence[Step], skip: set[int] | frozenset[int] = frozenset()) -> TypicalStep:
    """The typical step of these steps (see TypicalStep), of the first rank's (first_rank) in a job; skip: the
    events of the steps that compiled."""
    steps = first_rank(steps)
    if not steps:
        return TypicalStep(0.0, 0)
    real = real_steps(steps)
    cold = cold_first([st.elapsed_us for st in real]) is not None
    warm = real[1:] if cold else real
    kept = [st for st in warm if st.event not in skip] or [st for st in real if st.event not in skip] or real
    held = {id(st) for st in kept}  # by identity: comparing dataclasses made this quadratic (0.55 s at 1,618 steps)
    left = tuple(st.name for st in steps if id(st) not in held)
    real_ids = {id(st) for st in real}
    empty = tuple(st.name for st in steps if id(st) not in real_ids)
    ranked = sorted(kept, key=lambda st: st.elapsed_us)
    step = ranked[(len(ranked) - 1) // 2]  # the lower middle step: a step that ran, whose critical path is read
    elapsed = [st.elapsed_us for st in kept]
    us = step.elapsed_us  # typical(elapsed), the step's own time
    busy = [st.device_us for st in kept]
    device = spread(busy, typical(busy)) if any(busy) else None
    lo, hi = spread_range(elapsed)
    return TypicalStep(us, len(kept), left, empty, step, spread(elapsed, us), device, lo, hi)


def spread_range(values: Sequence[float]) -> tuple[float, float]:
    """The range a spread is half of: the lowest and highest values (of TRIM_FROM or more, the 10th and 90th
    percentiles, so that one hitch does not widen it); (0, 0) without values."""
    if not len(values):
        return 0.0, 0.0
    if len(values) < TRIM_FROM:
        return float(min(values)), float(max(values))
    ordered = sorted(values)
    return percentile(ordered, 10), percentile(ordered, 90)


def percentile(ordered: Sequence[float], q: float) -> float:
    """The q-th percentile of sorted values, as numpy.percentile's default (linear) computes it, to the same float:
    without numpy's call, which imports numpy.ma (through np.unique), 10-15 ms of a cached summary."""
    at = (len(ordered) - 1) * (q / 100)
    below = math.floor(at)
    if below >= len(ordered) - 1:
        return float(ordered[-1])
    a, b, t = ordered[below], ordered[below + 1], at - below
    return float(b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t)  # (numpy's _lerp, either side of 0.5)


def spread(values: Sequence[float], typical_value: float) -> float | None:
    """How far either side of typical_value the values run, as a share of it: half their range (spread_range).
    None for fewer than two values or a typical value of 0."""
    if len(values) < 2 or typical_value <= 0:
        return None
    lo, hi = spread_range(values)
    return (hi - lo) / 2 / typical_value


def is_slow(dur_us: float, typical_us: float, factor: float = SLOW_FACTOR) -> bool:
    """The one criterion for a slow step, shared by the overview's bars, explain and the readings (factor: a lower
    one asks for a step merely slower, as the readings' warm-up left does)."""
    return typical_us > 0 and dur_us >= factor * typical_us and dur_us - typical_us >= SLOW_MIN_EXCESS_US


def cold_first(durations: list[float]) -> float | None:
    """How many times a typical step the first one took, when it is slow (a cold start); else None."""
    if len(durations) < 2:
        return None
    usual = typical(durations[1:])
    return durations[0] / usual if is_slow(durations[0], usual) else None


def step_starts(trace: TraceColumns, rank: int | None = None) -> dict[int, int]:
    """ProfilerStep number -> start (ns) on the CPU (of one rank, if given); the first of a number wins."""
    out: dict[int, int] = {}
    for i in step_events(trace, rank).tolist():
        m = STEP_NAME.match(trace.name_of(i))
        if m:
            out.setdefault(int(m.group(1)), int(trace.x.ts[i]))
    return out


def align_on_steps(starts: dict[int, dict[int, int]]) -> tuple[str, dict[int, int]]:
    """Shifts (ns) per rank that line the ranks up on the first ProfilerStep#N they all have (the lowest rank
    stays put), and the method: "ProfilerStep#N", or "raw clock" (no shifts) without a common step."""
    common = set.intersection(*(set(s) for s in starts.values())) if len(starts) > 1 else set()
    if not common:
        return "raw clock", {r: 0 for r in starts}
    n = min(common)
    ref = starts[min(starts)][n]
    return f"ProfilerStep#{n}", {r: ref - s[n] for r, s in starts.items()}
