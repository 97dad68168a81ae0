"""The ops table (torch's key_averages().table()): columns, JSON fields, sort keys, footers."""

from __future__ import annotations

import re
from dataclasses import replace

from ..model.analyses.ops import OpRow, OpsTable, footer_totals
from ..text.fmt import compact_shapes, fmt_memory, fmt_share, torch_time, truncate
from .base import KEEP, SORT_LETTERS, Column, Field, SortKey, UnknownSort, sort_rows

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
    # The memory columns (with profile_memory): bytes allocated, net; freed (negative) last.
    "self_cpu_memory": SortKey("self_cpu_mem", means="self_cpu_memory"),
    "cpu_memory": SortKey("cpu_mem", means="cpu_memory"),
    "self_device_memory": SortKey("self_device_mem", means="self_device_memory"),
    "device_memory": SortKey("device_mem", means="device_memory"),
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
    "self_cpu_memory_usage": "self_cpu_memory",
    "cpu_memory_usage": "cpu_memory",
    "self_cuda_memory_usage": "self_device_memory",
    "cuda_memory_usage": "device_memory",
    "self_device_memory_usage": "self_device_memory",
    "device_memory_usage": "device_memory",
}


def has_column(key: str, t: OpsTable) -> bool:
    """Whether the table has a column to sort by key (the viewer offers only those keys; the command sorts by any,
    as torch does): CUDA columns need device work, memory ones a trace that recorded memory (see columns)."""
    if key in ("self_device", "device_total", "device_avg"):
        return t.has_device
    if key in ("self_cpu_memory", "cpu_memory"):
        return t.has_memory
    if key in ("self_device_memory", "device_memory"):
        return t.has_memory and t.has_device_memory
    return key in SORTS


def unsorted_note(key: str, t: OpsTable) -> list[str]:
    """Why the rows keep their order where the sort's column is not in this trace (torch sorts by it all the same):
    every row's value is 0."""
    if has_column(key, t):
        return []
    lacks = "recorded no memory (profile_memory=True records it)" if key.endswith("_memory") else "has no GPU work"
    words = SORT_LETTERS[SORTS[key].means].words
    return [f"(sorted by {words}, but this trace {lacks}: every row reads 0, so the rows keep the table's own order)"]


def default_sort(t: OpsTable) -> str:
    return "device_total" if t.has_device else "cpu_total"


def check_sort(key: str | None) -> str | None:
    """The user's sort key in our spelling (torch's names accepted); UnknownSort for anything else."""
    if key is None:
        return None
    ours = ALIASES.get(key, key)
    if ours not in SORTS:
        raise UnknownSort(key, list(SORTS), " (or torch's sort_by names: cuda_time_total, self_cpu_time_total...)")
    return ours


def resolve_sort(key: str | None, t: OpsTable) -> str:
    """The sort key to use: the user's, else CUDA total with GPU work, CPU total without."""
    return check_sort(key) or default_sort(t)


def sorted_table(t: OpsTable, key: str) -> tuple[OpsTable, list[OpRow]]:
    """The rows sorted by key (one of SORTS), and the table with its footers added up in that order, as torch's
    table() adds them: the order decides the last bit, and so a total on an exact half of its last digit."""
    rows = sort_rows(t.rows, SORTS, key)
    self_cpu, self_dev = footer_totals(rows)
    return replace(t, self_cpu_total_us=self_cpu, self_device_total_us=self_dev), rows


def _device_share(r: OpRow, t: OpsTable, viewer: bool) -> str:
    """Self CUDA as a share of the Self CUDA total; in the viewer a GPU annotation row says span (its time is the
    span it covers, over kernels counted in their own rows, so torch's share can pass 100%)."""
    return "span" if viewer and r.is_gpu_annotation else fmt_share(r.self_device_us, t.self_device_total_us)


GPU_SIDE = " (GPU)"


def _name(r: OpRow, width: int, viewer: bool) -> str:
    """The row's name; in the viewer a GPU annotation row says (GPU): torch names it as its CPU row (ProfilerStep*
    twice), and the columns that tell them apart may not fit."""
    if viewer and r.is_gpu_annotation:
        return truncate(r.name, max(width - len(GPU_SIDE), 1)) + GPU_SIDE
    return truncate(r.name, width)


def device_columns(viewer: bool = False) -> list[Column[OpRow, OpsTable]]:
    """torch's device columns; the viewer says span where torch's share of a GPU annotation row passes 100%."""
    return [
        Column("Self CUDA", lambda r, t, w: torch_time(r.self_device_us), "self_device", KEEP),
        Column("Self CUDA %", lambda r, t, w: _device_share(r, t, viewer), "self_device", 2),
        Column("CUDA total", lambda r, t, w: torch_time(r.device_total_us), "device_total", KEEP),
        Column("CUDA time avg", lambda r, t, w: torch_time(r.device_avg_us), "device_avg", 2),
    ]


def columns(t: OpsTable, grouped: bool, viewer: bool = False) -> list[Column[OpRow, OpsTable]]:
    """The columns torch's table has for this trace: device columns with GPU work, memory ones when profiled.

    viewer: the same numbers, with span for a GPU annotation row's share (see _device_share).
    """
    cols: list[Column[OpRow, OpsTable]] = [
        Column("Name", lambda r, t, w: _name(r, w, viewer), "name", KEEP, name=True, min_width=20, torch=True),
        Column("Self CPU %", lambda r, t, w: fmt_share(r.self_cpu_us, t.self_cpu_total_us), "self_cpu", 3),
        Column("Self CPU", lambda r, t, w: torch_time(r.self_cpu_us), "self_cpu", KEEP),
        Column("CPU total %", lambda r, t, w: fmt_share(r.cpu_total_us, t.self_cpu_total_us), "cpu_total", 3),
        Column("CPU total", lambda r, t, w: torch_time(r.cpu_total_us), "cpu_total", KEEP),
        Column("CPU time avg", lambda r, t, w: torch_time(r.cpu_avg_us), "cpu_avg", 2),
    ]
    if t.has_device:
        cols += device_columns(viewer)
    if t.has_memory:
        cols += [
            Column("CPU Mem", lambda r, t, w: fmt_memory(r.cpu_mem), "cpu_memory", 5),
            Column("Self CPU Mem", lambda r, t, w: fmt_memory(r.self_cpu_mem), "self_cpu_memory", 4),
        ]
        if t.has_device_memory:
            cols += [
                Column("CUDA Mem", lambda r, t, w: fmt_memory(r.device_mem), "device_memory", 5),
                Column("Self CUDA Mem", lambda r, t, w: fmt_memory(r.self_device_mem), "self_device_memory", 4),
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
        Field(
            "name",
            lambda r: r.name,
            "the op (aten::mm, a user annotation, a kernel, ...), as torch's key_averages() names it",
            "VARCHAR",
        ),
        Field("count", lambda r: r.count, "# of Calls", "BIGINT"),
        Field("self_cpu_us", lambda r: r.self_cpu_us, "Self CPU: CPU time in the op less the ops below it"),
        Field("cpu_total_us", lambda r: r.cpu_total_us, "CPU total: CPU time in the op and below"),
        Field("self_device_us", lambda r: r.self_device_us, "Self CUDA: device time of the kernels it launched itself"),
        Field("device_total_us", lambda r: r.device_total_us, "CUDA total: device time launched from it and below"),
        Field(
            "kind",
            lambda r: "device" if r.is_device else "host",
            "host, or device for rows of device events (kernels that name no op)",
            "VARCHAR",
        ),
    ]
    if memory:
        out += [
            Field("cpu_memory_bytes", lambda r: r.cpu_mem, "CPU Mem (with profile_memory; else NULL)", "BIGINT"),
            Field(
                "self_cpu_memory_bytes",
                lambda r: r.self_cpu_mem,
                "Self CPU Mem (with profile_memory; else NULL)",
                "BIGINT",
            ),
            Field("device_memory_bytes", lambda r: r.device_mem, "CUDA Mem (with profile_memory; else NULL)", "BIGINT"),
            Field(
                "self_device_memory_bytes",
                lambda r: r.self_device_mem,
                "Self CUDA Mem (with profile_memory; else NULL)",
                "BIGINT",
            ),
        ]
    if grouped:
        out.append(Field("input_shapes", lambda r: r.input_shapes))
    return out


def footers(t: OpsTable, viewer: bool = False) -> list[str]:
    """torch's footer lines, how device time was attributed when it is not torch's way, what a GPU annotation
    row's CUDA time is, and which of torch's tables this is for Python frames (the viewer's notes are short: its
    share column says span, and p shows or hides the frames)."""
    lines = [f"Self CPU time total: {torch_time(t.self_cpu_total_us)}"]
    if t.has_device:
        lines.append(f"Self CUDA time total: {torch_time(t.self_device_total_us)}")
    if t.device_link != "External id":
        lines.append("(CUDA time per op via the launching call: this trace's GPU events do not name their op)")
    if t.spans:
        lines.append(viewer_span_note(t) if viewer else span_note(t))
    return lines + frames_notes(t, viewer) + negative_note(t, viewer)


def negative_note(t: OpsTable, viewer: bool = False) -> list[str]:
    """Why a row's self CPU time is negative, where one is (torch prints the same)."""
    if not any(r.self_cpu_us < 0 for r in t.rows if not r.is_device):
        return []
    if viewer:
        return ["negative Self CPU as in torch (spans that overlap frames in part)"]
    return [
        "(A negative Self CPU is torch's own: torch nests events by time alone, and an event that overlaps another in"
        " part is its sibling, not its child. A ProfilerStep opens in one prof.step() call and closes in the next, a"
        " record_function block in its __enter__ and __exit__ frames: such a span overlaps the Python frames of those"
        " calls in part, and the frame above them all subtracts each of their times, the time they share twice.)"
    ]


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


def totals(t: OpsTable) -> dict[str, object]:
    """The footers as JSON fields; which table this is where the trace has Python frames or events left open
    (python_frames: frames as rows, as torch 2.12 and 2.13 print them), and the torch that wrote it if known."""
    out: dict[str, object] = {"self_cpu_total_us": t.self_cpu_total_us, "self_device_total_us": t.self_device_total_us}
    if t.frame_events or t.open_events:
        out["python_frames"] = t.python_frames
    if t.open_events:
        out["open_events"] = t.open_events
    if t.torch:
        out["torch_version"] = t.torch
    return out


# Which torch releases list Python frames as rows (pytorch/pytorch#178168 in 2.12; #188631 in 2.14 hides them again).
FRAME_ROWS = ((2, 12), (2, 14))


def torch_release(version: str) -> tuple[int, int] | None:
    """(major, minor) of a torch version string such as 2.13.0+cu130 or 2.12.0.dev20260414; None if unreadable."""
    m = re.match(r"(\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else None


def frames_notes(t: OpsTable, viewer: bool = False) -> list[str]:
    """Which of torch's tables this is where the trace has Python frames or events left open, and how to get the
    other: up to torch 2.11 a frame is no row (its time counts in the op it ran under) and an event still open at
    the window's end is left out; 2.12 and 2.13 list both as rows. The viewer's note is short (p switches)."""
    if not (t.frame_events or t.open_events):
        return []
    still = f"{t.open_events:,} event{'s' if t.open_events != 1 else ''} still open at the window's end"
    what = " and ".join(w for w, n in (("Python frames", t.frame_events), (still, t.open_events)) if n)
    if viewer:
        shown = "rows, as torch 2.12-2.13 (p: as ≤2.11)" if t.python_frames else "no rows, as torch ≤2.11 (p: rows)"
        return [f"{what}: {shown}"]
    if t.python_frames:
        return [
            f"({what}: rows, as torch 2.12-2.13 print them; without --python-frames: torch's table up to 2.11{_writer(t)})"
        ]
    where = ", a frame's time in the self time of the op it ran under" if t.frame_events else ""
    return [
        f"({what}: no rows, as torch's table up to 2.11{where}; --python-frames lists them, as 2.12-2.13 do{_writer(t)})"
    ]


def _writer(t: OpsTable) -> str:
    """What the file says of the torch that wrote it, and what that torch's own table holds ('' if it says nothing)."""
    release = torch_release(t.torch) if t.torch else None
    if release is None:
        return ""
    if release < FRAME_ROWS[0]:
        said = "has no such rows"
    elif release < FRAME_ROWS[1]:
        said = "lists them as rows"
    else:  # torch 2.14 on (pytorch/pytorch#188631)
        hides = "hides the frame rows but not their time off the op above"
        said = " and ".join(w for w, n in ((hides, t.frame_events), ("lists the open events", t.open_events)) if n)
    return f"; torch {t.torch} wrote this trace: its table {said}"
