"""Nesting by time containment on each row, with torch's tie-breaks, plus display rows.

Rules (the same as torch's EventList._populate_cpu_children):
- events of one track are visited by (start asc, end desc), so of two events starting
  together the longer is the parent;
- an event is a child of the innermost open event that starts before it ends and ends
  no earlier than it ends; a zero-duration event never contains anything;
- an event that partially overlaps the open one closes it and tries the next outer one.
Display rows: a child goes one row below its parent; if that row is still busy (a partial
overlap), it moves down to the next free row, so overlapping events are all kept.

How, without a loop per event (nest_track): in visiting order, event j is still open when k
arrives iff e_j > s_k and no event between them partially overlapped j (s_m < e_j < e_m), which
would have popped it ("dead"). So k's depth is the number of earlier events open at s_k, less the
dead ones; its parent is the latest earlier event one level up; both are a few sorted searches.
Dead events are found with range maxima over each event's span. Only events that start while a
dead event is still open (rare: partial overlaps) may be pushed down a row, and only they are
placed one by one; their subtrees follow them down.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, partial

import numpy as np

from .cats import Cat
from .sets import distinct
from .threads import side_by_side, thread_count
from .trace import keyed, rank_of_events, ranks_at

_BLOCK = 32
_REDUCE_SPANS = 64  # spans adding up to at most this many times n are reduced directly
_TS_BITS = 44  # a (track, start) sort key: starts within 2**44 ns (4.9 h) of each other
_LOW = np.iinfo(np.int64).min


@dataclass
class Nesting:
    """parent[i] (-1 for roots or unnested), the display row and the depth of every event."""

    parent: np.ndarray
    row: np.ndarray
    order: np.ndarray  # the visiting order (track, start, -end) of the nested events
    depth: np.ndarray  # levels below a root, by time
    time_parent: np.ndarray  # the parents by time alone (parent may be re-hung since)
    killed_by: np.ndarray  # per event: the event that partially overlapped it while it was open, closing it (-1: none)
    pos: np.ndarray  # each event's position in order (-1: not nested)
    span_end: np.ndarray  # the position after the last event of its subtree by time


PIECE_EVENTS = 250_000  # a track longer than this is nested in pieces, side by side (threads.py)


def nest(
    ts: np.ndarray, end: np.ndarray, track: np.ndarray, mask: np.ndarray | None = None, order: np.ndarray | None = None
) -> Nesting:
    """Nest the events selected by mask (all when None) within each track (order: their visiting order, when known:
    a nesting's order filtered to a subset of its events is the subset's).

    A long track is cut into pieces where nothing is open (every earlier event has ended by the next start), else
    where only the same few events are open (a root frame that holds the thread, see _Wrapped): the pieces nest
    alone exactly as the whole would, so they are nested side by side in threads. Short tracks are nested together,
    laid end to end in time (see _end_to_end), so many tracks cost no more than one.
    """
    n = len(ts)
    if order is None:
        order = visiting_order(ts, end, track, np.arange(n) if mask is None or mask.all() else np.flatnonzero(mask))
    (s, e, t), out = side_by_side(lambda: (ts[order], end[order], track[order]), lambda: _Out(len(order), n))
    runs, wrapped = _pieces(s, e, np.concatenate([[0], np.flatnonzero(np.diff(t)) + 1, [len(order)]]))

    def piece(lo: int, hi: int) -> None:  # writes only positions lo:hi (and the events there)
        for a, b, ps, pe in _end_to_end(s, e, t, lo, hi):
            p, d, r, killer, end_pos = nest_track(ps, pe)
            out.parent_pos[a:b] = np.where(p >= 0, p + a, -1)
            out.depth_pos[a:b], out.row_pos[a:b] = d, r
            dead = np.flatnonzero(killer >= 0)  # the rest stay -1
            out.killed_by[order[a + dead]] = order[a + killer[dead]]
            out.span_end[order[a:b]] = end_pos + a

    jobs: list[Callable[[], None]] = [partial(piece, a, b) for a, b in runs]
    for w in wrapped:
        jobs += [partial(w.outer, s, e, order, out)]
        jobs += [partial(piece, a, b) for a, b in zip(w.cuts[:-1], w.cuts[1:], strict=True)]
    side_by_side(*jobs)
    for w in wrapped:
        if not w.hang(out):  # a wrapper was cut short before the pieces (not seen in real traces): nest it whole
            piece(w.a, w.b)
    parent, (pos, row, depth) = side_by_side(lambda: _parents_of(out, order, n), lambda: _levels_of(out, order, n))
    return Nesting(parent, row, order.astype(np.int32), depth, parent, out.killed_by, pos, out.span_end)


def _parents_of(out: _Out, order: np.ndarray, n: int) -> np.ndarray:
    """Each event's parent (-1: none, or not nested), from the pieces' positions. Event indices fit in 32 bits: half
    the memory of the viewer's arrays."""
    parent = np.full(n, -1, np.int32)
    has = out.parent_pos >= 0
    parent[order[has]] = order[out.parent_pos[has]]
    return parent


def _levels_of(out: _Out, order: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each event's position in the visiting order (-1: not nested), display row and depth, from the pieces'."""
    pos = np.full(n, -1, np.int32)
    pos[order] = np.arange(len(order))
    row = np.zeros(n, np.int32)
    depth = np.zeros(n, np.int32)
    row[order], depth[order] = out.row_pos, out.depth_pos
    return pos, row, depth


class _Out:
    """What the pieces write, each into its own positions: by position in the visiting order, and by event."""

    def __init__(self, positions: int, n: int) -> None:
        self.parent_pos = np.full(positions, -1, np.int64)
        self.depth_pos = np.zeros(positions, np.int32)
        self.row_pos = np.zeros(positions, np.int32)
        self.killed_by = np.full(n, -1, np.int32)
        self.span_end = np.full(n, -1, np.int32)


@dataclass
class _Wrapped:
    """A long track cut where the same events, and only they, are open (its wrappers: a root frame, a step...).

    Positions cuts[0]:cuts[-1] are pieces between the cuts, each nested alone, then hung under the innermost
    wrapper (its depth and row below it); the rest (the head before the first cut, the tail from the last one,
    wrappers among them) is nested alone too, as none of its events holds, or overlaps, an event of the pieces.
    """

    a: int
    b: int
    cuts: list[int]
    wrappers: np.ndarray  # their positions: all in the head
    killed_by: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # each wrapper's killer (-1: none)

    def outer(self, s: np.ndarray, e: np.ndarray, order: np.ndarray, out: _Out) -> None:
        """Nest the head and the tail together (positions a:cuts[0] and cuts[-1]:b)."""
        where = np.r_[self.a : self.cuts[0], self.cuts[-1] : self.b]
        p, d, r, killer, _ = nest_track(s[where], e[where])
        out.parent_pos[where] = np.where(p >= 0, where[np.maximum(p, 0)], -1)
        out.depth_pos[where], out.row_pos[where] = d, r
        killed_by = np.where(killer >= 0, where[np.maximum(killer, 0)], -1)
        out.killed_by[order[where]] = np.where(killed_by >= 0, order[np.maximum(killed_by, 0)], -1)
        closes = self.a + np.searchsorted(s[self.a : self.b], e[where], side="left")  # among every position
        ends = np.where(killed_by >= 0, np.minimum(killed_by, closes), closes)
        out.span_end[order[where]] = np.maximum(ends, where + 1)
        self.killed_by = killed_by[np.searchsorted(where, self.wrappers)]

    def hang(self, out: _Out) -> bool:
        """Hang the pieces under the innermost wrapper; False when a wrapper was cut short (killed) before them."""
        if ((self.killed_by >= 0) & (self.killed_by < self.cuts[-1])).any():
            return False
        inner = int(self.wrappers[-1])  # the open events form a chain: the last to start is the innermost
        lo, hi = self.cuts[0], self.cuts[-1]
        roots = lo + np.flatnonzero(out.parent_pos[lo:hi] < 0)
        out.parent_pos[roots] = inner
        out.depth_pos[lo:hi] += out.depth_pos[inner] + 1
        out.row_pos[lo:hi] += out.row_pos[inner] + 1
        return True


def _pieces(s: np.ndarray, e: np.ndarray, tracks: np.ndarray) -> tuple[list[tuple[int, int]], list[_Wrapped]]:
    """The runs of positions to nest alone: runs of whole tracks of up to PIECE_EVENTS events together, and inside a
    track longer than PIECE_EVENTS, cuts where nothing is open (a start at or after every earlier end), near equal
    shares, one per thread or so; a long track with no such cut is cut where only its wrappers are open, if it can
    be (its jobs are its _Wrapped's)."""
    bounds = tracks.tolist()
    runs: list[tuple[int, int]] = []
    wrapped: list[_Wrapped] = []
    start = 0  # where the run of short tracks being gathered starts
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        if b - a <= PIECE_EVENTS:  # a short track: with the ones before it, unless that makes the run long
            if b - start > PIECE_EVENTS and a > start:
                runs.append((start, a))
                start = a
            continue
        if a > start:
            runs.append((start, a))
        start = b
        want = min(thread_count(), (b - a) // PIECE_EVENTS)
        free = a + 1 + np.flatnonzero(s[a + 1 : b] >= np.maximum.accumulate(e[a : b - 1])) if want > 1 else []
        w = _wrapped(s, e, a, b, want) if want > 1 and not len(free) else None
        if w is not None:
            wrapped.append(w)
            continue
        cuts = [a, b]
        if len(free):
            targets = a + (b - a) * np.arange(1, want) // want
            cuts += distinct(free[np.clip(np.searchsorted(free, targets), 0, len(free) - 1)]).tolist()
        cuts = sorted(set(cuts))
        runs += list(zip(cuts[:-1], cuts[1:], strict=True))
    if bounds[-1] > start:
        runs.append((start, bounds[-1]))
    return runs, wrapped


def _wrapped(s: np.ndarray, e: np.ndarray, a: int, b: int, want: int) -> _Wrapped | None:
    """Cuts of positions a:b where the same events, and only they, are open (None: no such cuts): near the shares
    of `want` jobs, the head and the tail making one of them."""
    ss, ee = s[a:b], e[a:b]
    positive = ee > ss
    open_at = _open_before(ss, np.sort(ee[positive]), positive)  # dead or alive: a dead one is never a wrapper
    margin = max((b - a) // (4 * want), 1)
    inner = np.arange(margin, b - a - margin)
    if not len(inner):
        return None
    least = int(open_at[inner].min())
    fit = inner[open_at[inner] == least]
    targets = (b - a) * (2 * np.arange(want) + 1) // (2 * want)
    cuts = distinct(fit[np.clip(np.searchsorted(fit, targets), 0, len(fit) - 1)])
    if len(cuts) < 2:
        return None
    first, last = int(cuts[0]), int(cuts[-1])
    wrappers = np.flatnonzero(positive[:first] & (ee[:first] > ss[last]))  # open at every cut
    if len(wrappers) != least:  # some cut has another event open: the pieces would not nest alone
        return None
    return _Wrapped(a, b, (a + cuts).tolist(), a + wrappers)


def _end_to_end(s: np.ndarray, e: np.ndarray, t: np.ndarray, a: int, b: int):
    """Positions a:b as runs that nest alone: (start, stop, their starts, their ends).

    Several tracks in a:b are shifted in time to lie one after the other, a nanosecond apart, so nesting them
    together is nesting each alone (no event of one can hold, or overlap, one of another); where the shifted times
    would not fit in 62 bits, each track is its own run.
    """
    if t[a] == t[b - 1]:
        return [(a, b, s[a:b], e[a:b])]
    first = np.concatenate([[a], a + 1 + np.flatnonzero(np.diff(t[a:b])), [b]])
    low = s[first[:-1]]  # in visiting order, a track's first event starts first
    high = np.maximum.reduceat(e[a:b], first[:-1] - a)
    span = np.maximum(high, low) - low + 1
    if float(span.astype(np.float64).sum()) >= 2.0**62:
        return [(p, q, s[p:q], e[p:q]) for p, q in zip(first[:-1].tolist(), first[1:].tolist(), strict=True)]
    shift = np.repeat(np.cumsum(span) - span - low, np.diff(first))
    return [(a, b, s[a:b] + shift, e[a:b] + shift)]


def visiting_order(ts: np.ndarray, end: np.ndarray, track: np.ndarray | None, idx: np.ndarray) -> np.ndarray:
    """idx (sorted event indices) sorted by (track, start, -end), then index: one stable sort of a (track, start)
    key, which runs in about linear time on events written in time order, then the few ties by their ends.
    track None: all on one, (start, -end, index), the order of torch's event list."""
    if not len(idx):
        return idx
    if track is None:
        key = ts[idx]
    else:
        whole = len(idx) == len(ts)  # every event (idx is sorted and unique): no gathers to pick them
        by_track = _by_track(track if whole else track[idx])
        if by_track is not None:
            idx = by_track if whole else idx[by_track]
        starts, tracks = ts[idx], track[idx]
        t0, span = int(starts.min()), int(starts.max()) - int(starts.min())
        if span >= 1 << _TS_BITS or int(tracks.max()) >= 1 << (62 - _TS_BITS):
            return idx[np.lexsort((-end[idx], starts, tracks))]
        key = tracks.astype(np.int64) << _TS_BITS
        key |= starts - t0
        del starts, tracks
    perm = np.argsort(key, kind="stable")
    order, key = idx[perm], key[perm]
    tie = np.flatnonzero(key[1:] == key[:-1])
    if len(tie):
        at = distinct(np.concatenate((tie, tie + 1)))  # every position of a tied group: the groups are runs
        order[at] = order[at][np.lexsort((-end[order[at]], key[at]))]
    return order


def _by_track(tracks: np.ndarray) -> np.ndarray | None:
    """The positions in track order, each track's in their order (a radix sort: tracks fit in 16 bits), where there
    are several tracks (None: one, or too many): the events of a track are about in time order in a file, but the
    tracks are interleaved, which leaves the (track, start) sort short runs (the 1 GB tile's: 0.06-0.10 s -> 0.03 s
    with this first)."""
    low, high = int(tracks.min()), int(tracks.max())
    if low == high or high >= np.iinfo(np.int16).max:
        return None
    return np.argsort(tracks.astype(np.int16), kind="stable")


def nest_track(s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per event in visiting order: parent (a position, -1 for roots), depth, display row, killer
    (-1: none) and the end of its subtree (stack order is pre-order: a subtree is a run of positions).

    Compiled (nesting_compiled.py) where numba is already imported, the compiled scan having read the trace; else
    in passes of numpy (nest_track_passes): the same arrays either way."""
    compiled = _compiled()
    return compiled.nest_track(s, e) if compiled is not None else nest_track_passes(s, e)


def _compiled():
    """nesting_compiled where this process has imported numba already (its 0.3 s import paid), else None: a trace
    msgspec read never imports numba for the nesting."""
    if "numba" not in sys.modules:
        return None
    return compiled_module()


@cache
def compiled_module():
    """nesting_compiled (importing numba if it is not yet), or None where it does not import."""
    try:
        from . import nesting_compiled
    except Exception:  # noqa: BLE001 - numba built for another numpy, or broken: the passes nest it all
        return None
    return nesting_compiled


def nest_track_passes(
    s: np.ndarray, e: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """nest_track in passes of numpy: sorted searches and range maxima, no Python step per event."""
    n = len(s)
    if not n:
        empty = np.empty(0, np.int64)
        return empty, np.empty(0, np.int32), np.empty(0, np.int32), empty, empty
    positive = e > s
    by_end = np.argsort(e, kind="stable")
    closes = np.empty(n, np.int64)  # the first position starting at or after each end
    closes[by_end] = np.searchsorted(s, e[by_end], side="left")  # sorted queries: a linear merge
    killer = _killers(s, e, positive, closes)
    dead = np.flatnonzero(killer >= 0)
    depth = _open_at(closes, positive) - _dead_open(n, killer[dead], closes[dead])
    parent = _level_parent(depth, positive, np.argsort(depth.astype(np.int16), kind="stable"))
    # an event is popped when a later one starts at or after its end, or overlaps it partially
    span_end = np.maximum(closes, np.arange(1, n + 1))
    span_end[dead] = np.maximum(np.minimum(killer[dead], closes[dead]), dead + 1)
    row = _rows(parent, depth, dead, killer, closes, span_end)
    if row is None:  # partial overlaps chained past what passes settle quickly: placed one by one, as the rule reads
        row = _walked_rows(parent.tolist(), s.tolist(), e.tolist())
    return parent, depth, row, killer, span_end


def _open_before(s: np.ndarray, ends: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """Per event: earlier events (positive durations, ends sorted) still running at its start, dead or alive."""
    rank = np.cumsum(positive) - positive  # zero-duration events come after every longer one starting with them
    closed = np.searchsorted(ends, s, side="right")
    return (rank - closed).astype(np.int32)


def _open_at(closes: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """_open_before, from each event's close: an end is at or before the start at position k exactly when fewer
    than k + 1 starts come before that end (closes <= k), so counting closes replaces a search per start."""
    rank = np.cumsum(positive) - positive
    closed = np.cumsum(np.bincount(closes[positive], minlength=len(closes) + 1)[: len(closes)])
    return (rank - closed).astype(np.int32)


def _killers(s: np.ndarray, e: np.ndarray, positive: np.ndarray, closes: np.ndarray) -> np.ndarray:
    """Per event, the position of the first later event that partially overlaps it (-1: none).

    Only an event whose subtree span [j + 1, closes[j]) holds a later end can have one: the span maxima
    come from one reduceat when the spans add up to a few times n (stacks tens of levels deep), else from
    range-maximum queries; the few events that have one are then searched by halving their spans.
    """
    n = len(s)
    pos = np.arange(n)
    cand = np.flatnonzero(positive & (closes > pos + 1))
    out = np.full(n, -1, np.int64)
    if not len(cand):
        return out
    spans = int((closes[cand] - cand - 1).sum())
    table = _SpanMax(e) if spans <= _REDUCE_SPANS * n else _RangeMax(e)
    hit = table.query(cand + 1, closes[cand]) > e[cand]
    cand = cand[hit]
    if not len(cand):
        return out
    lo, hi = cand + 1, closes[cand]  # the first m in [lo, hi) with e[m] > e[j]: halve [lo, hi) on range maxima
    live = np.flatnonzero(hi > lo)
    while len(live):
        mid = (lo[live] + hi[live]) // 2
        left = table.query(lo[live], mid + 1) > e[cand[live]]
        hi[live], lo[live] = np.where(left, mid, hi[live]), np.where(left, lo[live], mid + 1)
        live = live[hi[live] > lo[live]]
    out[cand] = lo
    return out


class _SpanMax:
    """Maxima of v over [lo, hi) ranges by one np.maximum.reduceat: work in proportion to the ranges' lengths."""

    def __init__(self, v: np.ndarray) -> None:
        self.v = np.append(v, _LOW)  # hi may be len(v)

    def query(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        out = np.full(len(lo), _LOW, np.int64)
        some = np.flatnonzero(hi > lo)
        if len(some):
            bounds = np.empty(2 * len(some), np.int64)
            bounds[0::2], bounds[1::2] = lo[some], hi[some]
            out[some] = np.maximum.reduceat(self.v, bounds)[0::2]
        return out


def _dead_open(n: int, killed_at: np.ndarray, closes: np.ndarray) -> np.ndarray:
    """How many dead events are still running at each position: each counts on [killed at, its end)."""
    diff = np.zeros(n + 1, np.int32)
    np.add.at(diff, killed_at, 1)
    np.add.at(diff, closes, -1)
    return np.cumsum(diff[:-1]).astype(np.int32)


def _level_parent(depth: np.ndarray, positive: np.ndarray, by_level: np.ndarray) -> np.ndarray:
    """The latest earlier event one level up (only positive durations can be parents).

    by_level lists positions by (depth, position): level by level, each level's events are searched
    among the positive events of the level above (both sorted).
    """
    parent = np.full(len(depth), -1, np.int64)
    if not len(depth):
        return parent
    bounds = np.concatenate([[0], np.cumsum(np.bincount(depth[by_level].astype(np.int64)))]).tolist()
    for d in range(1, len(bounds) - 1):
        kids = by_level[bounds[d] : bounds[d + 1]]
        ups = by_level[bounds[d - 1] : bounds[d]]
        ups = ups[positive[ups]]
        if not len(kids) or not len(ups):
            continue
        k = np.searchsorted(ups, kids) - 1
        parent[kids] = np.where(k >= 0, ups[np.maximum(k, 0)], -1)
    return parent


MAX_PASSES = 32  # past this many passes _rows gives way to _walked_rows (a chain of partial overlaps: a pass each)
MAX_PAIRS_PER_EVENT = 8  # (dead event, event starting under it) pairs past which _rows walks at once (each pass
# reads every pair: 100 k events each overlapping the next 100 took 32 passes of 10 M pairs, 60 s)


def _rows(
    parent: np.ndarray,
    depth: np.ndarray,
    dead: np.ndarray,
    killer: np.ndarray,
    closes: np.ndarray,
    subtree_end: np.ndarray,
) -> np.ndarray | None:
    """Display rows: depth, plus the pushes down of events that start on a row a dead event still holds.

    An event's row is its parent's row + 1, or the next row no running dead event holds; its
    subtree (the positions until it closes or dies: stack order is pre-order) follows it down.
    Each row depends only on earlier events, so iterating "push down, let subtrees follow" until
    nothing moves reaches the same rows as placing events one by one. A pass settles at least one more event, and
    real traces need a few; a chain of events each overlapping the next partly needs one per event (its cost then
    grows as the square of their number: 60 s for 40 k). Past MAX_PASSES: None, and the caller walks them.
    """
    n = len(depth)
    if not len(dead):
        return depth.copy()
    lengths = closes[dead] - killer[dead]
    if int(lengths.sum()) > MAX_PAIRS_PER_EVENT * n:  # each pass reads every pair: deep overlaps, walked at once
        return None
    holder = np.repeat(dead, lengths)  # (holder, event) pairs: the event starts while the dead holder runs
    event = np.repeat(killer[dead] - np.cumsum(lengths) + lengths, lengths) + np.arange(len(holder))
    busy = np.flatnonzero(_dead_open(n, killer[dead], closes[dead]) > 0)
    at = np.searchsorted(busy, event)  # each pair's event among busy (every such event is busy)
    ups = np.maximum(parent[busy], 0)
    shifts = _Shifts(depth)
    last = np.zeros(len(busy), np.int32)
    for passes in range(len(busy) + 1):  # each pass settles at least the earliest unsettled event
        if passes == MAX_PASSES:
            return None
        start = np.where(parent[busy] >= 0, shifts.row(ups) + 1, 0)
        placed = start.copy()
        held = shifts.row(holder)
        while True:
            taken = held == placed[at]
            if not taken.any():
                break
            placed[at[taken]] += 1  # a row holds one running event, so no event repeats here
        bump = placed - start
        if np.array_equal(bump, last):
            break
        last = bump
        moved = np.flatnonzero(bump)
        shifts.set(busy[moved], subtree_end[busy[moved]], bump[moved])
    return shifts.rows(n)


def _walked_rows(parent: list[int], s: list[int], e: list[int]) -> np.ndarray:
    """The display rows of events in visiting order (parent: positions), placed one by one: the rule _rows applies in
    passes, a Python step per event whatever overlaps what. An event goes one row below its parent, or further down
    to the first row whose events have all ended by its start."""
    row_end: list[int] = []  # per row: the latest end of the events placed on it
    rows = [0] * len(s)
    for k, (up, start, end) in enumerate(zip(parent, s, e, strict=True)):
        r = rows[up] + 1 if up >= 0 else 0
        while r < len(row_end) and row_end[r] > start:
            r += 1
        if r == len(row_end):
            row_end.append(end)
        else:
            row_end[r] = max(row_end[r], end)
        rows[k] = r
    return np.array(rows, np.int32)


class _Shifts:
    """Rows as depth plus the pushes of moved subtrees ([start, end) += bump), read only where asked."""

    def __init__(self, depth: np.ndarray) -> None:
        self.depth = depth
        self.pos = np.empty(0, np.int64)
        self.total = np.empty(0, np.int64)

    def set(self, starts: np.ndarray, ends: np.ndarray, bumps: np.ndarray) -> None:
        pos = np.concatenate([starts, ends])
        order = np.argsort(pos, kind="stable")
        self.pos = pos[order]
        self.total = np.cumsum(np.concatenate([bumps, -bumps])[order])

    def row(self, where: np.ndarray) -> np.ndarray:
        k = np.searchsorted(self.pos, where, side="right")
        pushed = np.where(k > 0, self.total[np.maximum(k - 1, 0)], 0) if len(self.pos) else 0
        return self.depth[where] + pushed

    def rows(self, n: int) -> np.ndarray:
        shift = np.zeros(n + 1, np.int64)
        np.add.at(shift, self.pos, np.diff(self.total, prepend=0))
        return (self.depth + np.cumsum(shift[:-1])).astype(np.int32)


class _RangeMax:
    """Maxima of v over many [lo, hi) position ranges: blocks of 32 with a sparse table over the blocks."""

    def __init__(self, v: np.ndarray) -> None:
        n = len(v)
        nb = -(-n // _BLOCK)
        pad = np.full(nb * _BLOCK, _LOW, np.int64)
        pad[:n] = v
        blocks = pad.reshape(nb, _BLOCK)
        self.v, self.n = pad, n
        self.pre = np.maximum.accumulate(blocks, axis=1).ravel()
        self.suf = np.maximum.accumulate(blocks[:, ::-1], axis=1)[:, ::-1].ravel()
        self.table = [blocks.max(axis=1)]
        while 1 << len(self.table) <= nb:
            prev, half = self.table[-1], 1 << (len(self.table) - 1)
            self.table.append(np.maximum(prev[:-half], prev[half:]))

    def query(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        out = np.full(len(lo), _LOW, np.int64)
        some = hi > lo
        lb, hb = lo // _BLOCK, (hi - 1) // _BLOCK
        same = np.flatnonzero(some & (lb == hb))
        apart = np.flatnonzero(some & (lb < hb))
        out[apart] = np.maximum(self.suf[lo[apart]], self.pre[hi[apart] - 1])
        inner = apart[hb[apart] - lb[apart] > 1]
        if len(inner):
            a, b = lb[inner] + 1, hb[inner]  # whole blocks [a, b)
            k = np.floor(np.log2(b - a)).astype(np.int64)
            for level in np.flatnonzero(np.bincount(k)).tolist():
                sel = k == level
                t = self.table[level]
                m = np.maximum(t[a[sel]], t[b[sel] - (1 << level)])
                out[inner[sel]] = np.maximum(out[inner[sel]], m)
        length = hi[same] - lo[same]
        for offset in range(_BLOCK):
            live = length > offset
            if not live.any():
                break
            rows = same[live]
            out[rows] = np.maximum(out[rows], self.v[lo[rows] + offset])
        return out


def python_parents(trace, nesting: Nesting) -> None:
    """Correct time nesting with the Python frames' own ids where the two disagree (in nesting.parent).

    A frame stays under its time parent when the frame its "Python parent id" names is that
    parent or one of its ancestors (annotations and ops may sit between two frames). Otherwise
    time got it wrong, e.g. frames of several background threads reported on one (pid 0,
    tid 0) row, which time alone chains into one fake stack: the frame moves under the named
    frame, or becomes a root when its id says it has no parent frame. Rows stay as time placed them.
    """
    x, parent = trace.x, nesting.parent
    frames = np.flatnonzero((x.cat == int(Cat.PYTHON)) & (x.py_id >= 0))
    if not len(frames):
        return
    rank = rank_of_events(trace)
    ids = keyed(ranks_at(rank, frames), x.py_id[frames])
    time_parent = parent[frames].copy()
    up = np.maximum(time_parent, 0)
    up_id = np.where((time_parent >= 0) & (x.cat[up] == int(Cat.PYTHON)), keyed(ranks_at(rank, up), x.py_id[up]), -1)
    found, named = _find_ids(ids, frames, keyed(ranks_at(rank, frames), x.py_parent[frames]), time_parent, up_id)
    agrees = (named == time_parent) & (named >= 0)  # the frame its parent id names is its parent by time
    other = np.flatnonzero(~agrees)
    agrees[other] = _encloses(nesting, named[other], time_parent[other])
    is_frame = (time_parent >= 0) & (x.cat[np.maximum(time_parent, 0)] == int(Cat.PYTHON))
    root_by_id = (x.py_parent[frames] < 0) & is_frame
    parent[frames] = np.where(found & ~agrees, named, np.where(root_by_id, -1, time_parent))


def _find_ids(
    ids: np.ndarray, holders: np.ndarray, wanted: np.ndarray, guess: np.ndarray, guess_id: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per wanted id (-1: none): is it among ids, and the holder of its first appearance (-1: none). guess is a
    likely holder of each (a frame's parent by time), guess_id its id: where ids are distinct and the guess holds
    the wanted id, it is the holder, and only the others are searched."""
    order = np.argsort(ids, kind="stable")
    ids, holders = ids[order], holders[order]
    named = np.full(len(wanted), -1, np.int64)
    rest = np.arange(len(wanted))
    if (ids[1:] > ids[:-1]).all():
        hit = (wanted >= 0) & (guess_id == wanted)
        named[hit] = guess[hit]
        rest = np.flatnonzero(~hit)
    some = wanted[rest]
    pos = np.clip(np.searchsorted(ids, some), 0, len(ids) - 1)
    named[rest] = np.where((some >= 0) & (ids[pos] == some), holders[pos], -1)
    return named >= 0, named


def _encloses(nesting: Nesting, candidate: np.ndarray, start: np.ndarray) -> np.ndarray:
    """For each k: is candidate[k] start[k] or one of its ancestors by time? (a subtree is a run of positions)"""
    ok = (candidate >= 0) & (start >= 0)
    c, t = np.maximum(candidate, 0), np.maximum(start, 0)
    pc, pt = nesting.pos[c], nesting.pos[t]
    return ok & (pc >= 0) & (pt >= 0) & (pc <= pt) & (pt < nesting.span_end[c])


def depth_of(parent: np.ndarray) -> np.ndarray:
    """Tree depth of every node (0 for roots), by pointer jumping: log2(depth) passes, not one per level."""
    depth = (parent >= 0).astype(np.int32)
    up = parent.astype(np.int32)
    live = np.flatnonzero(up >= 0)
    while len(live):
        hop = up[live]  # every live node still has an ancestor to jump to
        depth[live] += depth[hop]  # the right-hand side is read before writing: one synchronous jump
        up[live] = up[hop]
        live = live[up[live] >= 0]
    return depth


def nearest_kept(parent: np.ndarray, keep: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Each node's nearest ancestor among the kept ones (-1: none), level by level from the roots down (depth: one
    more than the parent's): a node's is its parent when that is kept, else its parent's. Compiled where numba is
    loaded (nesting_compiled.nearest_kept, no level sort), as nest_track is."""
    compiled = _compiled()
    return compiled.nearest_kept(parent, keep) if compiled is not None else nearest_kept_levels(parent, keep, depth)


def nearest_kept_levels(parent: np.ndarray, keep: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """nearest_kept in passes of numpy, one per level."""
    out = np.full(len(parent), -1, parent.dtype)
    for nodes in levels(depth)[1:]:
        up = parent[nodes]
        nodes, up = nodes[up >= 0], up[up >= 0]
        out[nodes] = np.where(keep[up], up, out[up])
    return out


def children_total(parent: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Sum of values over each node's direct children."""
    has = parent >= 0
    if values.dtype.kind == "f":
        return np.bincount(parent[has], weights=values[has], minlength=len(parent))
    out = np.zeros(len(parent), values.dtype)
    np.add.at(out, parent[has], values[has])
    return out


def subtree_sum(parent: np.ndarray, values: np.ndarray, depth: np.ndarray | None = None) -> np.ndarray:
    """values[i] plus the values of all descendants of i (depth: the tree depth, when known)."""
    total = values.astype(np.float64 if values.dtype.kind == "f" else np.int64, copy=True)
    return subtree_reduce(parent, total, np.add, depth)


def subtree_reduce(parent: np.ndarray, values: np.ndarray, op: np.ufunc, depth: np.ndarray | None = None) -> np.ndarray:
    """op over each node and its descendants (values is updated in place and returned), deepest level first."""
    for level in levels(depth_of(parent) if depth is None else depth)[:0:-1]:
        op.at(values, parent[level], values[level])
    return values


def levels(depth: np.ndarray) -> list[np.ndarray]:
    """The nodes of each depth, roots first, each level in index order (one stable sort: a radix sort in 16 bits)."""
    deepest = int(depth.max(initial=0))
    order = np.argsort(depth.astype(np.int16) if deepest < np.iinfo(np.int16).max else depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(deepest + 2)).tolist()
    return [order[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
