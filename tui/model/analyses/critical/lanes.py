"""The lanes of the graph: each CPU thread as a chain of its events' starts and ends, each stream as its activities.

A CPU thread's points are visited as its events nest (a parent's start before its children's, a child's end
before its parent's), and the stretch after a point belongs to the innermost event open there: the event
that starts at it, or the parent of the event that ends at it (-1: no recorded event, untraced CPU). On a
stream, each activity is an edge from its start to its end, and the gap before it an edge from the
previous activity's end (its start, when the two overlap).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...cats import Cat
from ...nesting import depth_of, levels
from ...trace import TraceColumns
from ..compiling import COMPILE
from .classes import COLLECTIVE_OP, DATA_LOADER, Bound, Edge, Kind, device_bound, device_kind, is_blocking
from .edges import EdgeList, concat, edges


@dataclass
class Lanes:
    """One side (CPU or device) of the graph: its events (sorted), their start and end nodes, its points in lane order."""

    ev: np.ndarray
    start_node: np.ndarray  # per event
    end_node: np.ndarray
    ts: np.ndarray  # per node (starts, then ends): its time
    lane: np.ndarray  # per node: its track
    chain: EdgeList  # consecutive points of a thread; a device activity's start to its end, and the gaps
    order: np.ndarray  # the nodes in lane order (CPU: as events nest; device: starts by stream)
    owner: np.ndarray  # per node in lane order: the event the stretch after it belongs to

    @property
    def events(self) -> np.ndarray:
        """Per node (starts, then ends): its event."""
        return np.concatenate([self.ev, self.ev])


def cpu_lanes(trace: TraceColumns, depth: np.ndarray, parent: np.ndarray, ev: np.ndarray, first: int) -> Lanes:
    """The CPU threads' chains: node first + k is the start of ev[k], first + len(ev) + k its end."""
    x, n = trace.x, len(ev)
    dur = x.dur[ev]
    pev = np.concatenate([ev, ev])
    t = np.concatenate([x.ts[ev], x.ts[ev] + dur])
    is_end = np.repeat([False, True], n)
    zero = np.concatenate([dur == 0, dur == 0])
    group = np.where(zero, 2, np.where(is_end, 0, 1))  # ends, then starts, then zero-length events, at one instant
    d = depth[pev]
    lane = x.track[pev].astype(np.int64)
    order = np.lexsort((is_end, pev, np.where(group == 0, -d, d), group, t, lane))
    node = first + order
    owner = np.where(is_end, parent[pev], pev)[order].astype(np.int64)
    lane_o = lane[order]
    same = np.flatnonzero(lane_o[1:] == lane_o[:-1])
    own = owner[same]
    bound, kind = cpu_class(trace, parent, own)
    chain = edges(node[same], node[same + 1], Edge.CPU, bound, kind, own)
    ids = np.arange(n, dtype=np.int64)
    return Lanes(ev, first + ids, first + n + ids, t, lane, chain, node, owner)


# The classes of CPU work under a span, the first that matches winning: compiling inside a DataLoader span is compiling.
UNDER = ((COMPILE, Bound.COMPILING), (COLLECTIVE_OP, Bound.COMMUNICATION), (DATA_LOADER, Bound.DATA_LOADING))


def cpu_class(trace: TraceColumns, parent: np.ndarray, owner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per CPU stretch: its class (compiling under a torch.compile span, communication under a collective, data
    loading under a DataLoader span, else CPU) and kind (op, runtime, sync)."""
    bound = np.full(len(owner), int(Bound.CPU), np.int8)
    kind = np.full(len(owner), int(Kind.CPU_OP), np.int8)
    if not len(owner):
        return bound, kind
    u, inv = np.unique(owner, return_inverse=True)
    has = u >= 0
    hits = np.zeros((len(UNDER), len(u)), bool)
    hits[:, has] = _under(trace, parent, u[has], [pattern for pattern, _cls in UNDER])
    if not has_peers(trace):  # a collective of one rank waits on nobody: its CPU time is CPU work
        hits[[k for k, (_p, cls) in enumerate(UNDER) if cls == Bound.COMMUNICATION]] = False
    for k in range(len(UNDER) - 1, -1, -1):  # the first pattern wins: write it last
        bound[hits[k][inv]] = int(UNDER[k][1])
    x = trace.x
    runtime = np.zeros(len(u), bool)
    runtime[has] = x.cat[u[has]] == int(Cat.RUNTIME)
    blocking = np.zeros(len(u), bool)
    blocking[has] = _named(trace, u[has], is_blocking)
    kind[runtime[inv]] = int(Kind.RUNTIME)
    kind[(runtime & blocking)[inv]] = int(Kind.SYNC)
    return bound, kind


def has_peers(trace: TraceColumns) -> bool:
    """Does the rank have others to talk to? A folder of ranks does; else the largest of the world size and the
    process groups' sizes its distributedInfo records, when it records one; a trace that records neither is
    given the benefit of the doubt (its collectives' CPU time stays communication)."""
    if trace.job:
        return True
    sizes = []
    for info in trace.ranks or []:
        sizes += [info["world_size"]] if isinstance(info.get("world_size"), int) else []
        groups = info.get("pg_config")
        for g in groups if isinstance(groups, list) else []:
            size = g.get("group_size") if isinstance(g, dict) else None
            sizes += [size] if isinstance(size, int) else []
    return max(sizes) > 1 if sizes else True


def _named(trace: TraceColumns, ev: np.ndarray, test) -> np.ndarray:
    names, inv = np.unique(trace.x.name[ev], return_inverse=True)
    return np.array([bool(test(trace.names[int(k)])) for k in names])[inv] if len(ev) else np.zeros(0, bool)


def _under(trace: TraceColumns, parent: np.ndarray, ev: np.ndarray, patterns) -> np.ndarray:
    """Per pattern and event: does the event's name, or an enclosing event's, match it? (one walk up for all)"""
    names = trace.names
    match = np.array([[bool(p.search(s)) for s in names] or [False] for p in patterns]).reshape(len(patterns), -1)
    name = trace.x.name
    hit = match[:, name[ev]]
    up = parent[ev].astype(np.int64)
    for _ in range(CLIMB):
        live = np.flatnonzero(up >= 0)
        if not len(live):
            return hit
        hit[:, live] |= match[:, name[up[live]]]
        up[live] = parent[up[live]]
    return _down_levels(match[:, name], parent)[:, ev]


CLIMB = 64  # levels climbed a step at a time; a deeper tree (20 k identical events nest 20 k deep) goes by levels


def _down_levels(hit: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """hit (per pattern and event) or'd down the tree, level by level from the roots: each event's own or any
    enclosing event's, in one pass over every event, however deep."""
    for level in levels(depth_of(parent))[1:]:
        hit[:, level] |= hit[:, parent[level]]
    return hit


def device_lanes(trace: TraceColumns, ev: np.ndarray, first: int) -> Lanes:
    """Each stream's activities by start: node first + k starts ev[k] (in that order), first + len(ev) + k ends it."""
    x = trace.x
    ev = ev[np.lexsort((x.dur[ev], x.ts[ev], x.track[ev]))]
    n = len(ev)
    ts, end, lane = x.ts[ev], x.ts[ev] + x.dur[ev], x.track[ev].astype(np.int64)
    ids = np.arange(n, dtype=np.int64)
    start_node, end_node = first + ids, first + n + ids
    names, inv = np.unique(x.name[ev], return_inverse=True)
    cats = x.cat[ev]
    bound = np.array([int(device_bound(trace.names[int(k)], int(Cat.KERNEL))) for k in names], np.int8)[inv]
    bound = np.where(cats == int(Cat.KERNEL), bound, int(Bound.GPU_MEMCPY)).astype(np.int8)
    kind = np.array([int(device_kind(int(c))) for c in cats], np.int8)
    work = edges(start_node, end_node, Edge.DEVICE, bound, kind, ev)
    k = np.flatnonzero(lane[1:] == lane[:-1]) + 1  # activities after another on their stream
    after = end[k - 1] <= ts[k]
    src = np.where(after, end_node[k - 1], start_node[k - 1])
    # an activity that starts while the one before it still runs (programmatic dependent launch, a graph's
    # overlapped nodes) waited for the previous one's work, not for a gap: that stretch is the previous one's
    g_bound = np.where(after, int(Bound.KERNEL_KERNEL_OVERHEAD), bound[k - 1]).astype(np.int8)
    g_kind = np.where(after, int(Kind.WAIT), kind[k - 1]).astype(np.int8)
    gaps = edges(src, start_node[k], Edge.STREAM, g_bound, g_kind, np.where(after, ev[k], ev[k - 1]))
    chain = concat([work, gaps])
    return Lanes(
        ev, start_node, end_node, np.concatenate([ts, end]), np.concatenate([lane, lane]), chain, start_node, ev
    )
