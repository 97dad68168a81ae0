"""The active-memory timeline as terminal cells: allocations stacked in the order they were made, over time.

torch's Active Memory Timeline draws each live allocation as a band on top of the ones made before it; when
one is freed, those above it move down. Here the view is width columns of bucket ns (the timeline's
viewport, model/view/viewport.py) and height rows of bytes. Each column shows the memory after one entry
of its time: the one with the most bytes live (a short peak never disappears when zoomed out), or the
entry in force when none falls in it. Each cell is the allocation whose band covers the middle of the
cell's bytes; the top cell of a column is drawn partly filled (eighths) to the stack's height.
The rows' scale is the most bytes live in the window, so zooming in on a quiet stretch fills the height.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .history import Allocations, Curves

EMPTY = -1


@dataclass(frozen=True)
class Grid:
    """cells[row, col] is an allocation's row in Allocations, or EMPTY; row 0 is the bottom."""

    cells: np.ndarray
    entry: np.ndarray  # per column the entry shown (-1: none: before the history, or after it)
    live: np.ndarray  # per column the bytes live then
    top: np.ndarray  # per column the allocation on top of the stack (EMPTY: none)
    top_fill: np.ndarray  # per column how much of the top cell the stack fills (0..1)
    top_row: np.ndarray  # per column the row of the top cell (-1: an empty column)
    scale: int  # the bytes the height stands for

    @property
    def height(self) -> int:
        return self.cells.shape[0]

    @property
    def width(self) -> int:
        return self.cells.shape[1]


def column_entries(times: np.ndarray, live: np.ndarray, t0: int, bucket: int, width: int) -> np.ndarray:
    """Per column the entry it shows: the most bytes live among its entries, else the one in force (-1: none,
    left of the first entry or right of the last)."""
    edges = t0 + bucket * np.arange(width + 1, dtype=np.int64)
    lo = np.searchsorted(times, edges[:-1], side="left")
    hi = np.searchsorted(times, edges[1:], side="left")
    out = lo - 1
    for c in np.flatnonzero(hi > lo).tolist():
        out[c] = lo[c] + int(np.argmax(live[lo[c] : hi[c]]))
    if len(times):
        out[edges[:-1] > times[-1]] = -1  # after the last entry: the snapshot was taken there
    return out


def grid(allocs: Allocations, curves: Curves, times: np.ndarray, t0: int, bucket: int, width: int, height: int) -> Grid:
    """The cells of a window of the timeline (width columns from t0, bucket ns each) in height rows."""
    entries = column_entries(times, curves.live, t0, bucket, width)
    shown = entries >= 0
    live = np.where(shown, curves.live[np.maximum(entries, 0)], 0)
    scale = int(live.max()) if shown.any() else 1
    scale = max(scale, 1)
    cells = np.full((height, width), EMPTY, np.int64)
    top = np.full(width, EMPTY, np.int64)
    fill = np.zeros(width)
    top_row = np.full(width, -1, np.int64)
    row_bytes = scale / height
    mids = (np.arange(height) + 0.5) * row_bytes
    cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for c in np.flatnonzero(shown).tolist():
        e = int(entries[c])
        if e not in cache:
            rows = np.flatnonzero(allocs.alive_at(e))
            cache[e] = (rows, np.cumsum(allocs.size[rows]))
        rows, cum = cache[e]
        if not len(rows):
            continue
        k = np.searchsorted(cum, mids, side="right")
        cells[:, c] = np.where(k < len(rows), rows[np.minimum(k, len(rows) - 1)], EMPTY)
        total = float(cum[-1])
        r = min(int(total // row_bytes), height - 1)
        top[c], top_row[c] = rows[-1], r
        fill[c] = min(total / row_bytes - r, 1.0)
        cells[r, c] = EMPTY  # the top cell is drawn from top/top_fill
    return Grid(cells, entries, live, top, fill, top_row, scale)


def allocation_at(g: Grid, col: int, row: int) -> int:
    """The allocation drawn at a cell (EMPTY: none); the top cell's when the stack reaches into it."""
    if not (0 <= col < g.width and 0 <= row < g.height):
        return EMPTY
    if row == g.top_row[col] and g.top_fill[col] > 0:
        return int(g.top[col])
    return int(g.cells[row, col])


def stacked_at(allocs: Allocations, entry: int) -> np.ndarray:
    """The allocations live after an entry, bottom of the stack first."""
    return np.flatnonzero(allocs.alive_at(entry))


def neighbour(allocs: Allocations, entry: int, current: int, step: int) -> int:
    """The allocation above (step 1) or below (step -1) current in the stack after entry; the bottom or the
    top one when current is not in it (EMPTY: nothing live)."""
    rows = stacked_at(allocs, entry)
    if not len(rows):
        return EMPTY
    where = np.flatnonzero(rows == current)
    if not len(where):
        return int(rows[0] if step > 0 else rows[-1])
    k = int(where[0]) + step
    return int(rows[min(max(k, 0), len(rows) - 1)])


@dataclass(frozen=True)
class Span:
    """A named stretch of the history the program annotated (`external_annotations`: Optimizer.step, ...)."""

    name: str
    start_ns: int
    end_ns: int


def annotation_spans(annotations: list[dict], device: int) -> list[Span]:
    """The device's START/END annotations paired by name in order (an END without its START is left out)."""
    open_: dict[str, list[int]] = {}
    out = []
    for a in annotations:
        t, name = a.get("time_us"), str(a.get("name", ""))
        if a.get("device", device) != device or not isinstance(t, (int, float)):
            continue
        if a.get("stage") == "START":
            open_.setdefault(name, []).append(int(t * 1000))
        elif a.get("stage") == "END" and open_.get(name):
            out.append(Span(name, open_[name].pop(0), int(t * 1000)))
    return sorted(out, key=lambda s: s.start_ns)


def span_cells(spans: list[Span], t0: int, bucket: int, width: int) -> np.ndarray:
    """Per column the span it overlaps (-1: none; of two, the later started: a short span inside a long one
    still shows)."""
    starts = t0 + bucket * np.arange(width, dtype=np.int64)
    out = np.full(width, -1, np.int64)
    for k, s in enumerate(spans):
        out[(starts + bucket > s.start_ns) & (starts < s.end_ns)] = k
    return out
