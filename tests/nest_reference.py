"""The exact nesting walk, one event at a time: the reference the vectorized nesting is tested against.

This is torch's EventList._populate_cpu_children stack (plus display rows), as tracetui ran it
before nesting was vectorized. It is slow (a Python loop per event) and lives here only as an oracle.
"""

from __future__ import annotations

import numpy as np


def nest_walk(ts: np.ndarray, end: np.ndarray, track: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """parent and display row of every event, by the stack walk."""
    n = len(ts)
    order = np.lexsort((-end, ts, track))
    parent = np.full(n, -1, np.int64)
    row = np.zeros(n, np.int32)
    starts, ends, tracks = ts[order].tolist(), end[order].tolist(), track[order].tolist()
    stack: list[int] = []
    row_end: list[int] = []
    rows = [0] * n
    current = None
    for k, (s, e, t) in enumerate(zip(starts, ends, tracks, strict=True)):
        if t != current:
            current, stack, row_end = t, [], []
        while stack and (s >= ends[stack[-1]] or e > ends[stack[-1]]):
            stack.pop()
        r = 0
        if stack:
            parent[order[k]] = order[stack[-1]]
            r = rows[stack[-1]] + 1
        while r < len(row_end) and row_end[r] > s:
            r += 1
        if r == len(row_end):
            row_end.append(e)
        else:
            row_end[r] = max(row_end[r], e)
        rows[k] = r
        stack.append(k)
    row[order] = rows
    return parent, row
