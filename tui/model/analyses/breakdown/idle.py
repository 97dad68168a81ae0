"""The idle-time breakdown: each gap between consecutive activities on a stream, and what it waited for.

A gap runs from the end of the stream's work so far to the next activity's start, inside the window. Its cause,
tested in this order:
- host: the call that launched the next activity started after the stream went idle, so the stream waited for
  the CPU to launch it (HTA's host wait);
- kernel: a gap under KERNEL_GAP_NS (30 us, HTA's consecutive_kernel_delay) while the activity was already
  queued: what back-to-back kernels take to start one after another (HTA's kernel wait);
- stream: the activity was queued, and an activity on another stream of the device ended in the gap at most
  STREAM_WAKE_NS (10 us) before it started: it waited on that stream (an event wait);
- other: queued and waiting on something the trace does not show (HTA counts this and stream as its "other").
Where HTA's figures differ: its timestamps are whole microseconds (a nanosecond trace's gaps are truncated), it
takes the previous activity's end where this takes the latest end so far, and it adds negative gaps (overlaps
on one stream) to the idle time. Each stream also keeps its intervals per cause, the zero gaps of back-to-back
activities included, for their statistics (intervals.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...sets import distinct
from .activity import Activities, Scope
from .intervals import IntervalStats, interval_stats

CAUSES = ("host", "stream", "kernel", "other")
HOST, STREAM, KERNEL, OTHER = range(len(CAUSES))
KERNEL_GAP_NS = 30_000
STREAM_WAKE_NS = 10_000


@dataclass
class StreamIdle:
    """One stream's idle time in a window: ns and gaps per cause (CAUSES), and the streams it waited on (lane -> ns)."""

    rank: int
    device: str
    lane: str
    activities: int
    start_ns: int  # its first activity's start in the window (the trace's clock)
    end_ns: int  # its last activity's end
    by_cause: list[int]
    gaps: list[int]
    waited_on: dict[str, int] = field(default_factory=dict)
    # per cause (CAUSES), each interval from the latest end so far to the next activity's start, zeros included
    # (back-to-back activities): what the idle-interval statistics describe (intervals.py)
    intervals: list[list[int]] = field(default_factory=list, repr=False, compare=False)

    @property
    def span_ns(self) -> int:
        return self.end_ns - self.start_ns

    @property
    def idle_ns(self) -> int:
        return sum(self.by_cause)

    def cause(self, name: str) -> int:
        return self.by_cause[CAUSES.index(name)]

    def stats(self, name: str) -> IntervalStats | None:
        """The statistics of the cause's idle intervals (None: none)."""
        return interval_stats(np.asarray(self.intervals[CAUSES.index(name)])) if self.intervals else None


def stream_idle(acts: Activities, scopes: list[Scope], lanes: list[str]) -> list[StreamIdle]:
    """Per stream with work in its device's window: its idle time by cause."""
    out = []
    for sc in scopes:
        on = (acts.device == sc.device) & (acts.end > sc.start_ns) & (acts.ts < sc.end_ns)
        for track in distinct(acts.track[on]).tolist():
            out.append(_one(acts, sc, np.flatnonzero(on & (acts.track == track)), on, lanes))
    return out


def _one(acts: Activities, sc: Scope, mine: np.ndarray, device: np.ndarray, lanes: list[str]) -> StreamIdle:
    ts = np.clip(acts.ts[mine], sc.start_ns, sc.end_ns)
    end = np.maximum.accumulate(np.clip(acts.end[mine], sc.start_ns, sc.end_ns))
    gap = ts[1:] - end[:-1]
    k = np.flatnonzero(gap >= 0)  # gap[k] is before mine[k + 1]; a zero gap is an interval, not idle time
    before, at = end[k], ts[k + 1]
    cause = np.full(len(k), OTHER)
    host = acts.launch[mine[k + 1]] > before
    cause[host] = HOST
    kernel = ~host & (gap[k] < KERNEL_GAP_NS)
    cause[kernel] = KERNEL
    waited = _woken(acts, mine, device, before, at)
    woken = (cause == OTHER) & (waited >= 0)
    cause[woken] = STREAM
    intervals = [gap[k][cause == c].astype(np.int64).tolist() for c in range(len(CAUSES))]
    idle = gap[k] > 0
    cause, k, woken = cause[idle], k[idle], woken[idle]
    waited = waited[idle]
    rank, name = acts.devices[sc.device]
    by_cause = np.bincount(cause, weights=gap[k], minlength=len(CAUSES)).round().astype(np.int64)
    on: dict[str, int] = {}
    for t, ns in zip(acts.track[waited[woken]].tolist(), gap[k][woken].tolist(), strict=True):
        on[lanes[t]] = on.get(lanes[t], 0) + int(ns)
    return StreamIdle(
        rank,
        name,
        lanes[int(acts.track[mine[0]])],
        len(mine),
        int(ts[0]),
        int(end[-1]),
        by_cause.tolist(),
        np.bincount(cause, minlength=len(CAUSES)).tolist(),
        dict(sorted(on.items(), key=lambda kv: -kv[1])),
        intervals,
    )


def _woken(acts: Activities, mine: np.ndarray, device: np.ndarray, before: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Per gap (before, at]: the activity on another stream of the device that ended last in it, at most
    STREAM_WAKE_NS before `at` (an index into acts; -1: none)."""
    others = np.flatnonzero(device & (acts.track != acts.track[mine[0]]))
    if not len(others) or not len(at):
        return np.full(len(at), -1)
    others = others[np.argsort(acts.end[others], kind="stable")]
    ends = acts.end[others]
    p = np.searchsorted(ends, at, side="right") - 1
    found = p >= 0
    e = ends[np.maximum(p, 0)]
    found &= (e > before) & (at - e <= STREAM_WAKE_NS)
    return np.where(found, others[np.maximum(p, 0)], -1)
