"""The snapshot tables (`tracetui memory SNAPSHOT`, the snapshot viewer): devices, frames, segments, leaks, OOMs.

Bytes in the text are torch's binary units (fmt_memory); in JSON and CSV they are whole bytes, times are
microseconds from the history's first entry, and a stream is its cudaStream_t as the snapshot writes it.
"""

from __future__ import annotations

from typing import Any

from ..model.snapshot.join import Joined, JoinRow
from ..model.snapshot.report import DeviceReport, FrameRow, OomRow, SnapshotReport
from ..text.fmt import fmt_memory, fmt_time, plural, truncate
from .base import KEEP, Column

NAME_WIDTH = 70
RECORD = "torch.cuda.memory._record_memory_history()"


def stream_name(stream: int) -> str:
    """The default stream as 0, others by their cudaStream_t in hex (what a debugger shows)."""
    return "0" if stream == 0 else hex(stream)


def pool_name(small: bool) -> str:
    return "small pool" if small else "large pool"


def _us(ns: int) -> float:
    return ns / 1000.0


def when(ns: int, timed: bool = True) -> str:
    """A moment of the history: its time from the first entry, or (a snapshot without times) its entry."""
    return fmt_time(_us(ns)) if timed else f"entry {ns + 1:,}"


def _time_us(ns: int, timed: bool) -> float | None:
    return _us(ns) if timed else None


def _at(d: DeviceReport) -> str:
    return when(d.peak.time_ns, d.timed) if d.peak is not None else "-"


DEVICE_COLUMNS: list[Column[DeviceReport, None]] = [
    Column("Device", lambda d, c, w: d.name, priority=KEEP),
    Column("Reserved", lambda d, c, w: fmt_memory(d.reserved_bytes), priority=KEEP),
    Column("Allocated", lambda d, c, w: fmt_memory(d.allocated_bytes), priority=KEEP),
    Column("Requested", lambda d, c, w: fmt_memory(d.requested_bytes), priority=2),
    Column("Free in segments", lambda d, c, w: fmt_memory(d.segments.free_bytes), priority=1),
    Column("Largest free", lambda d, c, w: fmt_memory(d.segments.largest_free_bytes), priority=1),
    Column("Segments", lambda d, c, w: f"{d.segments.count:,}", priority=2),
    Column("Peak requested", lambda d, c, w: fmt_memory(d.peak.requested_bytes) if d.peak else "-", priority=KEEP),
    Column("At", lambda d, c, w: _at(d), priority=1),
    Column("Reserved at peak", lambda d, c, w: fmt_memory(d.peak.reserved_bytes) if d.peak else "-", priority=2),
]


def _frame(r: FrameRow, w: int) -> str:
    return truncate(r.frame, w)


FRAME_COLUMNS: list[Column[FrameRow, DeviceReport | None]] = [
    Column("Frame", lambda r, c, w: _frame(r, w), priority=KEEP, name=True, min_width=24),
    Column("Bytes", lambda r, c, w: fmt_memory(r.bytes), priority=KEEP),
    Column("Count", lambda r, c, w: f"{r.count:,}", priority=KEEP),
    Column("Share", lambda r, c, w: f"{100 * r.share:.1f}%", priority=1),
    Column("Op", lambda r, c, w: r.op, priority=3, left=True),
]
KEPT_COLUMNS: list[Column[FrameRow, DeviceReport | None]] = [
    *FRAME_COLUMNS[:3],
    FRAME_COLUMNS[4],
    Column("First alloc", lambda r, c, w: when(r.first_ns, c is None or c.timed), priority=1),
    Column("Last alloc", lambda r, c, w: when(r.last_ns, c is None or c.timed), priority=2),
]
STREAM_COLUMNS: list[Column[tuple[int, int, int, int], DeviceReport | None]] = [
    Column("Stream", lambda r, c, w: stream_name(r[0]), priority=KEEP),
    Column("Reserved", lambda r, c, w: fmt_memory(r[1]), priority=KEEP),
    Column("Free in segments", lambda r, c, w: fmt_memory(r[2]), priority=KEEP),
    Column("Largest free", lambda r, c, w: fmt_memory(r[3]), priority=KEEP),
]
OOM_COLUMNS: list[Column[OomRow, DeviceReport | None]] = [
    Column("At", lambda r, c, w: when(r.time_ns, c is None or c.timed), priority=KEEP),
    Column("Requested", lambda r, c, w: fmt_memory(r.requested_bytes), priority=KEEP),
    Column("CUDA free", lambda r, c, w: fmt_memory(r.device_free_bytes), priority=KEEP),
    Column("Free in pool", lambda r, c, w: fmt_memory(r.pool_free_bytes), priority=1),
    Column("Largest free", lambda r, c, w: fmt_memory(r.largest_free_bytes), priority=KEEP),
    Column("Why", lambda r, c, w: "fragmentation" if r.fragmentation else "memory in use", priority=KEEP),
    Column("Frame", lambda r, c, w: truncate(r.frame, w), priority=KEEP, name=True, min_width=20),
]


def device_reading(d: DeviceReport) -> list[str]:
    """The device's figures as sentences a person reads first."""
    s = d.segments
    out = [
        f"{d.name}: reserved {fmt_memory(d.reserved_bytes)} in {s.count:,} segments ({s.large:,} large, "
        f"{s.small:,} small), allocated {fmt_memory(d.allocated_bytes)} (requested {fmt_memory(d.requested_bytes)}; "
        f"the rest is the allocator's rounding)."
    ]
    if s.free_blocks:
        out.append(
            f"{fmt_memory(s.free_bytes)} is reserved but free, in {s.free_blocks:,} blocks; the largest is "
            f"{fmt_memory(s.largest_free_bytes)} (stream {stream_name(s.largest_free_stream)}, "
            f"{pool_name(s.largest_free_small)}): a larger request has to grow the pool with a new segment "
            f"(cudaMalloc), which fails when the device has no room left."
        )
    if s.pending_free_bytes:
        out.append(f"{fmt_memory(s.pending_free_bytes)} is freed but waits for another stream's work (record_stream).")
    if d.peak is not None:
        out.append(
            f"Peak of the history: {fmt_memory(d.peak.requested_bytes)} requested by {d.peak.allocations:,} live "
            f"allocations at {when(d.peak.time_ns, d.timed)}"
            + (f" (entry {d.peak.entry + 1:,} of {d.entries:,}), " if d.timed else f" of {d.entries:,}, ")
            + f"{fmt_memory(d.peak.reserved_bytes)} reserved then"
            + (
                f" (at most {fmt_memory(d.max_reserved_bytes)})."
                if d.max_reserved_bytes > d.peak.reserved_bytes
                else "."
            )
        )
    if d.held_count:
        out.append(HELD.format(size=fmt_memory(d.held_bytes), count=plural(d.held_count, "allocation")))
    out += [oom_reading(d, r) for r in d.ooms]
    return out + [f"{d.name}: {n}." for n in d.notes]


HELD = (
    "{size} in {count} made before the history and alive to its end: held for the whole run (model or optimizer "
    "state), not leak candidates."
)


def oom_reading(d: DeviceReport, r: OomRow) -> str:
    """Why a request failed: the pool had the bytes free but in pieces (fragmentation), or they were in use."""
    head = (
        f"Out of memory at {when(r.time_ns, d.timed)}: {fmt_memory(r.requested_bytes)} requested on stream "
        f"{stream_name(r.stream)} from {r.frame}; CUDA had {fmt_memory(r.device_free_bytes)} free, the allocator "
        f"held {fmt_memory(r.reserved_bytes)}"
    )
    if r.fragmentation:
        return (
            f"{head}, {fmt_memory(r.pool_free_bytes)} of it free in the {pool_name(r.small)} of that stream but in "
            f"pieces, the largest {fmt_memory(r.largest_free_bytes)}: fragmentation. "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets segments grow instead of splitting."
        )
    free = (
        ", none of it free for this request"
        if not r.pool_free_bytes
        else f", {fmt_memory(r.pool_free_bytes)} of it free for this request (largest block "
        f"{fmt_memory(r.largest_free_bytes)})"
    )
    if r.other_streams_free_bytes:
        free += (
            f"; {fmt_memory(r.other_streams_free_bytes)} is free in other streams' segments, which a request "
            f"on stream {stream_name(r.stream)} cannot use"
        )
    return (
        f"{head}{free}; live allocations held {fmt_memory(r.live_bytes)}: the memory is in use, not fragmented. "
        "See what was alive then, by frame."
    )


def _frame_fields(r: FrameRow, timed: bool) -> dict[str, Any]:
    return {
        "frame": r.frame,
        "kind": r.kind,
        "bytes": r.bytes,
        "count": r.count,
        "share": round(r.share, 6),
        "op": r.op,
        "first_alloc_us": _time_us(r.first_ns, timed),
        "last_alloc_us": _time_us(r.last_ns, timed),
    }


def _oom_fields(r: OomRow, timed: bool) -> dict[str, Any]:
    return {
        "time_us": _time_us(r.time_ns, timed),
        "entry": r.entry,
        "requested_bytes": r.requested_bytes,
        "device_free_bytes": r.device_free_bytes,
        "stream": r.stream,
        "pool": "small" if r.small else "large",
        "reserved_bytes": r.reserved_bytes,
        "pool_free_bytes": r.pool_free_bytes,
        "largest_free_bytes": r.largest_free_bytes,
        "live_requested_bytes": r.live_bytes,
        "other_streams_free_bytes": r.other_streams_free_bytes,
        "why": "fragmentation" if r.fragmentation else "in use",
        "frame": r.frame,
    }


def device_fields(d: DeviceReport) -> dict[str, Any]:
    """One device of `tracetui memory SNAPSHOT --format json`."""
    s = d.segments
    peak = d.peak
    return {
        "device": d.name,
        "reserved_bytes": d.reserved_bytes,
        "allocated_bytes": d.allocated_bytes,
        "requested_bytes": d.requested_bytes,
        "peak": None
        if peak is None
        else {
            "time_us": _time_us(peak.time_ns, d.timed),
            "entry": peak.entry,
            "requested_bytes": peak.requested_bytes,
            "allocations": peak.allocations,
            "reserved_bytes": peak.reserved_bytes,
        },
        "max_reserved_bytes": d.max_reserved_bytes,
        "by_frame": [_frame_fields(r, d.timed) for r in d.by_frame],
        "segments": {
            "count": s.count,
            "large": s.large,
            "small": s.small,
            "reserved_bytes": s.reserved_bytes,
            "allocated_bytes": s.allocated_bytes,
            "free_bytes": s.free_bytes,
            "free_blocks": s.free_blocks,
            "pending_free_bytes": s.pending_free_bytes,
            "largest_free_bytes": s.largest_free_bytes,
            "largest_free_stream": s.largest_free_stream,
            "largest_free_pool": "small" if s.largest_free_small else "large",
            "streams": [
                {"stream": st, "reserved_bytes": r, "free_bytes": f, "largest_free_bytes": lf}
                for st, r, f, lf in s.streams
            ],
        },
        "never_freed": [_frame_fields(r, d.timed) for r in d.never_freed],
        "never_freed_bytes": d.never_freed_bytes,
        "never_freed_count": d.never_freed_count,
        "held_for_the_run_bytes": d.held_bytes,  # alive from before the history to its end: not leak candidates
        "held_for_the_run_count": d.held_count,
        "ooms": [_oom_fields(r, d.timed) for r in d.ooms],
        "entries": d.entries,
        "actions": d.actions,
        "span_us": _time_us(d.span_ns, d.timed),
        "notes": d.notes,
    }


CSV_KEYS = (
    "device",
    "reserved_bytes",
    "allocated_bytes",
    "requested_bytes",
    "max_reserved_bytes",
    "never_freed_bytes",
    "never_freed_count",
    "entries",
    "span_us",
)
PEAK_KEYS = ("time_us", "requested_bytes", "allocations", "reserved_bytes")


def csv_row(d: DeviceReport) -> dict[str, Any]:
    """One CSV row per device: the scalar figures, the peak's and the segments' flattened."""
    f = device_fields(d)
    row = {k: f[k] for k in CSV_KEYS}
    peak = f["peak"] or {}
    row |= {f"peak_{k}": peak.get(k, "") for k in PEAK_KEYS}
    row |= {f"segments_{k}": f["segments"][k] for k in ("count", "free_bytes", "largest_free_bytes")}
    row["ooms"] = len(d.ooms)
    return row


def head_line(r: SnapshotReport) -> str:
    """What the file is: its devices and history."""
    devices = ", ".join(d.name for d in r.devices) or "no device"
    if not r.has_history:
        return f"Snapshot {r.path}: {devices}; no history, segments only (record one with {RECORD})."
    spans = [d for d in r.devices if d.entries]
    entries = sum(d.entries for d in spans)
    span = max((d.span_ns for d in spans), default=0)
    timed = f" over {fmt_time(_us(span))}" if r.timed else " (no times: torch before 2.1)"
    return f"Snapshot {r.path}: {devices}; {entries:,} history entries{timed}."


def footers(r: SnapshotReport) -> list[str]:
    out = [
        "Allocated: the used blocks (torch.cuda.memory_allocated); requested: the bytes asked for. "
        "At: from the history's first entry."
    ]
    if r.skipped:
        out.append(f"{r.skipped:,} entries or blocks were not readable and were skipped.")
    return out


def join_line(j: Joined) -> str:
    """How many of a device's allocations found their snapshot allocation, and the clocks' offset."""
    if j.reason:
        return f"{j.device}: none of the trace's {len(j.samples):,} allocations matched: {j.reason}."
    return (
        f"{j.device}: {j.matched:,} of the trace's {len(j.samples):,} allocations matched the snapshot's by address "
        f"and time (the snapshot's clock {j.offset_ns / 1000:+,.1f} us from the trace's)."
    )


JOIN_COLUMNS: list[Column[JoinRow, None]] = [
    Column("Frame (snapshot)", lambda r, c, w: truncate(r.frame, w), priority=KEEP, name=True, min_width=24),
    Column("Op (trace)", lambda r, c, w: r.op, priority=1, left=True),
    Column("Bytes", lambda r, c, w: fmt_memory(r.bytes), priority=KEEP),
    Column("Count", lambda r, c, w: f"{r.count:,}", priority=KEEP),
]


def join_fields(j: Joined, rows: list[JoinRow]) -> dict[str, Any]:
    return {
        "device": j.device,
        "allocations": len(j.samples),
        "matched": j.matched,
        "offset_us": j.offset_ns / 1000,
        "reason": j.reason or None,
        "by_frame": [{"frame": r.frame, "op": r.op, "bytes": r.bytes, "count": r.count} for r in rows],
    }
