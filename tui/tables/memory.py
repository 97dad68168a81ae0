"""The memory tables (`tracetui memory`, the overview): one row per device, the top ops and candidate leaks."""

from __future__ import annotations

from typing import Any

from ..fmt import fmt_memory, fmt_time, truncate
from ..model.analyses.memory import DeviceMemory, MemOp
from .base import Column

NO_MEMORY = "no memory events: capture with profile_memory=True (tracetui profile --profile-memory)"


def _reserved(d: DeviceMemory) -> str:
    return fmt_memory(d.peak_reserved_bytes) if d.peak_reserved_bytes >= 0 else "-"


def peak_op(d: DeviceMemory) -> str:
    return d.peak_op if d.peak_top_op in (d.peak_op, "") else f"{d.peak_op} in {d.peak_top_op}"


DEVICE_COLUMNS: list[Column[DeviceMemory, None]] = [
    Column("Device", lambda d, c, w: d.device),
    Column("Peak allocated", lambda d, c, w: fmt_memory(d.peak_allocated_bytes)),
    Column("Peak reserved", lambda d, c, w: _reserved(d)),
    Column("At", lambda d, c, w: fmt_time(d.peak_ts_us)),
    Column("Allocs", lambda d, c, w: f"{d.allocs:,}"),
    Column("Frees", lambda d, c, w: f"{d.frees:,}"),
    Column("Not freed", lambda d, c, w: fmt_memory(d.leaked_bytes)),
    Column("Op at the peak", lambda d, c, w: truncate(peak_op(d), 60)),
]
OP_COLUMNS: list[Column[MemOp, None]] = [
    Column("Op", lambda r, c, w: truncate(r.op, w)),
    Column("Bytes", lambda r, c, w: fmt_memory(r.bytes)),
    Column("Count", lambda r, c, w: f"{r.count:,}"),
    Column("Your code", lambda r, c, w: truncate(r.stack[-1], 60) if r.stack else ""),
]
NAME_WIDTH = 60


def _op(r: MemOp) -> dict[str, Any]:
    return {"op": r.op, "bytes": r.bytes, "count": r.count, "stack": r.stack}


def device_fields(d: DeviceMemory) -> dict[str, Any]:
    """One device of `tracetui memory --format json`."""
    return {
        "device": d.device,
        "peak_allocated_bytes": d.peak_allocated_bytes,
        "peak_reserved_bytes": d.peak_reserved_bytes if d.peak_reserved_bytes >= 0 else None,
        "peak_ts_us": d.peak_ts_us,
        "peak_op": d.peak_op,
        "peak_top_op": d.peak_top_op,
        "allocs": d.allocs,
        "frees": d.frees,
        "top_ops": [_op(r) for r in d.top_ops],
        "leaks": [_op(r) for r in d.leaks],
        "leaked_bytes": d.leaked_bytes,
        "source": d.source,
    }


CSV_KEYS = (
    "device",
    "peak_allocated_bytes",
    "peak_reserved_bytes",
    "peak_ts_us",
    "peak_op",
    "allocs",
    "frees",
    "leaked_bytes",
)


def footers(devices: list[DeviceMemory]) -> list[str]:
    out = ["At: from the start of the window. Not freed: allocated in the window and not freed before it ends."]
    if any(d.source != "Total Allocated" for d in devices):
        out.append(
            "This trace's [memory] events carry no Total Allocated: the curve is the running sum of Bytes from the window's start."
        )
    return out
