"""The code view's table: time per function (at its def line), with the GPU time launched from beneath it."""

from __future__ import annotations

from ..model.analyses.code import AT_START, CodeRow, CodeTable
from ..text.fmt import fmt_time, truncate
from .base import KEEP, Column, Field, SortKey, UnknownSort

NAME_WIDTH = 90
SORTS = {
    "self_device": SortKey("self_device_us", means="self_device"),
    "device_total": SortKey("device_total_us", means="device_total"),
    "self_cpu": SortKey("self_cpu_us", means="self_cpu"),
    "cpu_total": SortKey("cpu_total_us", means="cpu_total"),
    "count": SortKey("count", means="calls"),
    "frame": SortKey("frame", False, "name"),
}
DEVICE_MEANS = ("self_device", "device_total")  # the sorts a CPU-only capture has nothing for
DEFAULT_SORT = "self_device"  # the functions that launch GPU work themselves first: the ones to look at
CPU_SORT = "self_cpu"  # a CPU-only capture: the functions that spend CPU time themselves first
NO_FRAMES = (
    "no Python frames in this trace: capture with with_stack=True (tracetui profile --with-stack) to see time per "
    "function"
)
WHAT_A_ROW_IS = (
    "A row is a function at its def line (torch records a frame where its function starts, not the lines that ran "
    "inside it); top level is a script's module-level code (<module>)"
)

AT_START_NOTE = (
    f"{AT_START}: the frame was already running when the profiler started, and torch names such a frame by the "
    "line it was running then (a call inside it), not its def line"
)


def has_device(t: CodeTable) -> bool:
    """Is there device work to show (not a CPU-only capture)?"""
    return t.gpu_total_us > 0


def default_sort(t: CodeTable | None) -> str:
    return DEFAULT_SORT if t is None or has_device(t) else CPU_SORT


def resolve_sort(key: str | None, t: CodeTable | None = None) -> str:
    """The user's sort key, else self device time (self CPU time on a CPU-only capture)."""
    key = key or default_sort(t)
    if key not in SORTS:
        raise UnknownSort(key, list(SORTS))
    return key


def _share(part: float, t: CodeTable) -> str:
    return f"{100 * part / t.gpu_total_us:.2f}%" if t.gpu_total_us else "-"


CPU_COLUMNS: list[Column[CodeRow, CodeTable]] = [
    Column("Function (file:def line)", lambda r, t, w: truncate(r.label, w), "frame", KEEP, name=True, min_width=20),
    Column("Calls", lambda r, t, w: str(r.count), "count", KEEP),
    Column("Self CPU", lambda r, t, w: fmt_time(r.self_cpu_us), "self_cpu", KEEP),
    Column("CPU total", lambda r, t, w: fmt_time(r.cpu_total_us), "cpu_total", KEEP),
]
DEVICE_COLUMNS: list[Column[CodeRow, CodeTable]] = [
    Column("Self device", lambda r, t, w: fmt_time(r.self_device_us), "self_device", KEEP),
    Column("Device total", lambda r, t, w: fmt_time(r.device_total_us), "device_total", KEEP),
    Column("Total % GPU", lambda r, t, w: _share(r.device_total_us, t), "device_total", 1),
]
COLUMNS = CPU_COLUMNS + DEVICE_COLUMNS


def columns(t: CodeTable) -> list[Column[CodeRow, CodeTable]]:
    """The columns for this table: no device columns on a CPU-only capture (they would all read zero)."""
    return COLUMNS if has_device(t) else CPU_COLUMNS


FIELDS: list[Field[CodeRow]] = [
    Field("frame", lambda r: r.frame),
    Field("function", lambda r: r.label),
    Field("kind", lambda r: r.kind),
    Field("count", lambda r: r.count),
    Field("self_cpu_us", lambda r: r.self_cpu_us),
    Field("cpu_total_us", lambda r: r.cpu_total_us),
    Field("self_device_us", lambda r: r.self_device_us),
    Field("device_total_us", lambda r: r.device_total_us),
    Field("pct_gpu", lambda r: r.pct_gpu),
]


def hottest(t: CodeTable) -> CodeRow | None:
    """The frame that launches the most GPU time itself (not through a frame shown below it)."""
    rows = [r for r in t.rows if r.self_device_us > 0]
    return max(rows, key=lambda r: r.self_device_us) if rows else None


def footers(t: CodeTable, unfold: str = "--all-frames") -> list[str]:
    """The lines under the table; unfold: what shows every frame (the flag here, a key in the viewer)."""
    lines = [WHAT_A_ROW_IS]
    if has_device(t):
        lines.append(
            f"GPU time launched from Python: {fmt_time(t.from_python_us)} of {fmt_time(t.gpu_total_us)} "
            f"({_share(t.from_python_us, t)}); {t.frames:,} frame events"
        )
    else:
        lines.append(f"CPU only: no device columns; {t.frames:,} frame events")
    hot = hottest(t)
    if hot is not None:
        lines.append(
            f"Launches the most GPU time itself: {hot.label} (self {fmt_time(hot.self_device_us)}, "
            f"{_share(hot.self_device_us, t)} of GPU time)"
        )
    lines.append(
        f"Library frames (standard library, torch, ...) folded into the frame above them; {unfold} shows them"
        if t.folded
        else "Every frame shown (library frames included)"
    )
    return lines + ([AT_START_NOTE] if any(r.at_start for r in t.rows) else [])  # after the figures: a small screen


def totals(t: CodeTable) -> dict[str, float]:
    return {"from_python_us": t.from_python_us, "gpu_total_us": t.gpu_total_us}
