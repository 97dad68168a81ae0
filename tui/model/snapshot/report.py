"""What `tracetui memory SNAPSHOT` says of each device: now, at the peak, by frame, the segments, leaks, OOMs.

Now: the bytes reserved (the segments' sizes: torch.cuda.memory_reserved), allocated (the used blocks'
sizes: torch.cuda.memory_allocated) and requested (what the program asked for; the difference is the
allocator's rounding). The peak of the history is the most bytes requested by live allocations after any
entry (what torch's Active Memory Timeline plots), with the bytes reserved then. The allocations alive at
the peak are grouped by the frame that made them (frames.py); so are the allocations made in the history
and never freed by its end (leak candidates). Those alive from before the history to its end are held for the
whole run (a training run's model and optimizer state, made before the recording began): said apart, never
leak candidates. An OOM entry is explained from the memory rebuilt at that moment (state.py).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from .columns import ACTIONS, INACTIVE, OOM, PENDING_FREE, Snapshot
from .frames import BEFORE_HISTORY, FrameKind, Namer
from .history import ALIVE, BEFORE_ALIVE, IN_HISTORY, Allocations, Curves, allocations, curves
from .state import END, SegmentSpans, State, end_state, is_small, segment_spans, state_at

NO_HISTORY = "the snapshot has no history (torch.cuda.memory._record_memory_history() was not on): segments only"


@dataclass
class FrameRow:
    """Allocations grouped by the frame that made them."""

    frame: str
    kind: FrameKind
    bytes: int
    count: int
    share: float  # of the bytes of the group's whole (the live bytes at the peak, or all never freed)
    stack: int  # one of its stacks (the largest allocation's), for its frames
    op: str  # the op that made its largest allocation (aten::mm, MeanBackward0 (backward)), "" when unknown
    first_ns: int  # the earliest and latest alloc among them (relative to the history's start)
    last_ns: int


@dataclass
class Peak:
    entry: int  # the entry after which the most bytes were requested (-1: before the first)
    time_ns: int  # from the history's start
    requested_bytes: int
    allocations: int
    reserved_bytes: int


@dataclass
class SegmentSummary:
    count: int
    large: int
    small: int
    reserved_bytes: int
    allocated_bytes: int  # used blocks (rounded sizes)
    requested_bytes: int
    free_bytes: int  # reserved but not in a used block (cached, reusable)
    free_blocks: int
    pending_free_bytes: int  # freed but waiting for another stream's work (record_stream)
    largest_free_bytes: int
    largest_free_stream: int
    largest_free_small: bool
    streams: list[tuple[int, int, int, int]]  # (stream, reserved, free, largest free) by stream


@dataclass
class OomRow:
    entry: int
    time_ns: int
    requested_bytes: int  # the request as the allocator rounded it
    device_free_bytes: int  # what CUDA had free
    stream: int
    small: bool  # the request's pool
    reserved_bytes: int
    pool_free_bytes: int  # free in the allocator's segments of its stream and pool
    largest_free_bytes: int  # the largest of those free blocks
    live_bytes: int  # requested by live allocations then
    other_streams_free_bytes: int  # free in the same pool of the other streams' segments (this request cannot use it)
    fragmentation: bool  # the pool had the bytes free, in pieces smaller than the request
    frame: str
    stack: int


@dataclass
class DeviceReport:
    device: int
    name: str  # cuda:0
    reserved_bytes: int
    allocated_bytes: int
    requested_bytes: int
    segments: SegmentSummary
    peak: Peak | None  # None without history
    max_reserved_bytes: int
    by_frame: list[FrameRow]  # alive at the peak (at the end, without history)
    never_freed: list[FrameRow]
    never_freed_bytes: int
    never_freed_count: int
    ooms: list[OomRow]
    entries: int
    actions: dict[str, int]
    span_ns: int  # from the first entry to the last
    t0_ns: int  # the first entry's time (raw clock)
    held_bytes: int = 0  # alive from before the history to its end: held for the whole run, not leak candidates
    held_count: int = 0
    timed: bool = True  # the entries carry times (torch >= 2.1); else every time here is an entry's index
    notes: list[str] = field(default_factory=list)


@dataclass
class DeviceMemory:
    """A device's allocations, curves and segment spans: what the report, the viewer and the diff read."""

    device: int
    allocs: Allocations
    curves: Curves | None
    spans: SegmentSpans
    end: State


def device_memory(snap: Snapshot, device: int) -> DeviceMemory:
    allocs = allocations(snap, device)
    spans = segment_spans(snap, device)
    return DeviceMemory(device, allocs, curves(snap, device, allocs), spans, end_state(snap, device, allocs))


def device_report(snap: Snapshot, mem: DeviceMemory, namer: Namer) -> DeviceReport:
    """The report of one device."""
    d, a, c = mem.device, mem.allocs, mem.curves
    h = snap.histories.get(d)
    segs = segment_summary(snap, d, mem.end)
    peak = _peak(h, c) if c is not None else None
    at = peak.entry if peak is not None else END
    live = np.flatnonzero(a.alive_at(at) if at != END else a.end_ns == ALIVE)
    t0 = int(h.time_ns[0]) if h is not None and len(h) else 0
    kept = np.flatnonzero((a.end_ns == ALIVE) & (a.origin == IN_HISTORY))
    held = np.flatnonzero((a.end_ns == ALIVE) & (a.origin == BEFORE_ALIVE)) if c is not None else np.zeros(0, int)
    notes = list(a.notes) + ([] if c is not None else [NO_HISTORY])
    return DeviceReport(
        device=d,
        name=f"cuda:{d}",
        reserved_bytes=segs.reserved_bytes,
        allocated_bytes=segs.allocated_bytes,
        requested_bytes=segs.requested_bytes,
        segments=segs,
        peak=peak,
        max_reserved_bytes=int(max(c.reserved.max(), c.reserved_before)) if c is not None else segs.reserved_bytes,
        by_frame=by_frame(a, live, namer, t0),
        never_freed=by_frame(a, kept, namer, t0),
        never_freed_bytes=int(a.size[kept].sum()),
        never_freed_count=len(kept),
        ooms=_ooms(snap, mem, namer) if h is not None else [],
        held_bytes=int(a.size[held].sum()),
        held_count=len(held),
        entries=len(h) if h is not None else 0,
        actions=_actions(h),
        span_ns=int(h.time_ns[-1] - h.time_ns[0]) if h is not None and len(h) else 0,
        t0_ns=t0,
        timed=snap.timed,
        notes=notes,
    )


def _peak(h, c: Curves) -> Peak:
    i = int(np.argmax(c.live))
    if c.live_before >= c.live[i]:  # reached before the first entry
        return Peak(-1, 0, c.live_before, c.count_before, c.reserved_before)
    return Peak(i, int(h.time_ns[i] - h.time_ns[0]), int(c.live[i]), int(c.count[i]), int(c.reserved[i]))


def _actions(h) -> dict[str, int]:
    if h is None:
        return {}
    counts = np.bincount(h.action.astype(np.int64), minlength=len(ACTIONS))
    return {name: int(n) for name, n in zip(ACTIONS, counts, strict=True) if n}


def by_frame(a: Allocations, rows: np.ndarray, namer: Namer, t0: int) -> list[FrameRow]:
    """The allocations of rows grouped by the frame that made them, most bytes first."""
    groups: dict[str, list[int]] = defaultdict(list)
    for r in rows.tolist():
        groups[label_of(a, r, namer)].append(r)
    total = int(a.size[rows].sum()) or 1
    out = []
    for frame, members in groups.items():
        m = np.array(members, np.int64)
        biggest = int(m[np.argmax(a.size[m])])
        kind = namer.named(int(a.stack[biggest]))[1] if frame != BEFORE_HISTORY else "none"
        nbytes = int(a.size[m].sum())
        out.append(
            FrameRow(
                frame,
                kind,
                nbytes,
                len(m),
                nbytes / total,
                int(a.stack[biggest]),
                namer.op(int(a.stack[biggest])),
                int(a.start_ns[m].min() - t0),
                int(a.start_ns[m].max() - t0),
            )
        )
    return sorted(out, key=lambda r: (-r.bytes, r.frame))


def label_of(a: Allocations, row: int, namer: Namer) -> str:
    """The frame an allocation is grouped by; one made before the history with no frames says so."""
    stack = int(a.stack[row])
    if stack < 0 and a.origin[row] != IN_HISTORY:
        return BEFORE_HISTORY
    return namer.label(stack)


def segment_summary(snap: Snapshot, device: int, end: State) -> SegmentSummary:
    """The segments held at the end: what is reserved, used, free, and the largest free block."""
    segs, b = snap.segments, snap.blocks
    on = segs.device == device
    mine = on[b.segment] if len(b) else np.zeros(0, bool)
    used = mine & (b.state != INACTIVE)
    k = int(np.argmax(np.where(end.free, end.blk_size, -1))) if end.free.any() else -1
    streams = []
    for s in sorted(set(segs.stream[on].tolist())):
        streams.append((s, int(segs.total_size[on & (segs.stream == s)].sum()), end.free_bytes(s), end.largest_free(s)))
    return SegmentSummary(
        count=int(on.sum()),
        large=int((on & ~segs.small).sum()),
        small=int((on & segs.small).sum()),
        reserved_bytes=int(segs.total_size[on].sum()),
        allocated_bytes=int(b.size[used].sum()),
        requested_bytes=int(b.requested[used].sum()),
        free_bytes=int(b.size[mine & (b.state == INACTIVE)].sum()),
        free_blocks=int((mine & (b.state == INACTIVE)).sum()),
        pending_free_bytes=int(b.size[mine & (b.state == PENDING_FREE)].sum()),
        largest_free_bytes=int(end.blk_size[k]) if k >= 0 else 0,
        largest_free_stream=int(end.seg_stream[end.blk_seg[k]]) if k >= 0 else 0,
        largest_free_small=bool(end.seg_small[end.blk_seg[k]]) if k >= 0 else False,
        streams=streams,
    )


def _ooms(snap: Snapshot, mem: DeviceMemory, namer: Namer) -> list[OomRow]:
    """Each OOM entry with the memory rebuilt at that moment: fragmentation, or memory in use."""
    h = snap.histories[mem.device]
    out = []
    for i in np.flatnonzero(h.action == OOM).tolist():
        st = state_at(snap, mem.device, mem.allocs, mem.spans, i)
        size, stream = int(h.size[i]), int(h.stream[i])
        small = is_small(size)
        pool_free = st.free_bytes(stream, small)
        c = mem.curves
        out.append(
            OomRow(
                entry=i,
                time_ns=int(h.time_ns[i] - h.time_ns[0]),
                requested_bytes=size,
                device_free_bytes=int(h.device_free[i]),
                stream=stream,
                small=small,
                reserved_bytes=int(st.seg_size.sum()),
                pool_free_bytes=pool_free,
                largest_free_bytes=st.largest_free(stream, small),
                live_bytes=int(c.live[i]) if c is not None else 0,
                other_streams_free_bytes=st.free_bytes(small=small) - pool_free,
                fragmentation=pool_free >= size,
                frame=namer.label(int(h.stack[i])),
                stack=int(h.stack[i]),
            )
        )
    return out


@dataclass
class SnapshotReport:
    path: str
    devices: list[DeviceReport]
    has_history: bool
    timed: bool
    settings: dict
    skipped: int


def report(snap: Snapshot, memories: dict[int, DeviceMemory] | None = None) -> SnapshotReport:
    """The report of every device of a snapshot."""
    namer = Namer(snap.stacks)
    memories = memories or {d: device_memory(snap, d) for d in snap.devices}
    devices = [device_report(snap, memories[d], namer) for d in snap.devices]
    return SnapshotReport(snap.path, devices, snap.has_history, snap.timed, snap.settings, snap.skipped)
