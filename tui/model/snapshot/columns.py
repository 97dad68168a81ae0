"""A snapshot as columns: per device one row per trace entry, the segments and their blocks, interned frame stacks.

The raw dict (read.py) holds a list of frame dicts on every entry and block; here each distinct frame is
stored once (name, file, line) and each distinct stack once (its frame ids, innermost first), and an
entry or block keeps the id of its stack. Addresses, sizes and times are int64 columns; a trace entry's
`time_us` becomes ns (`time_ns`), and the action one small code (ACTIONS).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import numpy as np

from ..errors import TraceError
from . import bounds
from .bounds import Bad, Budget, TooLarge

ACTIONS = (
    "alloc",
    "free_requested",
    "free_completed",
    "segment_alloc",
    "segment_free",
    "segment_map",
    "segment_unmap",
    "snapshot",
    "oom",
    "other",
)
ALLOC, FREE_REQUESTED, FREE_COMPLETED, SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP, SEGMENT_UNMAP, SNAP, OOM, OTHER = (
    range(len(ACTIONS))
)
CODE = {name: k for k, name in enumerate(ACTIONS)} | {"free": FREE_COMPLETED}
BLOCK_STATES = ("active_allocated", "active_pending_free", "inactive")
ACTIVE, PENDING_FREE, INACTIVE = range(3)
STATE_CODE = {"active_allocated": ACTIVE, "active_pending_free": PENDING_FREE, "active_awaiting_free": PENDING_FREE}
NO_STACK = -1
_FRAME = itemgetter("name", "filename", "line")


@dataclass
class Stacks:
    """Interned frames and stacks: stack s is frames[offsets[s]:offsets[s+1]] (innermost first)."""

    names: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    offsets: list[int] = field(default_factory=lambda: [0])
    frame_ids: list[int] = field(default_factory=list)
    _frames: dict[tuple, int] = field(default_factory=dict, repr=False)
    _stacks: dict[tuple, int] = field(default_factory=dict, repr=False)
    _seen: dict[int, tuple[Any, int]] = field(default_factory=dict, repr=False)  # by id: each list object's stack

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def intern(self, frames: Any, budget: Budget | None = None) -> int:
        """The id of a list of frame dicts (NO_STACK for none); Bad when it is no list; its frames counted."""
        if not frames:
            return NO_STACK
        if not isinstance(frames, (list, tuple)):
            raise Bad
        if budget is not None:
            budget.stack(len(frames))
        seen = self._seen.get(id(frames))
        if seen is not None and seen[0] is frames:  # one list referred to again (a pickle's memo): interned once
            return seen[1]
        sid = self._intern(frames)
        self._seen[id(frames)] = (frames, sid)  # (the list held, so its id is not reused meanwhile)
        return sid

    def _intern(self, frames: list | tuple) -> int:
        try:
            key = tuple(map(_FRAME, frames))
            found = self._stacks.get(key)
        except (KeyError, TypeError):  # a field missing, or a name that is no string (unhashable)
            found = None
        if found is not None:
            return found
        key = tuple(_loose(f) for f in frames)
        found = self._stacks.get(key)
        if found is not None:
            return found
        for frame in key:
            fid = self._frames.get(frame)
            if fid is None:
                fid = self._frames[frame] = len(self.names)
                self.names.append(frame[0])
                self.files.append(frame[1])
                self.lines.append(frame[2])
            self.frame_ids.append(fid)
        self.offsets.append(len(self.frame_ids))
        sid = self._stacks[key] = len(self.offsets) - 2
        return sid

    def frames_of(self, stack: int) -> list[int]:
        """The frame ids of a stack, innermost first ([] for NO_STACK)."""
        if stack < 0:
            return []
        return self.frame_ids[self.offsets[stack] : self.offsets[stack + 1]]


def _loose(f: Any) -> tuple[str, str, int]:
    """A frame as (name, file, line) of the right types: what a hand-written or damaged one has, blanks for the
    rest (a name that is no string nor number is "?", never formatted: it may be nested any depth)."""
    if not isinstance(f, dict):
        return (bounds.text(f), "", 0)
    return (bounds.text(f.get("name", "?")), bounds.text(f.get("filename", ""), ""), bounds.line(f.get("line", 0)))


@dataclass
class History:
    """One device's trace entries in the order the allocator recorded them."""

    device: int
    action: np.ndarray  # int8 code (ACTIONS)
    addr: np.ndarray  # int64; for an OOM, 0
    size: np.ndarray  # int64: the bytes asked for (the requested size, not the block's)
    stream: np.ndarray  # int64 (a cudaStream_t)
    time_ns: np.ndarray  # int64; the entry's index when the snapshot records no times
    stack: np.ndarray  # int32 stack id (NO_STACK: none)
    device_free: np.ndarray  # int64: what CUDA had free at an OOM (-1 elsewhere)
    extra: np.ndarray  # int32 id into Snapshot.texts of the entry's compile_context / user_metadata (-1: none)

    def __len__(self) -> int:
        return len(self.action)


@dataclass
class Segments:
    """The segments the caching allocator holds when the snapshot was taken (one row each, by address)."""

    device: np.ndarray
    address: np.ndarray
    total_size: np.ndarray
    allocated_size: np.ndarray
    active_size: np.ndarray
    requested_size: np.ndarray
    stream: np.ndarray
    small: np.ndarray  # bool: the small pool (blocks up to 1 MB, in 2 MB segments)
    expandable: np.ndarray  # bool
    pool: list[tuple[int, int]]  # segment_pool_id: (0, 0) the default pools, else a private pool (CUDA graphs)
    stack: np.ndarray  # where the segment was cudaMalloc'd (NO_STACK: not recorded)

    def __len__(self) -> int:
        return len(self.address)


@dataclass
class Blocks:
    """The blocks of every segment, in address order within each: allocated, pending free, or free (inactive)."""

    segment: np.ndarray  # its row in Segments
    address: np.ndarray
    size: np.ndarray  # the block's bytes (the request rounded up, or a whole unsplit free block)
    requested: np.ndarray  # the bytes asked for (0 for a free block)
    state: np.ndarray  # int8: ACTIVE, PENDING_FREE, INACTIVE
    stack: np.ndarray  # where it was allocated (NO_STACK: not recorded)

    def __len__(self) -> int:
        return len(self.address)


@dataclass
class Snapshot:
    """An allocator snapshot read into columns."""

    path: str
    stacks: Stacks
    segments: Segments
    blocks: Blocks
    histories: dict[int, History]  # device -> its entries (only devices with entries)
    texts: list[str]  # compile contexts and user metadata, interned
    settings: dict[str, Any]
    annotations: list[dict[str, Any]]
    timed: bool  # the entries carry time_us (torch >= 2.1); else time_ns is the entry's index
    skipped: int = 0  # entries or blocks that were not dicts of the expected fields

    @property
    def devices(self) -> list[int]:
        """Every device with segments or entries."""
        return sorted(set(self.histories) | set(self.segments.device.tolist()))

    @property
    def has_history(self) -> bool:
        return any(len(h) for h in self.histories.values())

    @property
    def notes(self) -> list[str]:
        """What reading it has to say, one line each (`note: ...`, `warning: ...`), as the command line prints it."""
        out = []
        if not self.has_history:
            out.append(
                f"note: {self.path}: no history in this snapshot, segments only; record one with "
                "torch.cuda.memory._record_memory_history() before the run"
            )
        if self.skipped:
            out.append(
                f"warning: {self.path}: {self.skipped:,} entries, segments or blocks were not readable (not a dict, "
                "or a number of the wrong type or out of range: negative, past int64, an infinity) and were skipped"
            )
        return out


def build(path: str, doc: dict, progress=None) -> Snapshot:
    """The columns of a snapshot's plain dict (read.read_plain); progress gets the share of entries done.
    TraceError (one line) past a limit of bounds.py."""
    try:
        return _build(path, doc, progress)
    except TooLarge as exc:
        raise TraceError(path, f"refused: {exc}") from None


def _build(path: str, doc: dict, progress) -> Snapshot:
    stacks, budget = Stacks(), Budget()
    texts: dict[str, int] = {}
    traces = doc.get("device_traces") or []
    bounds.devices(len(traces))
    total = sum(len(t) for t in traces if isinstance(t, list))
    budget.entry(total + len(doc.get("segments") or []))  # (each list as often as it is referred to)
    segments, blocks, skipped = _segments(doc.get("segments") or [], stacks, budget)
    histories: dict[int, History] = {}
    done = 0
    timed = True
    for device, entries in enumerate(traces):
        if not isinstance(entries, list) or not entries:
            continue
        history, bad, has_time = _history(device, entries, stacks, texts, budget, (progress, done, max(total, 1)))
        histories[device], skipped, timed = history, skipped + bad, timed and has_time
        done += len(entries)
    stacks._seen.clear()  # (it holds the file's lists)
    settings = doc.get("allocator_settings")
    annotations = doc.get("external_annotations")
    return Snapshot(
        path=path,
        stacks=stacks,
        segments=segments,
        blocks=blocks,
        histories=histories,
        texts=list(texts),
        settings=bounds.plain(settings) if isinstance(settings, dict) else {},
        annotations=[a for a in map(bounds.annotation, annotations) if a] if isinstance(annotations, list) else [],
        timed=timed,
        skipped=skipped,
    )


def _code(value: Any, codes: dict[str, int], other: int) -> int:
    """The code of an action or state name (other: one not known, or no string)."""
    return codes.get(value, other) if isinstance(value, str) else other


def _int(value: Any) -> int:
    """A count field where a bad one reads as 0 (a block's requested size: a figure, not where it lies)."""
    try:
        return bounds.count(value)
    except Bad:
        return 0


_ENTRY_INTS = ("addr", "size", "stream")


def _history(device: int, entries: list, stacks: Stacks, texts: dict[str, int], budget: Budget, told: tuple):
    """One device's entries as columns; (History, entries skipped, whether every entry has a time)."""
    n = len(entries)
    action = np.full(n, OTHER, np.int8)
    cols = {k: np.zeros(n, np.int64) for k in (*_ENTRY_INTS, "time")}
    device_free = np.full(n, -1, np.int64)
    stack = np.full(n, NO_STACK, np.int32)
    extra = np.full(n, -1, np.int32)
    keep = np.ones(n, bool)
    timed = True
    progress, done, total = told
    every = max(n // 100, 1)
    for i, e in enumerate(entries):
        if progress is not None and i % every == 0:
            progress((done + i) / total)
        try:
            if not isinstance(e, dict):
                raise Bad
            code = _code(e.get("action"), CODE, OTHER)
            values = [bounds.count(e.get(k)) for k in _ENTRY_INTS]
            t = bounds.time_ns(e.get("time_us"))
            free = bounds.count(e.get("device_free", e.get("addr"))) if code == OOM else -1
            stack[i] = stacks.intern(e.get("frames"), budget)
        except Bad:
            keep[i] = False
            continue
        action[i] = code
        for k, v in zip(_ENTRY_INTS, values, strict=True):
            cols[k][i] = v
        if t is None:
            timed = False
        else:
            cols["time"][i] = t
        if code == OOM:
            device_free[i], cols["addr"][i] = free, 0
        extra[i] = _extra(e, texts)
    if not timed:
        cols["time"] = np.arange(n, dtype=np.int64)
    history = History(
        device,
        action[keep],
        cols["addr"][keep],
        cols["size"][keep],
        cols["stream"][keep],
        cols["time"][keep],
        stack[keep],
        device_free[keep],
        extra[keep],
    )
    return history, int((~keep).sum()), timed


def _extra(e: dict, texts: dict[str, int]) -> int:
    """The entry's compile context and user metadata as one interned text (-1: neither says anything)."""
    parts = []
    context = e.get("compile_context")
    if isinstance(context, str) and context not in ("", "N/A"):
        parts.append(f"compile context: {context}")
    meta = e.get("user_metadata")
    if isinstance(meta, str) and meta:
        parts.append(f"user metadata: {meta}")
    if not parts:
        return -1
    text = "; ".join(parts)
    return texts.setdefault(text, len(texts))


_SEGMENT_INTS = ("device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream")


def _segments(raw: list, stacks: Stacks, budget: Budget) -> tuple[Segments, Blocks, int]:
    """The segments (sorted by device and address) and their blocks; and how many were not readable."""
    good: list[tuple[dict, dict[str, int], int]] = []  # the segment, its numbers, its stack
    for s in raw:
        try:
            if not isinstance(s, dict) or not isinstance(s.get("blocks") or [], list):
                raise Bad
            ints = {k: bounds.device(s.get(k)) if k == "device" else bounds.count(s.get(k)) for k in _SEGMENT_INTS}
            good.append((s, ints, stacks.intern(s.get("frames"), budget)))
        except Bad:
            continue
    good.sort(key=lambda g: (g[1]["device"], g[1]["address"]))
    segments = Segments(
        **{k: np.array([g[1][k] for g in good], np.int64) for k in _SEGMENT_INTS},
        small=np.array([s.get("segment_type") == "small" for s, _, _ in good], bool),
        expandable=np.array([bool(s.get("is_expandable")) for s, _, _ in good], bool),
        pool=[_pool(s.get("segment_pool_id")) for s, _, _ in good],
        stack=np.array([g[2] for g in good], np.int32),
    )
    rows: list[tuple[int, int, int, int, int, int]] = []
    skipped = len(raw) - len(good)
    for k, (s, ints, _) in enumerate(good):
        addr = ints["address"]
        for b in s.get("blocks") or []:
            budget.entry()
            try:
                if not isinstance(b, dict):
                    raise Bad
                size = bounds.count(b.get("size"))
                frames, requested = _block_extra(b)
                state = _code(b.get("state"), STATE_CODE, INACTIVE)
                start = bounds.count(b.get("address")) or addr  # older snapshots: blocks follow each other
                if start + size > bounds.INT_MAX:
                    raise Bad
                row = (k, start, size, requested if state != INACTIVE else 0, state, stacks.intern(frames, budget))
            except Bad:
                skipped += 1
                continue
            rows.append(row)
            addr = start + size
    cols = list(zip(*rows, strict=True)) if rows else [()] * 6
    blocks = Blocks(
        segment=np.array(cols[0], np.int64),
        address=np.array(cols[1], np.int64),
        size=np.array(cols[2], np.int64),
        requested=np.array(cols[3], np.int64),
        state=np.array(cols[4], np.int8),
        stack=np.array(cols[5], np.int32),
    )
    return segments, blocks, skipped


def _block_extra(b: dict) -> tuple[Any, int]:
    """A block's frames and requested size; older snapshots keep them in the block's `history`."""
    if "frames" in b:
        return b.get("frames"), bounds.count(b.get("requested_size", b.get("size")))
    history = b.get("history")
    if isinstance(history, list) and history and isinstance(history[0], dict):
        return history[0].get("frames"), bounds.count(history[0].get("real_size", b.get("size")))
    return None, bounds.count(b.get("requested_size", b.get("size")))


def _pool(value: Any) -> tuple[int, int]:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return (_int(value[0]), _int(value[1]))
    return (0, 0)
