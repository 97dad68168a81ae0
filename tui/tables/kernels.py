"""The kernels table: per GPU kernel (and memcpy/memset) statistics, and the footprint in the viewer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..model.analyses.critical.queue import LaunchQueues, StreamQueue
from ..model.analyses.kernel_roles import runs_on
from ..model.analyses.kernels import KernelRow
from ..text.fmt import fmt_memory, fmt_number, fmt_time, plural, truncate
from ..text.names import shorten
from .base import KEEP, Column, Field, SortKey, UnknownSort

NAME_WIDTH = 110
SORTS = {
    "total": SortKey("total_us", means="device_total"),
    "count": SortKey("count", means="calls"),
    "avg": SortKey("avg_us", means="device_avg"),
    "min": SortKey("min_us", means="min"),
    "max": SortKey("max_us", means="max"),
    "std": SortKey("std_us", means="std"),
    "latency": SortKey("latency_median_us", means="latency"),
    "latency_p95": SortKey("latency_p95_us", means="latency_p95"),
    "name": SortKey("name", False, "name"),
}
DEFAULT_SORT = "total"
OCCUPANCY = "est. achieved occupancy %"
SHARED = "shared memory"  # bytes per block
OCCUPANCY_HEADER = "Occupancy %"
# The footprint from one example kernel's args: (header, args key, the viewer's sort key: "" for none).
FOOTPRINT = (
    ("Grid", "grid", ""),
    ("Block", "block", ""),
    ("Regs", "registers per thread", "registers"),
    ("Shared mem", SHARED, "shared_memory"),
    (OCCUPANCY_HEADER, OCCUPANCY, "occupancy"),
)


@dataclass(frozen=True)
class Footprint:
    """How the viewer reads an example kernel's args and its launch-to-start latency (the headless table leaves
    them out)."""

    arg: Callable[[int, str], str]  # (event, args key) -> text


def resolve_sort(key: str | None) -> str:
    key = key or DEFAULT_SORT
    if key not in SORTS:
        raise UnknownSort(key, list(SORTS))
    return key


def _latency(value: float | None) -> str:
    return "-" if value is None else fmt_time(value)


LATENCY_NOTE = "Launch→start: the launch latency, from the launch call's start to the kernel's start (median, p95)"


def columns(footprint: Footprint | None = None) -> list[Column[KernelRow, Footprint | None]]:
    cols: list[Column[KernelRow, Footprint | None]] = [
        Column("Name", lambda r, c, w: truncate(r.name, w), "name", KEEP, name=True, min_width=20),
        Column("Kind", lambda r, c, w: r.kind, priority=4),
        Column("Role", lambda r, c, w: r.role, priority=3),
        Column("Runs on", lambda r, c, w: runs_on(r.name, r.unit, r.dtype), priority=4),  # before names get too short
        Column("# of Calls", lambda r, c, w: str(r.count), "count", KEEP),
        Column("Total", lambda r, c, w: fmt_time(r.total_us), "total", KEEP),
        Column("Avg", lambda r, c, w: fmt_time(r.avg_us), "avg", 1),
        Column("Min", lambda r, c, w: fmt_time(r.min_us), "min", 3),
        Column("Max", lambda r, c, w: fmt_time(r.max_us), "max", 3),
        Column("Std", lambda r, c, w: "-" if r.std_us is None else fmt_time(r.std_us), "std", 3),
        Column("% GPU time", lambda r, c, w: f"{r.pct_gpu:.2f}%", "total", 1),
        Column("Launch→start median", lambda r, c, w: _latency(r.latency_median_us), "latency", 2),
        Column("Launch→start p95", lambda r, c, w: _latency(r.latency_p95_us), "latency_p95", 3),
    ]
    if footprint is not None:
        cols += [_footprint_column(header, key, sort) for header, key, sort in FOOTPRINT]
    return cols


def footprint_figure(key: str, value: object) -> str:
    """A figure of a kernel's args as the table and the details panel say it: shared memory in bytes' units
    (231424 reads 226.00 KiB), an occupancy estimate of 0 as "-" (none made), any other as fmt_number says it."""
    text = fmt_number(value)
    if key == SHARED and text.isdigit():
        return fmt_memory(int(text))
    return "-" if _unestimated(key, text) else text


def _footprint_column(header: str, key: str, sort: str) -> Column[KernelRow, Footprint | None]:
    def text(r: KernelRow, c: Footprint | None, w: int) -> str:
        return footprint_figure(key, c.arg(r.example, key)) if c else "-"

    return Column(header, text, sort or None, priority=3)


def _unestimated(key: str, value: object) -> bool:
    """An occupancy of 0: the profiler did not estimate it (a kernel cannot run at none)."""
    return key == OCCUPANCY and value in ("0", 0.0)


def unestimated_note(rows: list[KernelRow], footprint: Footprint) -> list[str]:
    """Why Occupancy % reads "-" for kernels whose args have one: the trace's estimate is 0, that is none made."""
    count = sum(_unestimated(OCCUPANCY, fmt_number(footprint.arg(r.example, OCCUPANCY))) for r in rows)
    if not count:
        return []
    return [f"{OCCUPANCY_HEADER} -: the trace estimates 0% for {plural(count, 'kernel')}, that is none made"]


def footprint_sorts(footprint: Footprint | None) -> dict[str, SortKey]:
    """The viewer's sort keys of the footprint's numbers (registers, shared memory, occupancy), read from the
    example's args as the columns read them; a kernel whose args lack the figure sorts last."""

    def figure(key: str) -> Callable[[KernelRow], float | None]:
        def get(r: KernelRow) -> float | None:
            try:
                value = float(footprint.arg(r.example, key)) if footprint else None
            except ValueError:  # "-": not in its args
                return None
            return None if _unestimated(key, value) else value

        return get

    return {sort: SortKey(sort, means=sort, get=figure(key)) for _, key, sort in FOOTPRINT if sort}


FOOTPRINT_SORTS = footprint_sorts(None)  # for the view's bindings, made before it has the args


V = "VARCHAR"
FIELDS: list[Field[KernelRow]] = [
    Field("name", lambda r: r.name, "the kernel's (or memcpy's, memset's) name", V),
    Field("kind", lambda r: r.kind, "kernel, memcpy or memset", V),
    Field(
        "role",
        lambda r: r.role,
        "what it does, read from its name (GEMM, attention, collective, Triton pointwise, ...)",
        V,
    ),
    Field(
        "unit",
        lambda r: r.unit or None,
        "where its math runs, read from its name: matrix (tensor / matrix cores), vector (CUDA cores; NULL: unsaid)",
        V,
    ),
    Field(
        "dtype",
        lambda r: r.dtype or None,
        "the dtype of that math, where the name says it (bf16, fp32, tf32, ...; else NULL)",
        V,
    ),
    Field("count", lambda r: r.count, "how many ran", "BIGINT"),
    Field("total_us", lambda r: r.total_us, "their total time"),
    Field("avg_us", lambda r: r.avg_us, "average"),
    Field("min_us", lambda r: r.min_us, "shortest"),
    Field("max_us", lambda r: r.max_us, "longest"),
    Field(
        "std_us",
        lambda r: r.std_us,
        "sample standard deviation of its durations (n - 1, as HTA's kernel breakdown; NULL: it ran once)",
    ),
    Field("pct_gpu", lambda r: r.pct_gpu, "% of all device time"),
    Field(
        "launch_latency_median_us",
        lambda r: r.latency_median_us,
        "launch latency, the launch call's start to the kernel's start: median (NULL: none)",
    ),
    Field(
        "launch_latency_p95_us",
        lambda r: r.latency_p95_us,
        "launch latency: 95th percentile (NULL: no launch call linked)",
    ),
]


def footers(rows: list[KernelRow], none: str) -> list[str]:
    """The totals under the rows; none (what the trace says of the GPU: summary.no_gpu_text) when there are none."""
    if not rows:
        return [none]
    total = sum(r.total_us for r in rows)
    calls = plural(sum(r.count for r in rows), "call")
    return [f"GPU activity total: {fmt_time(total)} in {calls}", LATENCY_NOTE + "."]


def totals(rows: list[KernelRow]) -> dict[str, float]:
    return {"gpu_time_us": sum(r.total_us for r in rows)}


VERDICT = {"empty": "always empty: the CPU cannot keep it fed", "full": "always full: the CPU waits on it"}


def queue_footers(queues: LaunchQueues, name_of: Callable[[int], str], most: int = 3, streams: int = 3) -> list[str]:
    """Per stream, the busiest first: its launch queue's depth, launch-to-start latency and its outliers, named
    (the viewer's footer; `streams` of them, then how many more)."""
    ranked = sorted(queues.streams, key=lambda q: (not q.verdict, -q.activities))
    out = [_queue_line(q, queues.stream_names.get(q.track, str(q.track)), name_of, most) for q in ranked[:streams]]
    if len(ranked) > streams:
        out.append(f"… and {plural(len(ranked) - streams, 'more stream')} with launched work")
    return out


def _queue_line(q: StreamQueue, stream: str, name_of: Callable[[int], str], most: int) -> str:
    verdict = f", {VERDICT[q.verdict]}" if q.verdict else ""
    line = (
        f"{stream}: {plural(q.activities, 'launch', 'launches')}, queue up to {q.max_length:,} (mean {q.mean_length:.1f}){verdict}; "
        f"launch→start {fmt_time(q.median_latency_ns / 1000)} median, {fmt_time(q.p95_latency_ns / 1000)} p95"
    )
    if q.outlier_count:
        named = ", ".join(shorten(name_of(e), 40) for e in q.outliers[:most])  # cut in the middle, as every name
        line += f"; {plural(q.outlier_count, 'outlier')} ≥10× the median, slowest: {named}"
    return line
