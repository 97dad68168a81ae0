"""Each stream's launch queue as figures (HTA's get_queue_length_summary), and every launch's CPU time, device time
and delays (HTA's get_cuda_kernel_launch_stats), on the launch queue of critical/queue.py.

A stream's queue holds the activities launched onto it and not yet started: +1 when the launch call starts, -1
when the activity starts (a graph launch is one launch, until its replay's first activity starts: its other
activities are no launches, graphs/replay.own_launches). HTA samples the length after each launch
and each start and describes those samples; a sample per event weighs a burst of launches as much as an hour of
waiting, so the mean and percentiles here are time-weighted (over the stream's span, first launch to last start),
with HTA's mean per sample beside them. A launch's delay here runs from the call's start to the activity's start
(what the kernels table and SQL's launches give); HTA's runs from the call's end, and is 0 when negative.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..sets import distinct
from ..trace import TraceColumns
from .critical.queue import FULL_LEVEL, FULL_MIN, StreamQueue, launch_latency, stream_queues
from .graphs.replay import own_launches

SLOW_CALL_NS = 50_000  # HTA's runtime_cutoff: a launch call longer than this is an outlier
LATE_START_NS = 100_000  # HTA's launch_delay_cutoff: an activity starting this long after its call ended is one


@dataclass
class QueueRow:
    """One stream's launch queue (lengths in launches, times in ns) and its launches' delays and outliers."""

    rank: int
    lane: str
    launches: int
    span_ns: int
    mean: float  # time-weighted over the span
    mean_per_sample: float  # HTA's: over one sample after each launch and each start
    p50: int  # the length the queue stayed at or under for half the span (time-weighted)
    p95: int
    max: int
    full_ns: int  # time at FULL_LEVEL of its maximum or more, where that maximum is FULL_MIN or deeper (else 0)
    delay_p50_ns: int  # launch call start to activity start
    delay_p95_ns: int
    slow_calls: int  # launch calls over SLOW_CALL_NS (HTA's runtime outliers)
    late_starts: int  # activities starting LATE_START_NS or more after their call ended (HTA's delay outliers)
    verdict: str  # critical/queue.py: "empty" (the CPU cannot keep it fed), "full" (the CPU waits on it), ""


@dataclass
class LaunchStats:
    """Per launch (one row each; a graph launch's row is its replay's first activity): its call, its activity and
    the times HTA reports."""

    launch: np.ndarray  # the runtime call's event id
    activity: np.ndarray  # the kernel's, copy's or set's event id
    cpu_ns: np.ndarray  # the call's duration
    gpu_ns: np.ndarray  # the activity's duration
    delay_ns: np.ndarray  # call start to activity start
    hta_delay_ns: np.ndarray  # call end to activity start, 0 when negative (HTA's launch_delay)


def launch_stats(trace: TraceColumns, launcher: np.ndarray) -> LaunchStats:
    """Every launch, in its activity's start order."""
    x = trace.x
    dev, latency = launch_latency(trace, launcher)
    order = np.argsort(x.ts[dev], kind="stable")
    dev, latency = dev[order], latency[order]
    call = own_launches(trace, launcher)[dev]
    after_call = x.ts[dev] - (x.ts[call] + x.dur[call])
    return LaunchStats(call, dev.astype(np.int64), x.dur[call], x.dur[dev], latency, np.maximum(after_call, 0))


def queue_rows(trace: TraceColumns, launcher: np.ndarray) -> list[QueueRow]:
    """One row per stream with launched work, the busiest first."""
    x = trace.x
    stats = launch_stats(trace, launcher)
    verdicts = {q.track: q for q in stream_queues(trace, launcher)}
    track = x.track[stats.activity]
    out = []
    for t in distinct(track).tolist():
        mine = track == t
        out.append(_row(trace, t, _samples(stats, mine, x.ts), stats, mine, verdicts.get(t)))
    out.sort(key=lambda r: -r.launches)
    return out


def _samples(stats: LaunchStats, mine: np.ndarray, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The queue's length after each launch and each start (one sample per event, in time order; at one instant a
    start before a launch), and when each was taken."""
    starts = ts[stats.activity[mine]]
    t = np.concatenate([starts - stats.delay_ns[mine], starts])
    step = np.repeat(np.array([1, -1], np.int64), int(mine.sum()))
    order = np.lexsort((step, t))
    return t[order], np.cumsum(step[order])


def _row(
    trace: TraceColumns,
    track: int,
    samples: tuple[np.ndarray, np.ndarray],
    stats: LaunchStats,
    mine: np.ndarray,
    queue: StreamQueue | None,
) -> QueueRow:
    t, length = samples
    held = np.diff(t)  # how long each sample's length held (the last one: until the span's end, none)
    span = int(t[-1] - t[0])
    top = int(length.max())
    p50, p95 = _weighted_percentiles(length[:-1], held, (0.5, 0.95)) if span > 0 else (top, top)
    full = int(held[length[:-1] >= FULL_LEVEL * top].sum()) if top >= FULL_MIN else 0
    delay = stats.delay_ns[mine]
    return QueueRow(
        rank=trace.tracks[track].rank,
        lane=trace.tracks[track].name,
        launches=int(mine.sum()),
        span_ns=span,
        mean=float((held * length[:-1]).sum() / span) if span > 0 else float(top),
        mean_per_sample=float(length.mean()),
        p50=p50,
        p95=p95,
        max=top,
        full_ns=full,
        delay_p50_ns=int(np.percentile(delay, 50)),
        delay_p95_ns=int(np.percentile(delay, 95)),
        slow_calls=int((stats.cpu_ns[mine] > SLOW_CALL_NS).sum()),
        late_starts=int((stats.hta_delay_ns[mine] > LATE_START_NS).sum()),
        verdict=queue.verdict if queue is not None else "",
    )


def _weighted_percentiles(values: np.ndarray, weights: np.ndarray, qs: tuple[float, ...]) -> tuple[int, ...]:
    """The smallest value v with at least q of the weight at or under v, for each q."""
    order = np.argsort(values, kind="stable")
    v, w = values[order], np.cumsum(weights[order])
    total = w[-1]
    if total <= 0:
        return tuple(int(values.max()) for _ in qs)
    return tuple(int(v[min(int(np.searchsorted(w, q * total, side="left")), len(v) - 1)]) for q in qs)
