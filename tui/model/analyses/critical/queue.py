"""The launch queue behind the path: per stream, the launches not yet started, launch-to-start latency, and
whether the queue is always empty (the CPU cannot keep the GPU fed) or always full (the CPU waits on it).

A device activity is queued from its launch call's start until it starts (by correlation). A graph launch is
one entry, queued until the first activity it replays starts; the rest of its replay are no launches of their
own (graphs/replay.own_launches, the one rule of every per-launch figure). HTA computes the same series as a
DataFrame (trace_counters.py, get_queue_length_time_series), from the eager launch calls only: its
get_runtime_launch_events_mask names no graph launch, so it leaves replays out altogether.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...sets import distinct
from ...trace import TraceColumns
from ..graphs.replay import own_launches

EMPTY_SHARE = 0.8  # a stream is starved when this share of its activities were launched onto an idle stream
FULL_LEVEL = 0.5  # a queue is full when it holds at least this share of its maximum
FULL_SHARE = 0.5  # for this share of the stream's span or more
FULL_MIN = 256  # and that maximum is at least this deep (CUDA's launch queue holds about 1,024 launches)
MIN_ACTIVITIES = 20  # fewer activities on a stream say nothing about its queue
OUTLIER_FACTOR = 10.0  # a launch-to-start latency this many times the stream's median, and at least
OUTLIER_MIN_NS = 1_000_000  # 1 ms, is an outlier
OUTLIERS_KEPT = 20


@dataclass
class QueueSeries:
    """One stream's queue: from ts[k] on, length[k] launches are waiting to start (ns, raw clock)."""

    track: int
    ts: np.ndarray
    length: np.ndarray


@dataclass
class StreamQueue:
    """One stream's launches: how they queued, and their launch-to-start latency (ns)."""

    track: int
    activities: int  # its launches (a graph launch counts once, on the stream of the first activity it replays)
    max_length: int
    mean_length: float  # time-weighted over the stream's span, first launch to last start
    idle_launches: float  # share of activities launched while nothing was queued or running on the stream
    full_share: float  # share of the span with the queue at FULL_LEVEL of its maximum or more
    median_latency_ns: int
    p95_latency_ns: int  # the launch-latency statistics everywhere: the median and the 95th percentile
    outlier_count: int = 0  # activities with an outlying latency
    outliers: list[int] = field(default_factory=list)  # the slowest of them (OUTLIERS_KEPT), the slowest first

    @property
    def verdict(self) -> str:
        """ "empty" (the CPU cannot keep the GPU fed), "full" (the CPU waits on a full queue) or ""."""
        if self.activities < MIN_ACTIVITIES:
            return ""
        if self.idle_launches >= EMPTY_SHARE:
            return "empty"
        return "full" if _full(self.max_length, self.full_share) else ""


def _launched(trace: TraceColumns, launcher: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The device activities that are launches of their own (a graph replay: its first), and each one's launch
    time (its call's start, never after its own start)."""
    x = trace.x
    call = own_launches(trace, launcher)
    dev = np.flatnonzero(call >= 0)
    return dev, np.minimum(x.ts[call[dev]], x.ts[dev])


def queue_series(trace: TraceColumns, launcher: np.ndarray) -> list[QueueSeries]:
    """Per stream with launched work: its queue length after each launch and each start."""
    x = trace.x
    dev, lts = _launched(trace, launcher)
    out = []
    for track in distinct(x.track[dev]).tolist():
        mine = x.track[dev] == track
        out.append(_series(int(track), lts[mine], x.ts[dev[mine]]))
    return out


def _series(track: int, launched: np.ndarray, started: np.ndarray) -> QueueSeries:
    """A queue's length after each launch and each start (launch and start times of its activities, ns)."""
    t = np.concatenate([launched, started])
    step = np.repeat(np.array([1, -1], np.int64), len(started))
    order = np.lexsort((step, t))  # at one instant the start before the launch: a launch that starts at once
    length = np.cumsum(step[order])
    last = np.r_[t[order][1:] != t[order][:-1], True]  # one point per instant, after all its changes
    return QueueSeries(track, t[order][last], length[last])


def launch_latency(trace: TraceColumns, launcher: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per device activity that is a launch of its own: its index and its launch-to-start latency (ns; the launch
    call's start to the activity's start, as the kernels table reports it; a graph launch: to its replay's first)."""
    dev, lts = _launched(trace, launcher)
    return dev, trace.x.ts[dev] - lts


def stream_queues(trace: TraceColumns, launcher: np.ndarray) -> list[StreamQueue]:
    """Per stream with launched work: its queue's depth, how often it ran dry, its latencies and their outliers."""
    x = trace.x
    dev, latency = launch_latency(trace, launcher)
    series = {s.track: s for s in queue_series(trace, launcher)}
    out = []
    for track, s in series.items():
        mine = x.track[dev] == track
        ev, lat = dev[mine], latency[mine]
        med = int(np.median(lat))
        slow = np.flatnonzero((lat >= OUTLIER_FACTOR * med) & (lat >= OUTLIER_MIN_NS))
        slow = slow[np.argsort(-lat[slow], kind="stable")]
        mean, full = _time_shares(s)
        out.append(
            StreamQueue(
                track,
                len(ev),
                int(s.length.max()),
                mean,
                _idle_launches(trace, ev, x.ts[ev] - lat),
                full,
                med,
                int(np.percentile(lat, 95)),
                len(slow),
                ev[slow[:OUTLIERS_KEPT]].tolist(),
            )
        )
    return out


def _full(max_length: int, full_share: float) -> bool:
    """A queue deep enough to block the CPU (FULL_MIN) and held at half its depth or more most of the time."""
    return max_length >= FULL_MIN and full_share >= FULL_SHARE


def _time_shares(s: QueueSeries) -> tuple[float, float]:
    """The queue's time-weighted mean length, and the share of time at FULL_LEVEL of its maximum or more."""
    span = int(s.ts[-1] - s.ts[0])
    if span <= 0:
        return float(s.length.max()), 1.0
    held = np.diff(s.ts)
    level = s.length[:-1]
    deep = level >= FULL_LEVEL * s.length.max()
    return float((held * level).sum() / span), float(held[deep].sum() / span)


def _idle_launches(trace: TraceColumns, ev: np.ndarray, lts: np.ndarray) -> float:
    """The share of a stream's activities launched when every earlier one on it had ended (the stream idle)."""
    x = trace.x
    order = np.argsort(x.ts[ev], kind="stable")
    ev, lts = ev[order], lts[order]
    ends = np.maximum.accumulate(x.ts[ev] + x.dur[ev])
    before = np.r_[np.iinfo(np.int64).min, ends[:-1]]
    return float((before <= lts).mean()) if len(ev) else 0.0


@dataclass
class NameLatency:
    """One device activity name's launch-to-start latency (ns) over its launched calls."""

    name: str
    count: int
    median_ns: int
    p95_ns: int
    max_ns: int


@dataclass
class LaunchQueues:
    """Every stream's queue facts, and the launch-to-start latency of every activity name (the slowest median first)."""

    streams: list[StreamQueue] = field(default_factory=list)
    latency: list[NameLatency] = field(default_factory=list)
    stream_names: dict[int, str] = field(default_factory=dict)  # track -> the stream's lane name

    def by_name(self) -> dict[str, NameLatency]:
        """The latency of each activity name (a name absent: never launched from a recorded call)."""
        return {n.name: n for n in self.latency}


def name_latency(trace: TraceColumns, launcher: np.ndarray) -> list[NameLatency]:
    """Per device activity name with a launch call: count, median, 95th percentile and max launch-to-start (ns)."""
    dev, latency = launch_latency(trace, launcher)
    if not len(dev):
        return []
    names = trace.x.name[dev]
    order = np.lexsort((latency, names))
    names, latency = names[order], latency[order]
    first = np.flatnonzero(np.r_[True, names[1:] != names[:-1]])
    bounds = np.r_[first, len(names)]
    out = []
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        lat = latency[a:b]
        med, p95 = np.percentile(lat, [50, 95])
        out.append(NameLatency(trace.names[int(names[a])], b - a, int(med), int(p95), int(lat[-1])))
    out.sort(key=lambda n: -n.median_ns)
    return out


def launch_queues(trace: TraceColumns, launcher: np.ndarray) -> LaunchQueues:
    """The queue facts of every stream and the latency of every activity name (Results.launch_queues)."""
    streams = stream_queues(trace, launcher)
    names = {s.track: trace.tracks[s.track].name for s in streams}
    return LaunchQueues(streams, name_latency(trace, launcher), names)
