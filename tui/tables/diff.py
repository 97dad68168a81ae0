"""The diff tables (summary, steps, ops and kernels side by side) and their JSON, defined once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..fmt import fmt_time, truncate
from ..model.analyses.diff import Diff, DiffRow
from ..model.analyses.summary import Summary
from ..model.steps import Step
from .base import KEEP, Column

MATCH_RULE = (
    "Ops and kernels match by name, less what differs from run to run: object addresses (at 0x…) and Triton's "
    "trailing _N counter; ops are compared by self CPU time; steps are paired in order."
)
ROW_HEADS = ["Name", "Calls A", "Calls B", "Time A", "Time B", "Change"]
STEP_HEADS = ["Step", "CPU A", "CPU B", "GPU A", "GPU B", "Elapsed A", "Elapsed B", "Launches A", "Launches B"]
SUMMARY_HEADS = ["Summary", "A", "B", "Change"]
CPU_STEP_HEADS = STEP_HEADS[:3]  # a CPU-only pair: no GPU time or launches per step
GPU_KEYS = {
    "gpu_busy_us",
    "cpu_launch_us",
    "device_self_total_us",
    "gpu_utilization",
    "launches",
    "graph_launches",
    "graph_kernels",
}
GRAPH_KEYS = {"graph_launches", "graph_kernels"}  # shown only where either trace launches graphs
NO_GPU = "No GPU activity in either trace: both are CPU only."

# key (as in summary's JSON), label, how the value reads, whether the change is shown as a percentage
SUMMARY: list[tuple[str, str, Callable[[Any], str], bool]] = [
    ("wall_us", "Wall time", fmt_time, True),
    ("gpu_busy_us", "GPU busy", fmt_time, True),
    ("cpu_launch_us", "CPU time in launches", fmt_time, True),
    ("cpu_self_total_us", "Self CPU total", fmt_time, True),
    ("device_self_total_us", "Self CUDA total", fmt_time, True),
    ("gpu_utilization", "GPU utilization", lambda v: f"{v:.1%}", False),
    ("launches", "Launches", lambda v: f"{v:,}", True),
    ("graph_launches", "Graph launches", lambda v: f"{v:,}", True),
    ("graph_kernels", "Kernels replayed by graphs", lambda v: f"{v:,}", True),
    ("verdict", "Verdict", str, False),
]


def change(a: float, b: float) -> str:
    if not a:
        return "new" if b else "-"
    return f"{100.0 * (b - a) / a:+.1f}%"


def summary_rows(sa: Summary, sb: Summary) -> list[list[str]]:
    """The summary side by side; the GPU rows only where either trace has GPU work."""
    rows = []
    for key, label, text, pct in SUMMARY:
        if key in GPU_KEYS and sa.cpu_only and sb.cpu_only:
            continue
        if key in GRAPH_KEYS and not (sa.graph_launches or sb.graph_launches):
            continue
        a, b = getattr(sa, key), getattr(sb, key)
        rows.append([label, text(a), text(b), change(a, b) if pct else ""])
    return rows


def launches_saved(sa: Summary, sb: Summary) -> int:
    """Launch calls B made fewer than A while B replays graphs (negative: B made more)."""
    return sa.launches - sb.launches if sb.graph_launches or sa.graph_launches else 0


def launches_saved_line(sa: Summary, sb: Summary) -> str | None:
    """What graphs changed between A and B, in words (None without graphs)."""
    saved = launches_saved(sa, sb)
    if not (sa.graph_launches or sb.graph_launches):
        return None
    more, fewer = ("B", "A") if sb.graph_launches >= sa.graph_launches else ("A", "B")
    who = sb if more == "B" else sa
    return (
        f"Graphs: {more} replays {who.graph_kernels:,} device activities from {who.graph_launches:,} graph launches; "
        f"B made {abs(saved):,} {'fewer' if saved >= 0 else 'more'} launches than A."
    )


def head_lines(d: Diff, labels: tuple[str, str] | list[str]) -> list[str]:
    """What is compared, the median steps, and what graphs and step counts change: the lines above a diff."""
    lines = [
        f"A: {labels[0]}",
        f"B: {labels[1]}",
        f"Median step: A {fmt_time(d.step_time_a)}, B {fmt_time(d.step_time_b)} ({d.slower_pct:+.1f}%)",
    ]
    extra = (launches_saved_line(d.summary_a, d.summary_b), steps_note(len(d.steps_a), len(d.steps_b)))
    return lines + [line for line in extra if line]


def steps_note(steps_a: int, steps_b: int) -> str | None:
    """When A and B profiled different numbers of steps, the ops and kernels compare totals, not steps."""
    if steps_a == steps_b or not (steps_a and steps_b):
        return None
    return (
        f"Steps: A profiled {steps_a:,}, B {steps_b:,}; the ops and kernels below compare totals over each window, "
        "so more steps read as more time: compare the median step above."
    )


def summary_fields(sa: Summary, sb: Summary) -> dict[str, dict[str, Any]]:
    """{key: {"a": value, "b": value}} with the summary's own keys and plain numbers."""
    return {key: {"a": getattr(sa, key), "b": getattr(sb, key)} for key, *_ in SUMMARY}


def zip_steps(a: list[Step], b: list[Step]) -> Iterator[tuple[Step | None, Step | None]]:
    for k in range(max(len(a), len(b))):
        yield (a[k] if k < len(a) else None), (b[k] if k < len(b) else None)


def step_rows(a: list[Step], b: list[Step], gpu: bool = True) -> list[list[str]]:
    """Each pair of steps: CPU span, GPU work launched, elapsed, launches; without gpu, the CPU spans only (the
    columns of CPU_STEP_HEADS)."""
    rows = _step_rows(a, b)
    return rows if gpu else [r[: len(CPU_STEP_HEADS)] for r in rows]


def _step_rows(a: list[Step], b: list[Step]) -> list[list[str]]:
    def cell(s: Step | None, f: Callable[[Step], str]) -> str:
        return f(s) if s else "-"

    rows = []
    for k, (sa, sb) in enumerate(zip_steps(a, b)):
        rows.append(
            [
                f"step {k + 1}",
                cell(sa, lambda s: fmt_time(s.dur_us)),
                cell(sb, lambda s: fmt_time(s.dur_us)),
                cell(sa, lambda s: fmt_time(s.device_us)),
                cell(sb, lambda s: fmt_time(s.device_us)),
                cell(sa, lambda s: fmt_time(s.elapsed_us)),
                cell(sb, lambda s: fmt_time(s.elapsed_us)),
                cell(sa, lambda s: f"{s.launches:,}"),
                cell(sb, lambda s: f"{s.launches:,}"),
            ]
        )
    return rows


def _mark(r: DiffRow) -> str:
    return {"only A": "  [only A]", "only B": "  [only B]"}.get(r.status, "")


def _delta(r: DiffRow) -> str:
    return ("+" if r.delta_us >= 0 else "-") + fmt_time(abs(r.delta_us))


NAME_WIDTH = 70
ROW_COLUMNS: list[Column[DiffRow, None]] = [
    Column("Name", lambda r, c, w: truncate(r.name, w), priority=KEEP, name=True, min_width=20, tag=_mark),
    Column("Calls A", lambda r, c, w: str(r.count_a), priority=KEEP),
    Column("Calls B", lambda r, c, w: str(r.count_b), priority=KEEP),
    Column("Time A", lambda r, c, w: fmt_time(r.time_a_us), priority=KEEP),
    Column("Time B", lambda r, c, w: fmt_time(r.time_b_us), priority=KEEP),
    Column("Change", lambda r, c, w: _delta(r), priority=KEEP),
]


def row_cells(r: DiffRow, width: int = NAME_WIDTH) -> list[str]:
    return [c.text(r, None, width) + (_mark(r) if c.tag else "") for c in ROW_COLUMNS]


def row_fields(r: DiffRow) -> dict[str, Any]:
    return {
        "name": r.name,
        "status": r.status,
        "count_a": r.count_a,
        "count_b": r.count_b,
        "time_a_us": float(r.time_a_us),
        "time_b_us": float(r.time_b_us),
        "delta_us": float(r.delta_us),
    }
