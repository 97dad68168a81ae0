"""The critical path: the binding edges walked back from the window's end, as items with what bounds each."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...analysis import Analysis
from .classes import CLASS_NAMES, CLASSES, KIND_NAMES, Bound, Kind
from .graph import Graph, Note, build
from .window import Window, WindowError

UNTRACED = "(CPU outside any recorded op)"
IDLE = "(nothing recorded)"
WOKEN = "(waiting for another thread)"


@dataclass
class PathItem:
    """One stretch of the path: an event (-1: none) and what bounds the path while on it; ns from the trace's origin."""

    event: int
    name: str
    kind: str  # cpu_op | runtime | kernel | memcpy | memset | sync | wait
    start_ns: int
    dur_ns: int
    bound_by: str


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
    from the solver (None: as recorded)."""
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
    end = int(times[end_node(g, times)])
    lead = int(times[stop]) - g.start
    if lead > 0:  # nothing recorded explains the path's first stretch
        items.insert(0, PathItem(-1, IDLE, KIND_NAMES[Kind.WAIT], g.start - origin, lead, CLASS_NAMES[Bound.IDLE]))
    breakdown = dict.fromkeys(CLASSES, 0)
    for it in items:
        breakdown[it.bound_by] += it.dur_ns
    w = g.window
    return CriticalPath(
        w.name, w.event, w.rank, g.start - origin, end - origin, w.end - origin, breakdown, items, list(g.caveats)
    )


def _items(a: Analysis, g: Graph, k: np.ndarray, start: np.ndarray, dur: np.ndarray) -> list[PathItem]:
    e = g.e
    owner, bound, kind = e.owner[k], e.bound[k], e.kind[k]
    if not len(k):
        return []
    new = np.r_[True, (owner[1:] != owner[:-1]) | (bound[1:] != bound[:-1]) | (kind[1:] != kind[:-1])]
    first = np.flatnonzero(new)
    total = np.add.reduceat(dur, first)
    ev = owner[first]
    name_ids = np.where(ev >= 0, a.trace.x.name[np.maximum(ev, 0)], -1)  # one read of the column, not one per item
    names, classes, kinds = a.trace.names, _CLASSES, _KINDS
    rows = zip(
        ev.tolist(),
        name_ids.tolist(),
        bound[first].tolist(),
        kind[first].tolist(),
        start[first].tolist(),
        total.tolist(),
        strict=True,
    )
    return [
        PathItem(i, names[n] if i >= 0 else _unnamed(Bound(b), Kind(kd)), kinds[kd], t, d, classes[b])
        for i, n, b, kd, t, d in rows
    ]


_CLASSES = [CLASS_NAMES[b] for b in sorted(Bound)]  # by the class's value
_KINDS = [KIND_NAMES[k] for k in sorted(Kind)]


def _unnamed(b: Bound, kind: Kind) -> str:
    if b == Bound.IDLE:
        return IDLE
    return WOKEN if kind == Kind.WAIT else UNTRACED
