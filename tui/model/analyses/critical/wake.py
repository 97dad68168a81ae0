"""Threads that wait for each other: a helper thread (the autograd engine's, a collective's) and the thread it
works for.

Backward runs on the engine's own thread (mostly autograd::engine::evaluate_function: ... ops, or the nodes'
names, MulBackward0, before torch 1.10), while the thread that called backward() sits idle inside it; gloo runs
DDP's all-reduces on threads of its own (gloo:all_reduce) while the step waits for them. Nothing in the trace
links the two. Two rules do (engine below means either kind of helper thread):
- the engine's thread, idle, starts work after another thread of the rank ended something while it was
  idle: that thread handed the work over (the latest end, on the thread busiest during the idle stretch);
- a thread idle while an engine thread was busy for most of that stretch, that starts work after the
  engine thread ended something, was woken by it (backward() returned).
Idle means no recorded op is open: nothing, or only annotations, steps and Python frames (waiting inside them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...cats import Cat
from ...sets import distinct
from ...steps import STEP_NAME
from .classes import COLLECTIVE_OP, ENGINE, Bound, Edge, Kind
from .edges import EdgeList, edges
from .sync import Scope

ENGINE_SHARE = 0.5  # a thread is the engine's when this share of its top-level events are engine ops
WAKE_BUSY = 0.5  # the share of an idle stretch an engine thread must be busy for to be what the thread waited on


@dataclass
class _Lane:
    """One CPU thread: its end points (time, node) and its busy time up to each point."""

    end_t: np.ndarray
    end_node: np.ndarray
    t: np.ndarray
    busy: np.ndarray  # busy time up to t (running sum over stretches with a recorded op open)

    def busy_in(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.interp(b, self.t, self.busy) - np.interp(a, self.t, self.busy) if len(self.t) else a * 0.0

    def last_end(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per stretch (a, b]: the node and time of this thread's last end point in it (-1, a where none)."""
        p = np.searchsorted(self.end_t, b, "right") - 1
        ok = p >= 0
        t = np.where(ok, self.end_t[np.maximum(p, 0)], a)
        ok &= t > a
        return np.where(ok, self.end_node[np.maximum(p, 0)], -1), np.where(ok, t, a)


def wake_edges(s: Scope) -> EdgeList:
    """Hand-overs to and from the autograd engine's threads (none when no thread runs engine ops)."""
    cpu = s.cpu
    engines = _engines(s)
    if not engines:
        return _none()
    idle_owner = _idle(s, cpu.owner)
    owner_after = np.empty(len(cpu.ts), np.int64)
    owner_after[cpu.order] = cpu.owner
    lanes = _lanes(s, idle_owner)
    src, dst = [], []
    for lane, (a, b, node) in _idle_stretches(s, idle_owner).items():
        found = (
            _woken_by_caller(lanes, lane, a, b) if lane in engines else _woken_by_engine(lanes, engines - {lane}, a, b)
        )
        keep = found >= 0
        src.append(found[keep])
        dst.append(node[keep])
    src_a, dst_a = np.concatenate(src or [np.empty(0, np.int64)]), np.concatenate(dst or [np.empty(0, np.int64)])
    own = owner_after[src_a]  # what the handing-over thread ran after it (its Python, in an annotation or frame)
    own = np.where(own >= 0, own, _prev_owner(s, dst_a, owner_after))
    return edges(src_a, dst_a, Edge.WAKE, Bound.CPU, Kind.WAIT, own)


def _engines(s: Scope) -> set[int]:
    """The helper threads: those whose top-level events are mostly autograd engine ops or collectives (not a
    thread that also runs them)."""
    return helper_threads(s.trace, s.a.nesting.time_parent, s.cpu.ev, ENGINE) | helper_threads(
        s.trace, s.a.nesting.time_parent, s.cpu.ev, COLLECTIVE_OP
    )


def helper_threads(trace, parent: np.ndarray, ev: np.ndarray, pattern) -> set[int]:
    """The threads (of the events ev) whose top-level events mostly have a name matching pattern."""
    x = trace.x
    top = ev[parent[ev] < 0]
    if not len(top):
        return set()
    ids, inv_names = np.unique(x.name[top], return_inverse=True)
    hit = np.array([bool(pattern.search(trace.names[int(k)])) for k in ids], bool)[inv_names]
    lanes, inv = np.unique(x.track[top], return_inverse=True)
    share = np.bincount(inv, weights=hit) / np.bincount(inv)
    return set(lanes[share >= ENGINE_SHARE].tolist())


def _none() -> EdgeList:
    empty = np.empty(0, np.int64)
    return edges(empty, empty, Edge.WAKE, Bound.CPU, Kind.WAIT, empty)


def _idle(s: Scope, owner: np.ndarray) -> np.ndarray:
    """Per stretch owner: is the thread idle there (no op open: nothing, an annotation, a Python frame, or a
    ProfilerStep, whatever its category: 2021 builds wrote steps as operators)? A collective's annotation is work,
    not waiting: gloo records its all-reduce as one (gloo:all_reduce) with no op inside."""
    x = s.trace.x
    names = s.trace.names
    step = np.array([bool(STEP_NAME.match(n)) for n in names] or [False])
    collective = np.array([bool(COLLECTIVE_OP.search(n)) for n in names] or [False])
    safe = np.maximum(owner, 0)
    cat = x.cat[safe]
    label = ((cat == int(Cat.USER_ANNOTATION)) & ~collective[x.name[safe]]) | (cat == int(Cat.PYTHON))
    return (owner < 0) | label | step[x.name[safe]]


def _lanes(s: Scope, idle_owner: np.ndarray) -> dict[int, _Lane]:
    cpu, n = s.cpu, len(s.cpu.ev)
    lane_o = cpu.lane[cpu.order]
    t_o = cpu.ts[cpu.order]
    out = {}
    for lane in distinct(lane_o).tolist():
        k = np.flatnonzero(lane_o == lane)
        t = t_o[k]
        step = np.where(idle_owner[k][:-1], 0, np.diff(t))
        busy = np.concatenate([[0], np.cumsum(step)]).astype(np.float64)
        ends = k[cpu.order[k] >= n]
        out[lane] = _Lane(t_o[ends], cpu.order[ends], t.astype(np.float64), busy)
    return out


def _idle_stretches(s: Scope, idle_owner: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per thread: its idle stretches (start, end, the node at the end), and its first point (idle since w0)."""
    cpu = s.cpu
    lane_o = cpu.lane[cpu.order]
    t_o = cpu.ts[cpu.order]
    out = {}
    for lane in distinct(lane_o).tolist():
        k = np.flatnonzero(lane_o == lane)
        gap = k[:-1][idle_owner[k[:-1]] & (np.diff(t_o[k]) > 0)]
        a = np.concatenate([[min(s.w0, int(t_o[k[0]]))], t_o[gap]])
        b = np.concatenate([[t_o[k[0]]], t_o[gap + 1]])
        out[lane] = (a, b, np.concatenate([[cpu.order[k[0]]], cpu.order[gap + 1]]))
    return out


def _woken_by_caller(lanes: dict[int, _Lane], lane: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """An engine thread's idle stretches: the last end on the thread busiest during each (that handed over)."""
    best = np.full(len(a), -1, np.int64)
    most = np.full(len(a), -1.0)
    for other, info in lanes.items():
        if other == lane:
            continue
        node, _t = info.last_end(a, b)
        busy = info.busy_in(a, b)
        better = (node >= 0) & (busy > most)
        best = np.where(better, node, best)
        most = np.where(better, busy, most)
    return best


def _woken_by_engine(lanes: dict[int, _Lane], engines: set[int], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Another thread's idle stretches: the engine thread's last end in each, if it was busy most of it."""
    best = np.full(len(a), -1, np.int64)
    latest = a.astype(np.float64)
    for e in engines:
        info = lanes[e]
        node, t = info.last_end(a, b)
        busy = info.busy_in(a, b)
        ok = (node >= 0) & (busy >= WAKE_BUSY * (b - a)) & (t > latest)
        best = np.where(ok, node, best)
        latest = np.where(ok, t, latest)
    return best


def _prev_owner(s: Scope, dst: np.ndarray, owner_after: np.ndarray) -> np.ndarray:
    """Per node: the owner of the stretch that ends at it on its own thread (what the woken thread waited in)."""
    cpu = s.cpu
    pos = np.empty(len(cpu.ts), np.int64)
    pos[cpu.order] = np.arange(len(cpu.order))
    before = pos[dst] - 1
    ok = (before >= 0) & (cpu.lane[cpu.order[np.maximum(before, 0)]] == cpu.lane[dst])
    return np.where(ok, owner_after[cpu.order[np.maximum(before, 0)]], -1)
