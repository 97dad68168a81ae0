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
