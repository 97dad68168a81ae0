"""One device's allocations, paired from its trace entries, and the curves of live and reserved bytes.

An allocation lives from its `alloc` entry to its `free_completed` entry at the same address (torch's
Active Memory Timeline ends it there too: a `free_requested` block may wait for another stream). The
pairing is by address in entry order, vectorized: sort the entries by (address, index) and give each
alloc the first free_completed after it that comes before the next alloc at its address.

What the history did not see is filled in as memory_viz does: a free of an address never allocated in
the history was allocated before it began (it lives from the first entry), and so was a block still
allocated in the segments that no entry allocated. An allocation alive at the end has its block's size
from the segments; others have the request rounded to 512 bytes (exact in the small pool; in the large
pool an unsplit block can be up to 1 MB larger).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .columns import (
    ALLOC,
    FREE_COMPLETED,
    FREE_REQUESTED,
    INACTIVE,
    NO_STACK,
    SEGMENT_ALLOC,
    SEGMENT_FREE,
    SEGMENT_MAP,
    SEGMENT_UNMAP,
    History,
    Snapshot,
)

ALIVE = np.iinfo(np.int64).max  # the end of an allocation still alive when the snapshot was taken
IN_HISTORY, BEFORE, BEFORE_ALIVE = 0, 1, 2  # where an allocation was seen first
MIN_BLOCK = 512
SMALL_SIZE = 1 << 20  # requests up to 1 MB come from the small pool (2 MB segments)
SMALL_SEGMENT = 2 << 20


@dataclass
class Allocations:
    """One device's allocations, one row each, in stacking order (before the history first, then by alloc)."""

    device: int
    addr: np.ndarray
    size: np.ndarray  # the bytes asked for
    block: np.ndarray  # the block's bytes: exact for those alive at the end, else the request rounded
    stream: np.ndarray
    start_ns: np.ndarray  # the alloc's time (the first entry's for those allocated before the history)
    end_ns: np.ndarray  # the free_completed's time (ALIVE: still allocated)
    freed_ns: np.ndarray  # when the free was requested (-1: not requested)
    stack: np.ndarray  # where it was allocated (the block's frames, or the free's, when the alloc is unseen)
    free_stack: np.ndarray  # where it was freed (NO_STACK: alive, or not recorded)
    alloc_entry: np.ndarray  # its alloc entry (-1: before the history)
    end_entry: np.ndarray  # the entry that ended it (-1: alive)
    origin: np.ndarray  # IN_HISTORY, BEFORE (freed in the history) or BEFORE_ALIVE
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.addr)

    def alive_at(self, entry: int) -> np.ndarray:
        """The allocations live after entry (-1: before the first), as a mask."""
        born = (self.alloc_entry <= entry) if entry >= 0 else (self.alloc_entry < 0)
        return born & ((self.end_entry > entry) | (self.end_entry < 0))


@dataclass
class Curves:
    """After each entry: the bytes requested by live allocations, their count, and the bytes reserved."""

    live: np.ndarray
    count: np.ndarray
    reserved: np.ndarray
    live_before: int  # before the first entry
    count_before: int
    reserved_before: int


def rounded(size: np.ndarray) -> np.ndarray:
    """A request's block as the allocator rounds it: a multiple of 512 bytes, at least 512."""
    return np.maximum(-(-size // MIN_BLOCK) * MIN_BLOCK, MIN_BLOCK)


def allocations(snap: Snapshot, device: int) -> Allocations:
    """The device's allocations from its history and the blocks alive in its segments."""
    h = snap.histories.get(device)
    if h is None or not len(h):
        return _from_blocks(snap, device, 0)
    paired = _pair(h)
    return _with_blocks(snap, device, h, paired)


def _pair(h: History) -> dict[str, np.ndarray]:
    """The allocations the entries show: alloc -> free_requested -> free_completed at one address."""
    act = h.action
    mem = np.flatnonzero((act == ALLOC) | (act == FREE_REQUESTED) | (act == FREE_COMPLETED))
    order = mem[np.lexsort((mem, h.addr[mem]))]
    addr, code = h.addr[order], act[order]
    pos = np.arange(len(order))
    allocs, frs, fcs = pos[code == ALLOC], pos[code == FREE_REQUESTED], pos[code == FREE_COMPLETED]
    group_end = np.searchsorted(addr, addr[allocs], side="right")
    limit = group_end.copy()
    if len(allocs) > 1:
        again = addr[allocs[1:]] == addr[allocs[:-1]]
        limit[:-1] = np.where(again, allocs[1:], group_end[:-1])
    fc = _next(fcs, allocs, limit)
    fr = _next(frs, allocs, np.where(fc >= 0, fc, limit))
    lost = (fc < 0) & (limit < group_end)  # another alloc at its address, no free between: its free was lost
    end_pos = np.where(fc >= 0, fc, np.where(lost, limit, -1))
    claimed = np.zeros(len(order), bool)
    claimed[fc[fc >= 0]] = True
    claimed[fr[fr >= 0]] = True
    unclaimed = fcs[~claimed[fcs]]  # frees of allocations made before the history began
    prev = np.maximum(unclaimed - 1, 0)
    its_request = (unclaimed > 0) & (code[prev] == FREE_REQUESTED) & (addr[prev] == addr[unclaimed])
    by_entry = np.argsort(order[allocs], kind="stable")  # the stacking order: by alloc entry

    def entry(p: np.ndarray) -> np.ndarray:  # sorted position -> entry index (-1 stays -1)
        return np.where(p >= 0, order[np.maximum(p, 0)], -1)

    return {
        "alloc": order[allocs][by_entry],
        "end": entry(end_pos)[by_entry],
        "fr": entry(fr)[by_entry],
        "lost": lost[by_entry],
        "before_end": order[unclaimed],
        "before_fr": entry(np.where(its_request, prev, -1)),
    }


def _next(candidates: np.ndarray, after: np.ndarray, before: np.ndarray) -> np.ndarray:
    """For each position in after, the first candidate position > it and < before (-1: none)."""
    if not len(candidates):
        return np.full(len(after), -1, np.int64)
    j = np.searchsorted(candidates, after, side="right")
    found = candidates[np.minimum(j, len(candidates) - 1)]
    return np.where((j < len(candidates)) & (found < before), found, -1)


def _with_blocks(snap: Snapshot, device: int, h: History, p: dict[str, np.ndarray]) -> Allocations:
    """The paired allocations, those from before the history, and block sizes from the segments."""
    a, end, fr = p["alloc"], p["end"], p["fr"]
    t_first = int(h.time_ns[0])
    before_end, before_fr = p["before_end"], p["before_fr"]
    rows = {
        "addr": np.concatenate([h.addr[before_end], h.addr[a]]),
        "size": np.concatenate([h.size[before_end], h.size[a]]),
        "stream": np.concatenate([h.stream[before_end], h.stream[a]]),
        "start_ns": np.concatenate([np.full(len(before_end), t_first, np.int64), h.time_ns[a]]),
        "end_ns": np.concatenate([h.time_ns[before_end], np.where(end >= 0, h.time_ns[np.maximum(end, 0)], ALIVE)]),
        "freed_ns": np.concatenate([_at(h.time_ns, before_fr), _at(h.time_ns, fr)]),
        "stack": np.concatenate([h.stack[before_end], h.stack[a]]),
        "free_stack": np.concatenate([h.stack[before_end], _stack_at(h, np.where(p["lost"], -1, end))]),
        "alloc_entry": np.concatenate([np.full(len(before_end), -1, np.int64), a]),
        "end_entry": np.concatenate([before_end, end]),
        "origin": np.concatenate([np.full(len(before_end), BEFORE, np.int8), np.full(len(a), IN_HISTORY, np.int8)]),
    }
    notes = []
    if p["lost"].any():
        notes.append(f"{int(p['lost'].sum())} allocations have no free in the history before their address was reused")
    return _merge_blocks(snap, device, rows, t_first, notes)


def _at(times: np.ndarray, entries: np.ndarray) -> np.ndarray:
    return np.where(entries >= 0, times[np.maximum(entries, 0)], -1)


def _stack_at(h: History, entries: np.ndarray) -> np.ndarray:
    return np.where(entries >= 0, h.stack[np.maximum(entries, 0)], NO_STACK).astype(np.int32)


def _live_blocks(snap: Snapshot, device: int) -> np.ndarray:
    """The blocks of the device's segments that are allocated (or waiting to be freed) at the end."""
    b = snap.blocks
    on = snap.segments.device[b.segment] == device if len(b) else np.zeros(0, bool)
    return np.flatnonzero(on & (b.state != INACTIVE))


def _merge_blocks(snap: Snapshot, device: int, rows: dict, t_first: int, notes: list[str]) -> Allocations:
    """Give the allocations alive at the end their blocks' sizes, and add the blocks no entry allocated."""
    b, live = snap.blocks, _live_blocks(snap, device)
    alive = np.flatnonzero(rows["end_ns"] == ALIVE)
    block = rounded(rows["size"])
    known = live[np.argsort(b.address[live], kind="stable")]
    j, hit = _find(b.address[known], rows["addr"][alive])
    block[alive[hit]] = b.size[known[j[hit]]]
    if (~hit).any():
        notes.append(f"{int((~hit).sum())} allocations alive in the history are not in the segments")
    seen = np.zeros(len(known), bool)
    seen[j[hit]] = True
    extra = known[~seen]
    segs = snap.segments
    more = {
        "addr": b.address[extra],
        "size": b.requested[extra],
        "stream": segs.stream[b.segment[extra]],
        "start_ns": np.full(len(extra), t_first, np.int64),
        "end_ns": np.full(len(extra), ALIVE, np.int64),
        "freed_ns": np.full(len(extra), -1, np.int64),
        "stack": b.stack[extra],
        "free_stack": np.full(len(extra), NO_STACK, np.int32),
        "alloc_entry": np.full(len(extra), -1, np.int64),
        "end_entry": np.full(len(extra), -1, np.int64),
        "origin": np.full(len(extra), BEFORE_ALIVE, np.int8),
    }
    out = {k: np.concatenate([more[k], rows[k]]) for k in rows}
    return Allocations(device=device, block=np.concatenate([b.size[extra], block]), notes=notes, **out)


def _find(sorted_values: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each value is in sorted_values, and whether it is there at all."""
    j = np.searchsorted(sorted_values, values)
    if not len(sorted_values):
        return j, np.zeros(len(values), bool)
    return j, (j < len(sorted_values)) & (sorted_values[np.minimum(j, len(sorted_values) - 1)] == values)


def _from_blocks(snap: Snapshot, device: int, t_first: int) -> Allocations:
    """A snapshot without history: the allocations are the live blocks (all from before the history)."""
    empty = {k: np.zeros(0, np.int64) for k in ("addr", "size", "stream", "start_ns", "end_ns", "freed_ns")}
    rows = {
        **empty,
        "stack": np.zeros(0, np.int32),
        "free_stack": np.zeros(0, np.int32),
        "alloc_entry": np.zeros(0, np.int64),
        "end_entry": np.zeros(0, np.int64),
        "origin": np.zeros(0, np.int8),
    }
    return _merge_blocks(snap, device, rows, t_first, [])


def curves(snap: Snapshot, device: int, allocs: Allocations) -> Curves | None:
    """The curves over the device's entries (None without history)."""
    h = snap.histories.get(device)
    if h is None or not len(h):
        return None
    n = len(h)
    delta = np.zeros(n, np.int64)
    counted = np.zeros(n, np.int64)
    made = allocs.alloc_entry >= 0
    np.add.at(delta, allocs.alloc_entry[made], allocs.size[made])
    np.add.at(counted, allocs.alloc_entry[made], 1)
    ended = allocs.end_entry >= 0
    np.add.at(delta, allocs.end_entry[ended], -allocs.size[ended])
    np.add.at(counted, allocs.end_entry[ended], -1)
    before = ~made
    live0, count0 = int(allocs.size[before].sum()), int(before.sum())
    reserved_delta = _reserved_delta(h)
    on = snap.segments.device == device
    reserved_end = int(snap.segments.total_size[on].sum())
    reserved0 = reserved_end - int(reserved_delta.sum())
    return Curves(
        live=live0 + np.cumsum(delta),
        count=count0 + np.cumsum(counted),
        reserved=reserved0 + np.cumsum(reserved_delta),
        live_before=live0,
        count_before=count0,
        reserved_before=reserved0,
    )


def _reserved_delta(h: History) -> np.ndarray:
    grow = (h.action == SEGMENT_ALLOC) | (h.action == SEGMENT_MAP)
    shrink = (h.action == SEGMENT_FREE) | (h.action == SEGMENT_UNMAP)
    return np.where(grow, h.size, 0) - np.where(shrink, h.size, 0)
