"""The ops table (torch's key_averages().table()): columns, JSON fields, sort keys, footers."""

from __future__ import annotations

from ..fmt import compact_shapes, fmt_memory, fmt_share, fmt_time, truncate
from ..model.analyses.ops import OpRow, OpsTable
from .base import KEEP, Column, Field, SortKey, UnknownSort

NAME_WIDTH = 55  # torch's name column

SORTS = {
    "self_cpu": SortKey("self_cpu_us", means="self_cpu"),
    "cpu_total": SortKey("cpu_total_us", means="cpu_total"),
    "cpu_avg": SortKey("cpu_avg_us", means="cpu_avg"),
    "self_device": SortKey("self_device_us", means="self_device"),
    "device_total": SortKey("device_total_us", means="device_total"),
    "device_avg": SortKey("device_avg_us", means="device_avg"),
    "count": SortKey("count", means="calls"),
    "name": SortKey("name", False, "name"),
}
VIEWER_SORTS = SORTS  # the viewer's columns hold torch's numbers too
# torch's sort_by spellings, and cuda/gpu for device.
ALIASES = {
    "self_cpu_time_total": "self_cpu",
    "cpu_time_total": "cpu_total",
    "cpu_time": "cpu_avg",
    "self_cuda_time_total": "self_device",
    "cuda_time_total": "device_total",
    "cuda_time": "device_avg",
    "self_device_time_total": "self_device",
    "device_time_total": "device_total",
    "device_time": "device_avg",
    "self_cuda": "self_device",
    "cuda_total": "device_total",
    "self_gpu": "self_device",
    "gpu_total": "device_total",
    "calls": "count",
}


def default_sort(t: OpsTable) -> str:
    return "device_total" if t.has_device else "cpu_total"


def check_sort(key: str | None) -> str | None:
    """The user's sort key in our spelling (torch's names accepted); UnknownSort for anything else."""
    if key is None:
        return None
    ours = ALIASES.get(key, key)
    if ours not in SORTS:
        raise UnknownSort(key, list(SORTS))
    return ours


def resolve_sort(key: str | None, t: OpsTable) -> str:
    """The sort key to use: the user's, else CUDA total with GPU work, CPU total without."""
    return check_sort(key) or default_sort(t)


def _device_share(r: OpRow, t: OpsTable, viewer: bool) -> str:
    """Self CUDA as a share of the Self CUDA total; in the viewer a GPU annotation row says span (its time is the
    span it covers, over kernels counted in their own rows, so torch's share can pass 100%)."""
    return "span" if viewer and r.is_gpu_annotation else fmt_share(r.self_device_us, t.self_device_total_us)


def device_columns(viewer: bool = False) -> list[Column[OpRow, OpsTable]]:
    """torch's device columns; the viewer says span where torch's share of a GPU annotation row passes 100%."""
    return [
        Column("Self CUDA", lambda r, t, w: fmt_time(r.self_device_us), "self_device", KEEP),
        Column("Self CUDA %", lambda r, t, w: _device_share(r, t, viewer), "self_device", 2),
        Column("CUDA total", lambda r, t, w: fmt_time(r.device_total_us), "device_total", KEEP),
        Column("CUDA time avg", lambda r, t, w: fmt_time(r.device_avg_us), "device_avg", 2),
    ]


def columns(t: OpsTable, grouped: bool, viewer: bool = False) -> list[Column[OpRow, OpsTable]]:
    """The columns torch's table has for this trace: device columns with GPU work, memory ones when profiled.

    viewer: the same numbers, with span for a GPU annotation row's share (see _device_share).
    """
    cols: list[Column[OpRow, OpsTable]] = [
        Column("Name", lambda r, t, w: truncate(r.name, w), "name", KEEP, name=True, min_width=20, torch=True),
        Column("Self CPU %", lambda r, t, w: fmt_share(r.self_cpu_us, t.self_cpu_total_us), "self_cpu", 3),
        Column("Self CPU", lambda r, t, w: fmt_time(r.self_cpu_us), "self_cpu", KEEP),
        Column("CPU total %", lambda r, t, w: fmt_share(r.cpu_total_us, t.self_cpu_total_us), "cpu_total", 3),
        Column("CPU total", lambda r, t, w: fmt_time(r.cpu_total_us), "cpu_total", KEEP),
        Column("CPU time avg", lambda r, t, w: fmt_time(r.cpu_avg_us), "cpu_avg", 2),
    ]
    if t.has_device:
        cols += device_columns(viewer)
    if t.has_memory:
        cols += [
            Column("CPU Mem", lambda r, t, w: fmt_memory(r.cpu_mem), priority=5),
            Column("Self CPU Mem", lambda r, t, w: fmt_memory(r.self_cpu_mem), priority=4),
        ]
        if t.has_device_memory:
            cols += [
                Column("CUDA Mem", lambda r, t, w: fmt_memory(r.device_mem), priority=5),
                Column("Self CUDA Mem", lambda r, t, w: fmt_memory(r.self_device_mem), priority=4),
            ]
    cols.append(Column("# of Calls", lambda r, t, w: str(r.count), "count", KEEP))
    if grouped:
        cols.append(
            Column(
                "Input Shapes",
                lambda r, t, w: r.input_shapes or "",
                priority=1,
                fold=lambda r: compact_shapes(r.input_shapes) if r.input_shapes not in (None, "", "[]") else "",
            )
        )
    return cols


def fields(grouped: bool, memory: bool) -> list[Field[OpRow]]:
    """The JSON keys of a row (and the CSV header), in order."""
    out: list[Field[OpRow]] = [
        Field("name", lambda r: r.name),
        Field("count", lambda r: r.count),
        Field("self_cpu_us", lambda r: r.self_cpu_us),
        Field("cpu_total_us", lambda r: r.cpu_total_us),
        Field("self_device_us", lambda r: r.self_device_us),
        Field("device_total_us", lambda r: r.device_total_us),
        Field("kind", lambda r: "device" if r.is_device else "host"),
    ]
    if memory:
        out += [
            Field("cpu_memory_bytes", lambda r: r.cpu_mem),
            Field("self_cpu_memory_bytes", lambda r: r.self_cpu_mem),
            Field("device_memory_bytes", lambda r: r.device_mem),
            Field("self_device_memory_bytes", lambda r: r.self_device_mem),
        ]
    if grouped:
        out.append(Field("input_shapes", lambda r: r.input_shapes))
    return out


def footers(t: OpsTable, viewer: bool = False) -> list[str]:
    """torch's footer lines, how device time was attributed when it is not torch's way, and what a GPU annotation
    row's CUDA time is (the viewer's note is short: its share column says span)."""
    lines = [f"Self CPU time total: {fmt_time(t.self_cpu_total_us)}"]
    if t.has_device:
        lines.append(f"Self CUDA time total: {fmt_time(t.self_device_total_us)}")
    if t.device_link != "External id":
        lines.append("(CUDA time per op via the launching call: this trace's GPU events do not name their op)")
    if t.spans:
        lines.append(viewer_span_note(t) if viewer else span_note(t))
    return lines


def _span_names(t: OpsTable) -> str:
    names = list(dict.fromkeys(r.name for r in t.spans))
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def viewer_span_note(t: OpsTable) -> str:
    return f"{_span_names(t)} on the GPU: annotation spans, not work (Self CUDA % says span)"


def span_note(t: OpsTable) -> str:
    """What torch does with a GPU annotation: a row of its own timed by its span, in no CPU op's CUDA time."""
    return (
        f"({_span_names(t)} on the GPU: a GPU-side annotation row, timed by the span it covers on the GPU; the kernels "
        "inside it are counted in their own rows, so its Self CUDA % can pass 100%. As in torch, the Self CUDA total "
        "leaves it out, and a CPU op's CUDA time counts only the kernels, copies and sets launched under it.)"
    )


def totals(t: OpsTable) -> dict[str, float]:
    """The footers as JSON fields."""
    return {"self_cpu_total_us": t.self_cpu_total_us, "self_device_total_us": t.self_device_total_us}


def hidden_note(hidden: list[OpRow]) -> str:
    """Say what --hide-python left out (the footers above still count it, as torch's do)."""
    own = sum(r.self_cpu_us for r in hidden)
    return f"({len(hidden):,} Python-frame rows hidden, {fmt_time(own)} of self CPU; the totals above include them)"
