"""The window's events as one graph: nodes are the starts and ends of events, edges the stretches between them.

Every edge runs forward in time, and the node it ends at is set by one of its incoming edges, the one that
binds: the latest to arrive (on a tie, CPU work before device work before gaps, waits and launches). A
binding edge weighs what it took (the time between its nodes), so walking the binding edges back from the
window's end covers the window exactly: that walk is the longest path (path.py). An edge that does not bind
weighs what it would take if it did (floor): a wait its tail, a gap or launch delay the median of its kind
here; the what-if re-solves the graph with those weights (solve.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ...analysis import Analysis
from ...cats import BUSY_CATS, Cat, of_cats
from ...sets import distinct
from .classes import LAUNCH_CALL, Bound, Edge, Kind
from .edges import EdgeList, concat, edges, lookup
from .hidden import hidden_waits
from .lanes import cpu_lanes, device_lanes
from .sync import Scope, sync_edges, wait_edges
from .wake import wake_edges
from .window import Window, working_tracks

CPU_CATS = (Cat.CPU_OP, Cat.USER_ANNOTATION, Cat.PYTHON, Cat.RUNTIME)
Note = tuple[str, int]


@dataclass
class Graph:
    """Nodes (time, event, lane: -1 for the window's start) and edges; bind: the edge that sets each node."""

    window: Window
    start: int  # ns: the window's start
    end: int  # ns: its end, or the end of the device work launched inside it if later
    ts: np.ndarray
    event: np.ndarray
    lane: np.ndarray
    e: EdgeList
    bind: np.ndarray
    floor: np.ndarray  # per edge: its weight where it does not bind
    ends: np.ndarray  # the nodes whose latest ends the path (the span's end, its device work's ends)
    launch_calls: np.ndarray  # the calls that launched device work here
    caveats: list[Note] = field(default_factory=list)

    @cached_property
    def weight(self) -> np.ndarray:
        """Per edge: the time between its nodes (what it took)."""
        return self.ts[self.e.dst] - self.ts[self.e.src]

    @cached_property
    def binds(self) -> np.ndarray:
        """Per edge: does it set its node's time?"""
        out = np.zeros(len(self.e), bool)
        out[self.bind[self.bind >= 0]] = True
        return out

    def dp_weight(self) -> np.ndarray:
        """The weights the what-if solves with: what binding edges took, the floors of the others."""
        return np.where(self.binds, self.weight, self.floor)


def build(a: Analysis, window: Window, replayed_by: np.ndarray) -> Graph:
    """The graph of one window of one rank (replayed_by: each device activity's graph launch, -1 for none)."""
    s = _scope(a, window, replayed_by)
    parts = [s.cpu.chain, s.dev.chain, _launch_edges(s)]
    s.base = _latest_in(s, concat(parts))
    parts += [sync_edges(s), hidden_waits(s), wait_edges(s), wake_edges(s)]
    e = concat(parts)
    n_nodes = s.virtual + 1
    e = concat([e, _idle_edges(s, e, n_nodes)])
    ts = np.concatenate([s.cpu.ts, s.dev.ts, [s.w0]])
    bind = _binding(e, ts, n_nodes)
    g = Graph(
        window,
        s.w0,
        s.w1,
        ts,
        np.concatenate([s.cpu.events, s.dev.events, [-1]]),
        np.concatenate([s.cpu.lane, s.dev.lane, [-1]]),
        e,
        bind,
        np.zeros(len(e), np.int64),
        _ends(s, ts),
        _launch_calls(s),
        s.caveats,
    )
    g.floor = _floors(g)
    return g


def _scope(a: Analysis, window: Window, replayed_by: np.ndarray) -> Scope:
    trace, x = a.trace, a.trace.x
    mine = np.array([t.rank == window.rank for t in trace.tracks] or [False])
    cpu_track = mine & np.array([t.kind == "cpu" for t in trace.tracks] or [False])
    gpu_track = mine & np.array([t.kind == "gpu" for t in trace.tracks] or [False])
    launcher = a.links.launcher.astype(np.int64)
    dev = of_cats(x.cat, BUSY_CATS) & gpu_track[x.track]
    launch_ts = np.where(launcher >= 0, x.ts[np.maximum(launcher, 0)], np.iinfo(np.int64).min)
    w0, w1 = window.start, window.end
    if window.event >= 0:
        inside = dev & (launcher >= 0) & (launch_ts >= w0) & (launch_ts < window.end)
        w1 = max(w1, int(a.end[inside].max())) if inside.any() else w1
    overlap = (x.ts <= w1) & (a.end >= w0)
    dev_sel = dev & overlap
    cpu_sel = cpu_track[x.track] & of_cats(x.cat, CPU_CATS) & overlap
    cpu_sel[launcher[dev_sel & (launcher >= 0)]] = True
    dev_sel[_before(trace, dev & (a.end < w0))] = True
    cpu_ev, dev_ev = np.flatnonzero(cpu_sel), np.flatnonzero(dev_sel)
    nest = a.nesting
    cpu = cpu_lanes(trace, nest.depth, nest.time_parent, cpu_ev, 0)
    devl = device_lanes(trace, dev_ev, 2 * len(cpu_ev))
    s = Scope(a, trace, window, w0, w1, cpu, devl, launcher[devl.ev], 2 * len(cpu_ev) + 2 * len(dev_ev))
    s.replayed_by = replayed_by[devl.ev] if len(replayed_by) else np.full(len(devl.ev), -1, np.int64)
    s.caveats = _caveats(s)
    return s


def _before(trace, cand: np.ndarray) -> np.ndarray:
    """Per track, the candidate that starts last (the activity before a stream's first in the window)."""
    idx = np.flatnonzero(cand)
    if not len(idx):
        return idx
    x = trace.x
    idx = idx[np.lexsort((x.ts[idx], x.track[idx]))]
    last = np.flatnonzero(np.r_[x.track[idx][1:] != x.track[idx][:-1], True])
    return idx[last]


def _launch_edges(s: Scope) -> EdgeList:
    """A launch call's start -> its device activity's start (left out where the activity starts first: skew)."""
    x = s.trace.x
    node = lookup(s.cpu.ev, s.cpu.start_node, s.launcher)
    ok = (s.launcher >= 0) & (node >= 0)
    skew = ok & (x.ts[np.maximum(s.launcher, 0)] > x.ts[s.dev.ev])
    if skew.any():
        s.caveats.append(("launch_skew", int(skew.sum())))
    k = np.flatnonzero(ok & ~skew)
    return edges(node[k], s.dev.start_node[k], Edge.LAUNCH, Bound.LAUNCH_OVERHEAD, Kind.WAIT, s.dev.ev[k])


def _latest_in(s: Scope, e: EdgeList) -> np.ndarray:
    """Per device activity: the latest time its stream and its launch let it start (the others must beat it)."""
    ts = np.concatenate([s.cpu.ts, s.dev.ts])
    out = np.full(s.virtual, np.iinfo(np.int64).min)
    np.maximum.at(out, e.dst, ts[e.src])
    return out[s.dev.start_node]


def _idle_edges(s: Scope, e: EdgeList, n_nodes: int) -> EdgeList:
    """From the window's start to each node after it that nothing else leads to."""
    ts = np.concatenate([s.cpu.ts, s.dev.ts, [s.w0]])
    has = np.zeros(n_nodes, bool)
    has[e.dst] = True
    k = np.flatnonzero(~has & (ts > s.w0))
    k = k[k != s.virtual]
    return edges(np.full(len(k), s.virtual), k, Edge.IDLE, Bound.IDLE, Kind.WAIT, np.full(len(k), -1))


def _binding(e: EdgeList, ts: np.ndarray, n_nodes: int) -> np.ndarray:
    """Per node: the incoming edge that arrives last (on a tie, the higher rule: CPU, device, stream, ...)."""
    order = np.lexsort((e.rule, ts[e.src], e.dst))
    dst = e.dst[order]
    last = np.flatnonzero(np.r_[dst[1:] != dst[:-1], True]) if len(dst) else np.empty(0, np.int64)
    bind = np.full(n_nodes, -1, np.int64)
    bind[dst[last]] = order[last]
    return bind


def _floors(g: Graph) -> np.ndarray:
    """What an edge that does not bind would take: a wait's tail (a CPU stretch into a node a wait sets), else
    the median of what edges of its rule took where they bound (never more than the edge itself took)."""
    w, rule, binds = g.weight, g.e.rule, g.binds
    floor = w.copy()
    for r in (Edge.LAUNCH, Edge.STREAM, Edge.WAIT, Edge.SYNC, Edge.WAKE):
        mine = rule == int(r)
        took = w[mine & binds]
        floor[mine & ~binds] = np.minimum(w[mine & ~binds], int(np.median(took)) if len(took) else 0)
    waited = (rule == int(Edge.CPU)) & ~binds
    tail = w[g.bind[g.e.dst[waited]]]
    floor[waited] = np.minimum(w[waited], tail)
    return floor


def _ends(s: Scope, ts: np.ndarray) -> np.ndarray:
    """The nodes that can end the window: its span's end and the ends of the device work launched inside it."""
    if s.window.event < 0:  # the whole trace: the last instant of the work, on a lane that works (a thread that
        # only waits, cut with the others when the profiler stopped, ends as late but never holds the path). Every
        # node of the work may end it: a what-if that takes away the last one (the profiler's final synchronize)
        # leaves the device work it waited for, which still ends where it ends
        lanes = np.concatenate([s.cpu.lane, s.dev.lane])
        working = working_tracks(s.trace, s.window.rank)[lanes]
        return np.flatnonzero((ts[:-1] <= s.w1) & working)
    x = s.trace.x
    span_end = lookup(s.cpu.ev, s.cpu.end_node, np.array([s.window.event]))
    lts = np.where(s.launcher >= 0, x.ts[np.maximum(s.launcher, 0)], np.iinfo(np.int64).min)
    launched = (s.launcher >= 0) & (lts >= s.w0) & (lts < s.window.end)
    return np.concatenate([span_end[span_end >= 0], s.dev.end_node[launched]])


def _launch_calls(s: Scope) -> np.ndarray:
    calls = distinct(s.launcher[s.launcher >= 0])
    return calls[lookup(s.cpu.ev, s.cpu.ev, calls) >= 0]


def _caveats(s: Scope) -> list[Note]:
    x = s.trace.x
    caveats: list[Note] = []
    if s.trace.job:
        caveats.append(("job_rank", s.window.rank))
    runtime = x.cat[s.cpu.ev] == int(Cat.RUNTIME)
    if not len(s.dev.ev):
        launches = int((runtime & _launchy(s)).sum())
        caveats.append(("device_records_missing", launches) if launches else ("cpu_only", 0))
    if len(s.dev.ev) and (s.replayed_by >= 0).any():
        caveats.append(("graph_replays", int(len(distinct(s.replayed_by[s.replayed_by >= 0])))))
    unlinked = int((s.launcher < 0).sum())
    if len(s.dev.ev) and unlinked:
        caveats.append(("unlinked_device", unlinked))
    return caveats


def _launchy(s: Scope) -> np.ndarray:
    """Per CPU event of the window: is it a call that puts work on the device (by name)?"""
    names, ev_names = s.trace.names, s.trace.x.name[s.cpu.ev]
    ids = distinct(ev_names)
    hit = ids[[bool(LAUNCH_CALL.search(names[int(k)])) for k in ids]] if len(ids) else ids
    return np.isin(ev_names, hit)
