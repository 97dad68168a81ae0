"""The critical path: the binding edges walked back from the window's end, as items with what bounds each."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ...analysis import Analysis
from ...cats import Cat
from ...tracks import lane_titles
from .busy import split_gaps
from .classes import CLASS_NAMES, CLASSES, KIND_NAMES, SYNC_DEVICE, Bound, Edge, Kind
from .graph import Graph, Note, build
from .window import Window, WindowError

UNTRACED = "(CPU outside any recorded op)"
IDLE = "(nothing recorded)"
WOKEN = "(waiting for another thread)"
PROFILER = re.compile(r"_disable_profiler|profiler\.py")  # the profiler's own calls and frames as it stops
DEVICE_KINDS = (KIND_NAMES[Kind.KERNEL], KIND_NAMES[Kind.MEMCPY], KIND_NAMES[Kind.MEMSET])


@dataclass
class PathItem:
    """One stretch of the path: an event (-1: none) and what bounds the path while on it; ns from the trace's origin."""

    event: int
    name: str
    kind: str  # cpu_op | runtime | kernel | memcpy | memset | sync | wait
    start_ns: int
    dur_ns: int
    bound_by: str
    waits_for: str = ""  # a wait's other end: the thread or stream it waited for ("" for work)


@dataclass
class CriticalPath:
    """The path through one window of one rank; times in ns from the trace's origin, and the breakdown in ns."""

    window: str
    event: int  # the window's span (-1: the whole trace)
    rank: int
    start_ns: int
    end_ns: int  # the path's end: the span's end, or the end of the device work launched in it if later
    span_end_ns: int  # the span's own end (its CPU side)
    breakdown: dict[str, int]  # class -> ns, every class; adds up to length_ns
    items: list[PathItem] = field(default_factory=list)
    caveats: list[Note] = field(default_factory=list)

    @property
    def length_ns(self) -> int:
        return self.end_ns - self.start_ns

    @property
    def bound_by(self) -> str:
        """The class with the most time on the path ("" for an empty path)."""
        best = max(self.breakdown.items(), key=lambda kv: kv[1], default=("", 0))
        return best[0] if best[1] > 0 else ""


def critical_path(a: Analysis, window: Window, replayed_by: np.ndarray) -> CriticalPath:
    """Build the window's graph and walk its longest path (WindowError: the window holds nothing)."""
    return path_of(a, graph(a, window, replayed_by), None, None)


def graph(a: Analysis, window: Window, replayed_by: np.ndarray) -> Graph:
    """The window's graph; a window that lasts no time or holds no events is a WindowError."""
    g = build(a, window, replayed_by)
    if g.end <= g.start or not len(g.e):
        raise WindowError(f"{window.name} holds no events (it lasts {(window.end - window.start) / 1000:g} us)")
    return g


def end_node(g: Graph, times: np.ndarray) -> int:
    """The window's last node: the latest of its candidate ends (the first of them on a tie)."""
    if not len(g.ends):
        return len(g.ts) - 1
    return int(g.ends[np.argmax(times[g.ends])])


def walk(g: Graph, times: np.ndarray, bind: np.ndarray) -> tuple[list[int], int]:
    """The binding edges from the window's end back to its start, in time order, and the node the walk stopped at."""
    t, b, src = times.tolist(), bind.tolist(), g.e.src.tolist()
    v = end_node(g, times)
    out = []
    while t[v] > g.start and b[v] >= 0:
        out.append(b[v])
        v = src[b[v]]
    return out[::-1], v


def path_of(a: Analysis, g: Graph, times: np.ndarray | None, bind: np.ndarray | None) -> CriticalPath:
    """The path as items (consecutive stretches of one event and class merged) and its breakdown; times and bind
    from the solver (None: as recorded; then a gap where another stream of the device ran is that stream's work)."""
    recorded = times is None or np.array_equal(times, g.ts)  # a what-if that changed nothing reads as recorded
    moved = None if recorded or times is None else _device_times(a, g, times)
    times = g.ts if times is None else times
    bind = g.bind if bind is None else bind
    ks, stop = walk(g, times, bind)
    origin = a.trace.origin
    e = g.e
    k = np.array(ks, np.int64)
    t0 = np.maximum(times[e.src[k]], g.start).astype(np.int64)
    dur = times[e.dst[k]].astype(np.int64) - t0
    keep = dur > 0
    k, t0, dur = k[keep], t0[keep], dur[keep]
    items = _items(a, g, k, t0 - origin, dur)
    items = split_gaps(a.trace, g.window.rank, items, moved)
    end = int(times[end_node(g, times)])
    lead = int(times[stop]) - g.start
    if lead > 0:  # nothing recorded explains the path's first stretch
        items.insert(0, PathItem(-1, IDLE, KIND_NAMES[Kind.WAIT], g.start - origin, lead, CLASS_NAMES[Bound.IDLE]))
    breakdown = dict.fromkeys(CLASSES, 0)
    for it in items:
        breakdown[it.bound_by] += it.dur_ns
    w = g.window
    caveats = list(g.caveats) + [("final_sync", n) for n in [final_syncs(a, w.event, items)] if n]
    return CriticalPath(
        w.name, w.event, w.rank, g.start - origin, end - origin, w.end - origin, breakdown, items, caveats
    )


def _device_times(a: Analysis, g: Graph, times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The graph's device activities with their start and end as the solver moved them (their nodes follow the CPU
    threads': the starts, then the ends, in one order; the window's start is the last node)."""
    gpu = np.array([t.kind == "gpu" for t in a.trace.tracks] or [False])
    lane = g.lane[:-1]
    dev = np.flatnonzero((lane >= 0) & gpu[np.maximum(lane, 0)])
    n = len(dev) // 2
    starts, ends = dev[:n], dev[n:]
    return g.event[starts], times[starts].astype(np.int64), times[ends].astype(np.int64)


def final_syncs(a: Analysis, event: int, items: list[PathItem]) -> int:
    """1 if the path of the whole trace (event -1) ends in the profiler's own synchronize as it stops, else 0:
    torch.autograd.profiler's __exit__ synchronizes the device before it disables the profiler, so the path's last
    device synchronize comes from device work, and nothing but Python frames and the profiler's own calls start on
    its thread after it."""
    syncs = [k for k, it in enumerate(items) if it.kind == KIND_NAMES[Kind.SYNC] and SYNC_DEVICE.search(it.name)]
    if event >= 0 or not syncs or syncs[-1] == 0 or items[syncs[-1] - 1].kind not in DEVICE_KINDS:
        return 0
    x, names = a.trace.x, a.trace.names
    ev = items[syncs[-1]].event
    end = x.ts[ev] + x.dur[ev]
    later = np.flatnonzero((x.track == x.track[ev]) & (x.ts >= end) & (x.cat != int(Cat.PYTHON)))
    return int(all(PROFILER.search(names[int(x.name[k])]) for k in later.tolist()))


def _items(a: Analysis, g: Graph, k: np.ndarray, start: np.ndarray, dur: np.ndarray) -> list[PathItem]:
    e = g.e
    owner, bound, kind = e.owner[k], e.bound[k], e.kind[k]
    if not len(k):
        return []
    new = np.r_[True, (owner[1:] != owner[:-1]) | (bound[1:] != bound[:-1]) | (kind[1:] != kind[:-1])]
    first = np.flatnonzero(new)
    total = np.add.reduceat(dur, first)
    names = a.trace.names
    evs = owner[first]
    name_ids = np.where(evs >= 0, a.trace.x.name[np.maximum(evs, 0)], -1).tolist()  # one read of the column
    other = _waited_lanes(a, g, k)
    classes = [CLASS_NAMES[b] for b in Bound]  # by the class's number: no enum built per item
    kinds = [KIND_NAMES[kd] for kd in Kind]
    out = []
    cols = (first.tolist(), total.tolist(), evs.tolist(), name_ids, bound[first].tolist(), kind[first].tolist())
    rows = zip(*cols, strict=True)
    for f, d, ev, nid, b, kd in rows:
        name = names[nid] if ev >= 0 else _unnamed(Bound(b), Kind(kd))
        out.append(PathItem(ev, name, kinds[kd], int(start[f]), int(d), classes[b], other[f]))
    return out


WAITS = (int(Edge.WAKE), int(Edge.SYNC), int(Edge.WAIT))


def _waited_lanes(a: Analysis, g: Graph, k: np.ndarray) -> list[str]:
    """Per edge: for a wait (a thread woken by another, the CPU back from the device, a kernel held by another
    stream), what it waited for, in the lane titles the timeline shows ("" for the others)."""
    rule, lane = g.e.rule[k], g.lane[g.e.src[k]]
    waits = np.isin(rule, WAITS) & (lane >= 0)
    if not waits.any():
        return [""] * len(k)
    tracks = a.trace.tracks
    rank = tracks[int(lane[waits][0])].rank
    titles = lane_titles([t for t in tracks if t.rank == rank and t.kind != "meta"])  # alike titles told apart
    out = [""] * len(k)
    for i in np.flatnonzero(waits).tolist():
        title = titles[int(lane[i])][0]
        out[i] = title.removeprefix("CPU ") if tracks[int(lane[i])].kind == "cpu" else title
    return out


def _unnamed(b: Bound, kind: Kind) -> str:
    if b == Bound.IDLE:
        return IDLE
    return WOKEN if kind == Kind.WAIT else UNTRACED
