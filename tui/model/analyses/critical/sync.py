"""Waits on the device: a blocking call waits for device work to end, and a kernel for one on another stream.

- A device synchronize waits for the last activity launched before it, on every stream; a stream or
  event synchronize for the last on its stream. With Kineto's cuda_sync records (torch 2.2 and later) the
  stream is known (Stream Sync's lane; Event Sync's wait_on_stream, as it was when the event was recorded);
  without them the wait is inferred from the call's own span: the call waited for the last activity
  launched before it that ended inside it, if one did.
- A blocking copy (cudaMemcpy, or an async copy into pageable memory) waits for its own copy when the copy
  ends inside the call.
- An event wait (cudaStreamWaitEvent) holds the next activity launched onto the waiting stream until the
  activity launched before the cudaEventRecord on the recorded stream ends (from Stream Wait Event
  records; without them: the latest activity on another stream of the device that ended before the next
  launch started, where nothing else explains the start).
- In a graph replay, an activity waits for one of the same replay on another stream where that one ended
  last before it started and nothing else explains the start (the graph's own edges are not recorded).
- Contention: an activity whose start neither its stream nor its launch explains, that started within
  CONTENTION_LAG_NS of the end of an activity on another stream of its device which ran through most of its
  delay, waited for that one: the device was busy with the other stream's work (GPU compute of that stream, not
  a gap between kernels).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ...analysis import Analysis
from ...cats import Cat
from ...load.args import event_args
from ...sets import distinct
from ...trace import TraceColumns
from .classes import BLOCKING_COPY, EVENT_RECORD, STREAM_WAIT, SYNC_DEVICE, SYNC_EVENT, SYNC_STREAM, Bound, Edge, Kind
from .edges import EdgeList, concat, edges, lookup
from .lanes import Lanes
from .window import Window

SCAN = 512  # activities looked at, latest end first, before a wait is given up as not found
CONTENTION_MIN_NS = 20_000  # a start delayed by less than this is a gap, not contention (20 us)
CONTENTION_LAG_NS = 10_000  # the delayed activity starts at most this long after the other one ends (10 us)
CONTENTION_COVER = 0.5  # the other activity ran through at least this share of the delay
NONE = np.iinfo(np.int64).min
# an activity with no launch recorded that starts this soon after the one before it on its stream waited in the queue
QUEUED_GAP_NS = 5_000


@dataclass
class Scope:
    """What the rules need: the window, its lanes, and per device activity (in dev.ev order) its launch."""

    a: Analysis
    trace: TraceColumns
    window: Window
    w0: int
    w1: int
    cpu: Lanes
    dev: Lanes
    launcher: np.ndarray
    virtual: int  # the node of the window's start
    replayed_by: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    base: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # per activity: stream/launch bound
    caveats: list[tuple[str, int]] = field(default_factory=list)

    @property
    def dev_ts(self) -> np.ndarray:
        return self.trace.x.ts[self.dev.ev]

    @property
    def dev_end(self) -> np.ndarray:
        return self.dev_ts + self.trace.x.dur[self.dev.ev]

    @cached_property
    def launch_ts(self) -> np.ndarray:
        """Per activity: its launch call's start. With no call recorded, its own start, unless it started as the
        one before it on its stream ended: then it waited in the queue, launched no later than that one (the
        work queued before the profiler started, which a synchronize at the first step waits for)."""
        x = self.trace.x
        ts = self.dev_ts
        out = np.where(self.launcher >= 0, x.ts[np.maximum(self.launcher, 0)], ts)
        lane = x.track[self.dev.ev]
        end = ts + x.dur[self.dev.ev]
        queued = np.zeros(len(ts), bool)
        queued[1:] = (self.launcher[1:] < 0) & (lane[1:] == lane[:-1]) & (ts[1:] - end[:-1] <= QUEUED_GAP_NS)
        for k in np.flatnonzero(queued).tolist():  # in stream order: a run takes its first one's launch
            out[k] = min(out[k], out[k - 1])
        return out


def sync_edges(s: Scope) -> EdgeList:
    """Blocking calls -> the device work they waited for."""
    if not len(s.dev.ev):
        return edges(*(np.empty(0, np.int64),) * 2, Edge.SYNC, Bound.SYNC, Kind.SYNC, np.empty(0, np.int64))
    return concat([_synchronizes(s), _blocking_copies(s)])


def _calls(s: Scope, *patterns) -> np.ndarray:
    """The window's runtime calls whose name matches one of the patterns (each name tested once)."""
    x, names = s.trace.x, s.trace.names
    ev = s.cpu.ev[x.cat[s.cpu.ev] == int(Cat.RUNTIME)]
    ids = distinct(x.name[ev])
    hit = ids[[any(p.search(names[int(k)]) for p in patterns) for k in ids]] if len(ids) else ids
    return ev[np.isin(x.name[ev], hit)]


def _records(s: Scope, calls: np.ndarray) -> dict[int, int]:
    """cuda_sync records by the call they record (linked by correlation)."""
    x = s.trace.x
    rec = np.flatnonzero((x.cat == int(Cat.SYNC)) & (x.ts <= s.w1) & (x.ts + x.dur >= s.w0))
    calls_of = s.a.links.launcher[rec]
    keep = np.isin(calls_of, calls)
    return dict(zip(calls_of[keep].tolist(), rec[keep].tolist(), strict=True))


def _synchronizes(s: Scope) -> EdgeList:
    x = s.trace.x
    calls = _calls(s, SYNC_DEVICE, SYNC_STREAM, SYNC_EVENT)
    records = _records(s, calls)
    if len(calls) > len(records):
        s.caveats.append(("syncs_inferred", len(calls) - len(records)))
    found = _Finder(s)
    src, dst, own = [], [], []
    for c in calls.tolist():
        s0, s1 = int(x.ts[c]), int(x.ts[c] + x.dur[c])
        rec = records.get(c)
        streams, limit = _awaited(s, found, rec, s0)
        g = found.last_end(s1, limit, streams)
        if g < 0 or (rec is None and found.end[g] <= s0):
            continue  # inferred: only a wait that happened
        src.append(int(s.dev.end_node[g]))
        dst.append(c)
        own.append(c)
    dst_node = lookup(s.cpu.ev, s.cpu.end_node, np.array(dst, np.int64))
    return edges(np.array(src, np.int64), dst_node, Edge.SYNC, Bound.SYNC, Kind.SYNC, np.array(own, np.int64))


def _awaited(s: Scope, found: _Finder, rec: int | None, s0: int) -> tuple[set[int] | None, int]:
    """The streams a recorded synchronize waits for (None: every stream), and the latest launch it waits for."""
    if rec is None:
        return None, s0
    name = s.trace.name_of(rec)
    if name == "Stream Sync":
        return {int(s.trace.x.track[rec])}, s0
    if name == "Event Sync":
        track, limit = found.recorded(rec, s0)
        return ({track} if track >= 0 else None), limit
    return None, s0


def _blocking_copies(s: Scope) -> EdgeList:
    x = s.trace.x
    calls = _calls(s, BLOCKING_COPY)
    mine = np.isin(s.launcher, calls)
    lts = np.where(mine, x.ts[np.maximum(s.launcher, 0)], 0)
    lend = np.where(mine, lts + x.dur[np.maximum(s.launcher, 0)], 0)
    k = np.flatnonzero(mine & (s.dev_end > lts) & (s.dev_end <= lend))
    dst = lookup(s.cpu.ev, s.cpu.end_node, s.launcher[k])
    return edges(s.dev.end_node[k], dst, Edge.SYNC, Bound.SYNC, Kind.SYNC, s.launcher[k])


def wait_edges(s: Scope) -> EdgeList:
    """Kernels that waited for a kernel on another stream: event waits and graph replays' own dependencies."""
    if not len(s.dev.ev):
        return edges(
            *(np.empty(0, np.int64),) * 2, Edge.WAIT, Bound.KERNEL_KERNEL_OVERHEAD, Kind.WAIT, np.empty(0, np.int64)
        )
    return concat([_event_waits(s), _replay_waits(s), _contention(s)])


def _event_waits(s: Scope) -> EdgeList:
    x = s.trace.x
    calls = _calls(s, STREAM_WAIT)
    records = _records(s, calls)
    found = _Finder(s)
    src, dst = [], []
    for c in calls.tolist():
        rec = records.get(c)
        pair = found.recorded_wait(rec, int(x.ts[c])) if rec is not None else found.inferred_wait(c)
        if pair is not None:
            src.append(pair[0])
            dst.append(pair[1])
    return _device_waits(s, src, dst)


def _replay_waits(s: Scope) -> EdgeList:
    """Per replayed activity: the latest of its replay on another stream to end before it, where that binds."""
    owner = s.replayed_by
    ts, end, track = s.dev_ts, s.dev_end, s.trace.x.track[s.dev.ev]
    src, dst = [], []
    for rep in distinct(owner[owner >= 0]).tolist():
        mine = np.flatnonzero(owner == rep)
        if len(distinct(track[mine])) < 2:
            continue
        mine = mine[np.argsort(end[mine], kind="stable")]
        for g in mine.tolist():
            p = int(np.searchsorted(end[mine], ts[g], "right")) - 1
            while p >= 0 and track[mine[p]] == track[g]:
                p -= 1
            if p >= 0 and end[mine[p]] > s.base[g]:
                src.append(int(mine[p]))
                dst.append(g)
    return _device_waits(s, src, dst)


def _contention(s: Scope) -> EdgeList:
    """Per activity held back by another stream's work on its device: that work's end -> its start."""
    ts, end, track = s.dev_ts, s.dev_end, s.trace.x.track[s.dev.ev]
    delayed = np.flatnonzero((s.base > NONE) & (ts - s.base >= CONTENTION_MIN_NS))
    if not len(delayed):
        return _device_waits(s, [], [])
    found = _Finder(s)
    src, dst = [], []
    for g in delayed.tolist():
        others = found.device.get(str(s.trace.tracks[int(track[g])].pid), set()) - {int(track[g])}
        j = found.last_end(int(ts[g]), np.iinfo(np.int64).max, others) if others else -1
        if j < 0 or ts[g] - end[j] > CONTENTION_LAG_NS or end[j] <= s.base[g]:
            continue
        cover = min(int(end[j]), int(ts[g])) - max(int(ts[j]), int(s.base[g]))
        if cover >= CONTENTION_COVER * (ts[g] - s.base[g]):
            src.append(j)
            dst.append(g)
    return _device_waits(s, src, dst)


def _device_waits(s: Scope, src: list[int], dst: list[int]) -> EdgeList:
    """Wait edges from the end of each device activity src[i] to the start of dst[i] (indices into the scope's device work)."""
    k = np.array(dst, np.int64)
    return edges(
        s.dev.end_node[np.array(src, np.int64)],
        s.dev.start_node[k],
        Edge.WAIT,
        Bound.KERNEL_KERNEL_OVERHEAD,
        Kind.WAIT,
        s.dev.ev[k],
    )


class _Finder:
    """Look-ups over the window's device activities: by end, and per stream by launch."""

    def __init__(self, s: Scope) -> None:
        self.s = s
        x = s.trace.x
        self.end, self.lts = s.dev_end, s.launch_ts
        self.track = x.track[s.dev.ev]
        self.by_end = np.argsort(self.end, kind="stable")
        self.ends = self.end[self.by_end]
        tracks = s.trace.tracks
        self.stream = {(str(t.pid), _stream_no(t.tid)): t.id for t in tracks if t.kind == "gpu"}
        self.device: dict[str, set[int]] = {}
        for t in tracks:
            if t.kind == "gpu":
                self.device.setdefault(str(t.pid), set()).add(t.id)

    def last_end(self, before: int, limit: int, streams: set[int] | None, not_track: int = -1) -> int:
        """The activity ending last at or before `before`, launched before limit, on streams (-1: none)."""
        p = int(np.searchsorted(self.ends, before, "right")) - 1
        for _ in range(SCAN):
            if p < 0:
                return -1
            g = int(self.by_end[p])
            on = streams is None or int(self.track[g]) in streams
            if self.lts[g] < limit and on and int(self.track[g]) != not_track:
                return g
            p -= 1
        return -1

    def recorded(self, rec: int, fallback: int) -> tuple[int, int]:
        """An Event Sync or Stream Wait Event record: the recorded stream's track and its cudaEventRecord's start."""
        args = event_args(self.s.trace, rec)
        track = self.track_of(rec, args.get("wait_on_stream"))
        corr = args.get("wait_on_cuda_event_record_corr_id")
        return track, self._record_call_ts(corr, fallback)

    def track_of(self, rec: int, stream) -> int:
        pid = str(self.s.trace.track_of(rec).pid)
        return self.stream.get((pid, _stream_no(stream)), -1) if isinstance(stream, int) and stream >= 0 else -1

    def _record_call_ts(self, corr, fallback: int) -> int:
        if not isinstance(corr, int) or corr < 0:
            return fallback
        x = self.s.trace.x
        ev = self.s.cpu.ev
        hit = ev[(x.corr[ev] == corr) & (x.cat[ev] == int(Cat.RUNTIME))]
        hit = hit[[bool(EVENT_RECORD.search(self.s.trace.name_of(int(i)))) for i in hit]] if len(hit) else hit
        return int(x.ts[hit[0]]) + 1 if len(hit) else fallback

    def next_launched(self, track: int | None, after: int, lane: int | None = None) -> int:
        """The first activity (on track, or launched from lane) launched at or after `after` (-1: none)."""
        ok = self.lts >= after
        if track is not None:
            ok &= self.track == track
        if lane is not None:
            x = self.s.trace.x
            ok &= (self.s.launcher >= 0) & (x.track[np.maximum(self.s.launcher, 0)] == lane)
        k = np.flatnonzero(ok)
        return int(k[np.argmin(self.lts[k])]) if len(k) else -1

    def recorded_wait(self, rec: int, call_ts: int) -> tuple[int, int] | None:
        waiting = int(self.s.trace.x.track[rec])
        dep = self.next_launched(waiting, call_ts)
        track, limit = self.recorded(rec, call_ts)
        if dep < 0 or track < 0:
            return None
        g = self.last_end(int(self.s.dev_ts[dep]), limit, {track})
        return (g, dep) if g >= 0 else None

    def inferred_wait(self, call: int) -> tuple[int, int] | None:
        x = self.s.trace.x
        dep = self.next_launched(None, int(x.ts[call]), int(x.track[call]))
        if dep < 0:
            return None
        track = int(self.track[dep])
        same_device = self.device.get(str(self.s.trace.tracks[track].pid), set()) - {track}
        g = self.last_end(int(self.s.dev_ts[dep]), int(x.ts[call]), same_device)
        if g < 0 or self.end[g] <= self.s.base[dep]:
            return None
        return g, dep


def _stream_no(tid) -> str:
    text = str(tid)
    return text.split(" ", 1)[1].strip() if text.startswith("stream ") else text
