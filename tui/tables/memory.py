"""The memory tables (`tracetui memory`, the overview): one row per device, the top ops and candidate leaks."""

from __future__ import annotations

from typing import Any

from ..model.analyses.memory import DeviceMemory, MemOp
from ..text.fmt import fmt_memory, fmt_time, truncate
from .base import KEEP, Column

NO_MEMORY = "no memory events: capture with profile_memory=True (tracetui profile --profile-memory)"


def _reserved(d: DeviceMemory) -> str:
    """Reserved bytes: "-" where the trace writes none, or on the CPU, whose allocator keeps no cache (torch writes
    Total Reserved 0 for it)."""
    return "-" if d.peak_reserved_bytes < 0 or _no_cache(d) else fmt_memory(d.peak_reserved_bytes)


def _no_cache(d: DeviceMemory) -> bool:
    return d.device == "cpu" and d.peak_reserved_bytes == 0


def peak_op(d: DeviceMemory) -> str:
    return d.peak_op if d.peak_top_op in (d.peak_op, "") else f"{d.peak_op} in {d.peak_top_op}"


DEVICE_COLUMNS: list[Column[DeviceMemory, None]] = [
    Column("Device", lambda d, c, w: d.device, priority=KEEP),
    Column("Peak allocated", lambda d, c, w: fmt_memory(d.peak_allocated_bytes), priority=KEEP),
    Column("Peak reserved", lambda d, c, w: _reserved(d), priority=1),
    Column("At", lambda d, c, w: fmt_time(d.peak_ts_us), priority=2),
    Column("Allocs", lambda d, c, w: f"{d.allocs:,}", priority=2),
    Column("Frees", lambda d, c, w: f"{d.frees:,}", priority=2),
    Column("Not freed", lambda d, c, w: fmt_memory(d.leaked_bytes), priority=1),
    Column(
        "Op at the peak", lambda d, c, w: truncate(peak_op(d), w), priority=KEEP, name=True, min_width=20, left=True
    ),
]
OP_COLUMNS: list[Column[MemOp, None]] = [
    Column("Op", lambda r, c, w: truncate(r.op, w), priority=KEEP, name=True, min_width=16),
    Column("Bytes", lambda r, c, w: fmt_memory(r.bytes), priority=KEEP),
    Column("Count", lambda r, c, w: f"{r.count:,}", priority=KEEP),
    # the code line tells rows of one op apart (four aten::empty of one Linear module read as one row without it):
    # the module gives way first, and a code line with no room joins the op's name
    Column("Module", lambda r, c, w: r.module, priority=2, left=True),
    Column("Code line", lambda r, c, w: r.line, priority=1, left=True, fold=lambda r: r.line),
]
NAME_WIDTH = 60


def op_columns(rows: list[MemOp]) -> list[Column[MemOp, None]]:
    """The op table's columns; Module and Code line only when the trace has Python frames to name them."""
    empty = {"Module": not any(r.module for r in rows), "Code line": not any(r.line for r in rows)}
    return [c for c in OP_COLUMNS if not empty.get(c.header, False)]


def _op(r: MemOp) -> dict[str, Any]:
    return {"op": r.op, "bytes": r.bytes, "count": r.count, "module": r.module, "line": r.line, "stack": r.stack}


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
    out = [
        "At: from the trace's first event, as every time tracetui prints. Not freed: allocated in the window and not "
        "freed before it ends."
    ]
    if any(_no_cache(d) for d in devices):
        out.append("Peak reserved: the caching allocator's (CUDA, ROCm); the CPU's allocator keeps none (-).")
    if any(d.source != "Total Allocated" for d in devices):
        out.append(
            "This trace's [memory] events carry no Total Allocated: the curve is the running sum of Bytes from the window's start."
        )
    return out
