"""Timeline lanes: rows per track and depth, and what each terminal cell of a row holds.

lane_cells() is the pure, cached summary the timeline draws from: for a time window cut
into equal buckets (one terminal cell each, bucket sizes quantized as Perfetto does, see
quantize()) it says, per cell, whether it is empty, covered by a single event (and how
much of it), or holds several events (a merged, busy cell).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ..analysis import Analysis
from ..cats import Cat
from ..tracks import lane_titles, package_of

EMPTY = -1
BUSY = -2


@dataclass(frozen=True, eq=False)
class Row:
    """One drawable row: a depth of one track's stack."""

    track: int
    depth: int
    events: np.ndarray  # event indices, sorted by start; they never overlap on one row
    starts: np.ndarray
    ends: np.ndarray
    prefix: np.ndarray  # cumulative durations, for coverage of merged cells


@dataclass
class Cells:
    """Per cell: the event shown (or EMPTY/BUSY), how many events touch it, the covered fraction."""

    event: np.ndarray
    count: np.ndarray
    cover: np.ndarray
    head: np.ndarray  # fraction of the cell before a lone event starts (for eighth blocks)
    tail: np.ndarray  # fraction of the cell after a lone event ends


class LaneIndex:
    """Rows of every shown track, from the display nesting; each Row is made the first time it is asked for (the
    screen shows a few dozen), so a trace of 200,000 lanes opens in time linear in their number, at numpy's pace."""

    def __init__(self, analysis: Analysis) -> None:
        lanes = analysis.lane_arrays  # stored in the cache: a re-opened trace only maps it
        self.analysis = analysis
        self.rows = _Rows(lanes)
        self.t_min, self.t_max = lanes.t_min, lanes.t_max
        tracks, deepest = np.asarray(lanes.track, np.int64), np.asarray(lanes.row, np.int64) + 1
        self.depths: dict[int, int] = {}
        if len(tracks):
            most = np.zeros(int(tracks.max()) + 1, np.int64)
            np.maximum.at(most, tracks, deepest)
            shown = np.flatnonzero(most)
            self.depths = dict(zip(shown.tolist(), most[shown].tolist(), strict=True))
        self.runs = first_frames(analysis.trace)  # what each thread runs, to title its lane (tracks.lane_titles)
        self.titles = lane_titles([t for t in analysis.trace.tracks if t.kind != "meta" and t.events], self.runs)

    def row(self, track: int, depth: int) -> Row | None:
        return self.rows.get((track, depth))

    def find(self, track: int, depth: int, t: int) -> int:
        """The event on a row covering time t, else -1."""
        r = self.rows.get((track, depth))
        if r is None:
            return -1
        k = int(np.searchsorted(r.starts, t, side="right")) - 1
        return int(r.events[k]) if k >= 0 and r.ends[k] >= t else -1


class _Rows(Mapping[tuple[int, int], Row]):
    """(track, depth) -> Row, each made on first use from the lane arrays (plain arrays: a memmap's slices are slow)."""

    def __init__(self, lanes) -> None:
        self.order, self.starts, self.ends, self.prefix = (
            np.asarray(a) for a in (lanes.order, lanes.starts, lanes.ends, lanes.prefix)
        )
        self.cuts = np.asarray(lanes.cuts)
        keys = zip(lanes.track.tolist(), lanes.row.tolist(), strict=True)
        self.at = {key: k for k, key in enumerate(keys)}
        self.made: dict[tuple[int, int], Row] = {}

    def __getitem__(self, key: tuple[int, int]) -> Row:
        row = self.made.get(key)
        if row is None:
            k = self.at[key]
            a, b = int(self.cuts[k]), int(self.cuts[k + 1])
            row = Row(key[0], key[1], self.order[a:b], self.starts[a:b], self.ends[a:b], self.prefix[a : b + 1])
            row = self.made.setdefault(key, row)  # one Row per key, whichever thread made it first
        return row

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return iter(self.at)

    def __len__(self) -> int:
        return len(self.at)


def first_frames(trace, look: int = 50) -> dict[int, str]:
    """Per track, its first Python frame in a package (`tqdm/_monitor.py(60): run`, past the standard library's
    `threading.py` bootstrap), among its first `look` frames; tracks without one left out."""
    x = trace.x
    frames = np.flatnonzero(x.cat == int(Cat.PYTHON))
    if not len(frames):
        return {}
    frames = frames[np.lexsort((x.ts[frames], x.track[frames]))]
    tracks, first = np.unique(x.track[frames], return_index=True)
    out = {}
    for t, k in zip(tracks.tolist(), first.tolist(), strict=True):
        names = (trace.name_of(int(i)) for i in frames[k : k + look] if x.track[i] == t)
        found = next((n for n in names if package_of(n)), "")
        if found:
            out[int(t)] = found
    return out


def quantize(span_ns: float, width: int) -> int:
    """The smallest bucket (ns per cell) of the form m * 2**k, m in 4..7, that shows span_ns in width cells.

    Quarter steps between powers of two waste at most a fifth of the screen on a fit, and
    zooming by 2 keeps buckets on the same grid, so summaries are reused across frames.
    """
    per_cell = max(span_ns / max(width, 1), 1.0)
    if per_cell <= 4:
        return int(np.ceil(per_cell))
    k = int(np.floor(np.log2(per_cell))) - 2
    mantissa = int(np.ceil(per_cell / (1 << k)))
    return mantissa << k


def lane_cells(row: Row, t0: int, bucket: int, width: int) -> Cells:
    """What each of width cells starting at t0 (bucket ns each) holds on this row."""
    return _cached(row, int(t0), int(bucket), int(width))


@lru_cache(maxsize=4096)
def _cached(row: Row, t0: int, bucket: int, width: int) -> Cells:
    edges = t0 + bucket * np.arange(width + 1, dtype=np.int64)
    lo = np.searchsorted(row.ends, edges[:-1], side="right")
    hi = np.searchsorted(row.starts, edges[1:], side="left")
    count = np.maximum(hi - lo, 0)
    # zero-length events exactly on an edge still touch the cell
    covered = (row.prefix[np.maximum(hi, lo)] - row.prefix[lo]).astype(np.float64)
    first, last = np.minimum(lo, len(row.events) - 1), np.maximum(hi - 1, 0)
    some = count > 0
    head_cut = np.where(some, np.maximum(edges[:-1] - row.starts[first], 0), 0)
    tail_cut = np.where(some, np.maximum(row.ends[last] - edges[1:], 0), 0)
    covered = np.clip((covered - head_cut - tail_cut) / bucket, 0.0, 1.0)
    event = np.where(count == 1, row.events[first], np.where(count > 1, BUSY, EMPTY))
    head = np.where(count == 1, np.clip((row.starts[first] - edges[:-1]) / bucket, 0, 1), 0.0)
    tail = np.where(count == 1, np.clip((edges[1:] - row.ends[first]) / bucket, 0, 1), 0.0)
    return Cells(event.astype(np.int64), count, covered, head, tail)


class Line(NamedTuple):
    """One screen line of the timeline: a process header or a row of a track (a tuple: 400,000 of them are made
    in a fraction of what as many dataclasses take)."""

    kind: str  # "process" or "row"
    label: str
    track: int = -1
    depth: int = 0


def layout_lines(lanes: LaneIndex, collapsed: frozenset[int] = frozenset()) -> list[Line]:
    """Process headers, then each track's rows (one when collapsed), in track order."""
    tracks = [t for t in lanes.analysis.trace.tracks if t.id in lanes.depths and t.kind != "meta"]
    # GPU streams first: they are few rows, and their gaps are what a reader looks for first.
    tracks.sort(key=lambda t: (t.rank, 0 if t.is_gpu else 1, t.order))
    lines: list[Line] = []
    process = None
    titles = lanes.titles
    for t in tracks:
        if (t.rank, t.process) != process:
            process = (t.rank, t.process)
            lines.append(Line("process", t.process))
        depth = 1 if t.id in collapsed else lanes.depths[t.id]
        for d in range(depth):
            lines.append(Line("row", titles[t.id][d] if d < 2 else "", t.id, d))
    return lines
