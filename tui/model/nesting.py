"""Nesting by time containment on each row, with torch's tie-breaks, plus display rows.

Rules (the same as torch's EventList._populate_cpu_children):
- events of one track are visited by (start asc, end desc), so of two events starting
  together the longer is the parent;
- an event is a child of the innermost open event that starts before it ends and ends
  no earlier than it ends; a zero-duration event never contains anything;
- an event that partially overlaps the open one closes it and tries the next outer one.
Display rows: a child goes one row below its parent; if that row is still busy (a partial
overlap), it moves down to the next free row, so overlapping events are all kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cats import Cat
from .trace import keyed, rank_of_events


@dataclass
class Nesting:
    """parent[i] (-1 for roots or unnested) and the display row of every event."""

    parent: np.ndarray
    row: np.ndarray
    order: np.ndarray  # the visiting order (track, start, -end) of the nested events


def nest(ts: np.ndarray, end: np.ndarray, track: np.ndarray, mask: np.ndarray | None = None) -> Nesting:
    """Nest the events selected by mask (all when None) within each track."""
    n = len(ts)
    idx = np.arange(n) if mask is None else np.flatnonzero(mask)
    order = idx[np.lexsort((-end[idx], ts[idx], track[idx]))]
    parent = np.full(n, -1, np.int64)
    row = np.zeros(n, np.int32)
    _walk(order.tolist(), ts[order].tolist(), end[order].tolist(), track[order].tolist(), parent, row)
    return Nesting(parent, row, order)


def _walk(order, starts, ends, tracks, parent, row) -> None:
    stack: list[int] = []  # positions k into order
    row_end: list[int] = []
    rows: list[int] = [0] * len(order)
    current = None
    for k, (s, e, t) in enumerate(zip(starts, ends, tracks, strict=False)):
        if t != current:
            current, stack, row_end = t, [], []
        while stack and (s >= ends[stack[-1]] or e > ends[stack[-1]]):
            stack.pop()
        r = 0
        if stack:
            top = stack[-1]
            parent[order[k]] = order[top]
            r = rows[top] + 1
        while r < len(row_end) and row_end[r] > s:
            r += 1
        if r == len(row_end):
            row_end.append(e)
        else:
            row_end[r] = max(row_end[r], e)
        rows[k] = r
        stack.append(k)
    row[order] = rows


def python_parents(trace, parent: np.ndarray) -> None:
    """Correct time nesting with the Python frames' own ids where the two disagree.

    A frame stays under its time parent when the frame its "Python parent id" names is that
    parent or one of its ancestors (annotations and ops may sit between two frames). Otherwise
    time got it wrong, e.g. frames of several background threads reported on one (pid 0,
    tid 0) row, which time alone chains into one fake stack: the frame moves under the named
    frame, or becomes a root when its id says it has no parent frame. Rows stay as time placed them.
    """
    x = trace.x
    frames = np.flatnonzero((x.cat == int(Cat.PYTHON)) & (x.py_id >= 0))
    if not len(frames):
        return
    rank = rank_of_events(trace)
    ids = keyed(rank[frames], x.py_id[frames])
    order = np.argsort(ids, kind="stable")
    wanted = keyed(rank[frames], x.py_parent[frames])
    pos = np.clip(np.searchsorted(ids[order], wanted), 0, len(frames) - 1)
    found = (wanted >= 0) & (ids[order][pos] == wanted)
    named = np.where(found, frames[order][pos], -1)
    time_parent = parent[frames].copy()
    agrees = _is_ancestor(parent, named, time_parent)
    is_frame = (time_parent >= 0) & (x.cat[np.maximum(time_parent, 0)] == int(Cat.PYTHON))
    root_by_id = (x.py_parent[frames] < 0) & is_frame
    parent[frames] = np.where(found & ~agrees, named, np.where(root_by_id, -1, time_parent))


def _is_ancestor(parent: np.ndarray, candidate: np.ndarray, start: np.ndarray) -> np.ndarray:
    """For each k: is candidate[k] equal to start[k] or one of its ancestors?"""
    cur = start.copy()
    hit = (candidate >= 0) & (cur == candidate)
    live = cur >= 0
    while live.any():
        cur[live] = parent[cur[live]]
        live = cur >= 0
        hit |= live & (cur == candidate)
    return hit


def depth_of(parent: np.ndarray) -> np.ndarray:
    """Tree depth of every node (0 for roots), by jumping to parents level by level."""
    depth = np.zeros(len(parent), np.int32)
    cur = parent.copy()
    live = cur >= 0
    while live.any():
        depth[live] += 1
        cur[live] = parent[cur[live]]
        live = cur >= 0
    return depth


def children_total(parent: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Sum of values over each node's direct children."""
    out = np.zeros(len(parent), values.dtype)
    has = parent >= 0
    np.add.at(out, parent[has], values[has])
    return out


def subtree_sum(parent: np.ndarray, values: np.ndarray) -> np.ndarray:
    """values[i] plus the values of all descendants of i."""
    total = values.astype(np.float64 if values.dtype.kind == "f" else np.int64, copy=True)
    depth = depth_of(parent)
    for d in range(int(depth.max(initial=0)), 0, -1):
        level = np.flatnonzero(depth == d)
        np.add.at(total, parent[level], total[level])
    return total
