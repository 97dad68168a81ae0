"""nesting.nest_track and nesting.nearest_kept compiled (numba): the rule walked once, as torch walks it, with no
array per pass.

torch's EventList._populate_cpu_children (torch/autograd/profiler_util.py) keeps a stack of open events per
thread, visited by (start, -end): while the top cannot hold the next event (it starts at or after the top's end,
or ends after it) the top is popped; the next event is the top's child and is pushed. This is that loop, writing
what nest_track's passes of numpy find: the parent, the depth (the stack's size), the killer (the event that
popped an event by overlapping it partly), the end of the subtree (where the event was popped), and the display
row (nesting._walked_rows' rule: one below the parent, or down to the first row free at the start).

Used only where numba is already imported (the compiled scan read the trace: nesting.py asks): the scan's
process has paid numba's import, and the loop, with 5 arrays of output, skips nest_track's few dozen temporary
arrays of n, whose first touch is most of its time on a large trace. tests/model/test_nesting_compiled.py holds the two
equal on every sample and on drawn tracks of ties, zero durations and partial overlaps.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy")
def nest_track(s: np.ndarray, e: np.ndarray):  # pragma: no cover - compiled: run by the tests through numba
    n = len(s)
    parent = np.full(n, -1, np.int64)
    depth = np.zeros(n, np.int32)
    row = np.zeros(n, np.int32)
    killer = np.full(n, -1, np.int64)
    span_end = np.full(n, n, np.int64)
    stack = np.empty(64, np.int64)
    row_end = np.empty(64, np.int64)  # per display row: the latest end of the events placed on it
    top = 0
    rows = 0
    for k in range(n):
        start, end = s[k], e[k]
        while top:
            j = stack[top - 1]
            if start >= e[j]:  # ended before k starts: closed
                span_end[j] = k
            elif end > e[j]:  # k overlaps it partly: it dies, k tries the next one out
                span_end[j] = k
                killer[j] = k
            else:
                break
            top -= 1
        depth[k] = top
        r = 0
        if top:
            parent[k] = stack[top - 1]
            r = row[stack[top - 1]] + 1
        while r < rows and row_end[r] > start:
            r += 1
        if r == rows:
            if rows == len(row_end):
                row_end = _grown(row_end)
            row_end[r] = end
            rows += 1
        elif end > row_end[r]:
            row_end[r] = end
        row[k] = r
        if top == len(stack):
            stack = _grown(stack)
        stack[top] = k
        top += 1
    return parent, depth, row, killer, span_end


@nb.njit(cache=True, nogil=True, inline="always")
def _grown(a: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    out = np.empty(2 * len(a), a.dtype)
    out[: len(a)] = a
    return out


@nb.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy")
def nearest_kept(parent: np.ndarray, keep: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """nesting.nearest_kept: each node's nearest kept ancestor (-1: none), found by climbing from each node to the
    first kept ancestor or to one whose answer is known, which every node climbed through then shares (each
    is left out, so its nearest kept ancestor is the same). Every node is climbed through once: no level sort."""
    n = len(parent)
    out = np.full(n, -2, parent.dtype)  # -2: not known yet
    path = np.empty(64, np.int64)
    for k in range(n):
        if out[k] != -2:
            continue
        top = 0
        j = k
        while True:
            p = parent[j]
            if p < 0:
                found = -1
                break
            if keep[p]:
                found = p
                break
            if out[p] != -2:
                found = out[p]
                break
            if top == len(path):
                path = _grown(path)
            path[top] = p
            top += 1
            j = p
        out[k] = found
        for m in range(top):
            out[path[m]] = found
    return out


def warm() -> None:
    """Compile each function here for the types the nesting passes them (or load it from numba's cache)."""
    nest_track(np.arange(2), np.arange(2) + 1)
    nearest_kept(np.array([-1, 0], np.int32), np.array([True, False]))


COMPILED = (nest_track, nearest_kept)  # what warm() compiles: numba's cache holds each, or a first use compiles
