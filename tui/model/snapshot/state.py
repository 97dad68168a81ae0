"""The allocator's memory at one moment: its segments and, in each, the used and the free blocks.

At the end (when the snapshot was taken) these are the snapshot's own segments and blocks. At an earlier
entry they are rebuilt: the segments alive then (segment_alloc .. segment_free, paired by address as
allocations are; a segment still held at the end, or freed without a recorded alloc, was there from the
start), and in each the live allocations at their addresses with their blocks' sizes (history.py); the
gaps between them are the free blocks. The caching allocator merges neighbouring free blocks, so a gap is
one free block. A request can use a free block of its own stream and pool only (small: up to 1 MB).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .columns import INACTIVE, SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP, SEGMENT_UNMAP, Snapshot
from .history import SMALL_SEGMENT, SMALL_SIZE, Allocations

END = -2  # the moment the snapshot was taken
FREE, UNKNOWN = -1, -3  # a block's allocation: none (free), or one the history does not know (used)


@dataclass
class State:
    """Segments (by address) and their blocks (by address within each); a block's allocation, or -1 when free."""

    seg_addr: np.ndarray
    seg_size: np.ndarray
    seg_stream: np.ndarray
    seg_small: np.ndarray
    blk_seg: np.ndarray
    blk_addr: np.ndarray
    blk_size: np.ndarray
    blk_alloc: np.ndarray  # the allocation's row (Allocations), -1 for a free block
    exact: bool  # the snapshot's own blocks (the end), not rebuilt from the history

    @property
    def free(self) -> np.ndarray:
        return self.blk_alloc == FREE

    def blocks_of(self, segment: int) -> np.ndarray:
        """The rows of a segment's blocks, in address order (blocks are sorted by segment, then address)."""
        lo, hi = np.searchsorted(self.blk_seg, [segment, segment + 1])
        return np.arange(lo, hi)

    def largest_free(self, stream: int | None = None, small: bool | None = None) -> int:
        """The largest free block, of one stream and pool if given (0: none)."""
        on = self.free.copy()
        if stream is not None:
            on &= self.seg_stream[self.blk_seg] == stream
        if small is not None:
            on &= self.seg_small[self.blk_seg] == small
        return int(self.blk_size[on].max()) if on.any() else 0

    def free_bytes(self, stream: int | None = None, small: bool | None = None) -> int:
        on = self.free.copy()
        if stream is not None:
            on &= self.seg_stream[self.blk_seg] == stream
        if small is not None:
            on &= self.seg_small[self.blk_seg] == small
        return int(self.blk_size[on].sum())


def is_small(size: int) -> bool:
    """Whether a request comes from the small pool."""
    return size <= SMALL_SIZE


@dataclass
class SegmentSpans:
    """Every segment the device held during the history: its range and the entries it lived between."""

    addr: np.ndarray
    size: np.ndarray
    stream: np.ndarray
    small: np.ndarray
    first: np.ndarray  # the entry that made it (-1: before the history)
    last: np.ndarray  # the entry that released it (-1: still held at the end)


def segment_spans(snap: Snapshot, device: int) -> SegmentSpans:
    """The segments over the device's history: those held at the end, and those the history made or freed."""
    segs = snap.segments
    on = np.flatnonzero(segs.device == device)
    h = snap.histories.get(device)
    rows: list[tuple[int, int, int, bool, int, int]] = []
    open_: dict[int, list] = {}  # address -> the row of the span now open there (walking back from the end)
    for k in on:
        row = [int(segs.address[k]), int(segs.total_size[k]), int(segs.stream[k]), bool(segs.small[k]), -1, -1]
        open_[row[0]] = row
        rows.append(row)  # type: ignore[arg-type]
    if h is not None:
        grows = (SEGMENT_ALLOC, SEGMENT_MAP)
        for i in np.flatnonzero(np.isin(h.action, (SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP, SEGMENT_UNMAP)))[::-1]:
            addr, size = int(h.addr[i]), int(h.size[i])
            if int(h.action[i]) in grows:
                found = open_.pop(addr, [])
                row = found
                if not found:  # made, then released before the end at an address with no recorded release
                    row = [addr, size, int(h.stream[i]), size == SMALL_SEGMENT, int(i), int(i)]
                    rows.append(row)  # type: ignore[arg-type]
                row[4] = int(i)
            else:
                row = [addr, size, int(h.stream[i]), size == SMALL_SEGMENT, -1, int(i)]
                open_[addr] = row
                rows.append(row)  # type: ignore[arg-type]
    cols = list(zip(*rows, strict=True)) if rows else [()] * 6
    return SegmentSpans(
        addr=np.array(cols[0], np.int64),
        size=np.array(cols[1], np.int64),
        stream=np.array(cols[2], np.int64),
        small=np.array(cols[3], bool),
        first=np.array(cols[4], np.int64),
        last=np.array(cols[5], np.int64),
    )


def state_at(snap: Snapshot, device: int, allocs: Allocations, spans: SegmentSpans, entry: int) -> State:
    """The memory after an entry (END: the snapshot's own segments and blocks)."""
    if entry == END:
        return end_state(snap, device, allocs)
    alive = ((spans.first < 0) | (spans.first <= entry)) & ((spans.last < 0) | (spans.last > entry))
    seg = np.flatnonzero(alive)
    seg = seg[np.argsort(spans.addr[seg], kind="stable")]
    live = np.flatnonzero(allocs.alive_at(entry))
    return _with_gaps(
        spans.addr[seg],
        spans.size[seg],
        spans.stream[seg],
        spans.small[seg],
        allocs,
        live[np.argsort(allocs.addr[live])],
    )


def _with_gaps(
    seg_addr: np.ndarray, seg_size: np.ndarray, seg_stream: np.ndarray, seg_small: np.ndarray, allocs, live: np.ndarray
) -> State:
    """The blocks of each segment: the live allocations (by address) and the free gaps between them."""
    owner = np.searchsorted(seg_addr, allocs.addr[live], side="right") - 1
    inside = (owner >= 0) & (allocs.addr[live] < seg_addr[np.maximum(owner, 0)] + seg_size[np.maximum(owner, 0)])
    live, owner = live[inside], owner[inside]
    start = allocs.addr[live]
    end = np.minimum(start + allocs.block[live], seg_addr[owner] + seg_size[owner])
    # a free gap before each allocation (from its segment's start or the previous allocation's end) and at each end
    prev_end = np.where(
        np.r_[True, owner[1:] != owner[:-1]] if len(owner) else np.zeros(0, bool), seg_addr[owner], np.r_[0, end[:-1]]
    )
    tail_seg = np.arange(len(seg_addr))
    last_end = seg_addr.copy()
    if len(owner):
        last = np.r_[owner[1:] != owner[:-1], True]
        last_end[owner[last]] = end[last]
    gap_seg = np.r_[owner, tail_seg]
    gap_addr = np.r_[prev_end, last_end]
    gap_size = np.r_[start - prev_end, seg_addr + seg_size - last_end]
    keep = gap_size > 0
    blk_seg = np.r_[owner, gap_seg[keep]]
    blk_addr = np.r_[start, gap_addr[keep]]
    blk_size = np.r_[end - start, gap_size[keep]]
    blk_alloc = np.r_[live, np.full(int(keep.sum()), FREE, np.int64)]
    order = np.lexsort((blk_addr, blk_seg))
    return State(
        seg_addr,
        seg_size,
        seg_stream,
        seg_small,
        blk_seg[order],
        blk_addr[order],
        blk_size[order],
        blk_alloc[order],
        False,
    )


def end_state(snap: Snapshot, device: int, allocs: Allocations) -> State:
    """The snapshot's own segments and blocks, each used block with its allocation's row."""
    segs, b = snap.segments, snap.blocks
    seg = np.flatnonzero(segs.device == device)
    row_of = np.full(len(segs), -1, np.int64)
    row_of[seg] = np.arange(len(seg))
    mine = np.flatnonzero(row_of[b.segment] >= 0) if len(b) else np.zeros(0, np.int64)
    alloc = np.full(len(mine), -1, np.int64)
    used = b.state[mine] != INACTIVE
    alive = np.flatnonzero(allocs.end_entry < 0)
    by_addr = alive[np.argsort(allocs.addr[alive], kind="stable")]
    j = np.searchsorted(allocs.addr[by_addr], b.address[mine[used]])
    found = j < len(by_addr)
    found[found] = allocs.addr[by_addr[j[found]]] == b.address[mine[used]][found]
    alloc[np.flatnonzero(used)[found]] = by_addr[j[found]]
    return State(
        segs.address[seg],
        segs.total_size[seg],
        segs.stream[seg],
        segs.small[seg],
        row_of[b.segment[mine]],
        b.address[mine],
        b.size[mine],
        np.where(used & (alloc < 0), UNKNOWN, alloc),
        True,
    )
