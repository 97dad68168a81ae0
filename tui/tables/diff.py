"""The diff tables (summary, steps, ops and kernels side by side) and their JSON, defined once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from ..model.analyses.diff import Diff, DiffRow
from ..model.analyses.no_gpu import no_gpu
from ..model.analyses.summary import Summary
from ..model.steps import Step
from ..text.fmt import fmt_time, truncate
from .base import KEEP, Column
from .summary import TYPICAL_RULE
from .summary import pct as share_pct

MATCH_RULE = (
    "Ops and kernels match by name, less what differs from run to run: object addresses (at 0x…) and Triton's "
    "trailing _N counter; ops are compared by self CPU time; steps are paired in order."
)
ROW_HEADS = ["Name", "Calls A", "Calls B", "Time A", "Time B", "Change"]
SUMMARY_HEADS = ["Summary", "A", "B", "Change"]
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
NO_GPU = "No GPU activity in either trace: both ran on the CPU only."


def no_gpu_lines(d: Diff) -> list[str]:
    """What two traces without GPU activity say of the GPU: one line, or one per trace (A, B as the head names
    them) when a file is cut short: its GPU records may be in the lost part."""
    pair = (d.summary_a, d.summary_b)
    if not any(s.cut_short for s in pair):
        return [NO_GPU]
    return [f"{side}: {no_gpu(s.cut_short)}." for side, s in zip("AB", pair, strict=True)]


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


def _which(d: Diff) -> str:
    """': B is 2.48x slower' or ': B is 1.30x faster' (nothing when either step is unknown or they are equal)."""
    a, b = d.step_time_a, d.step_time_b
    if not a or not b or a == b:
        return ""
    return f": B is {b / a:.2f}x slower" if b > a else f": B is {a / b:.2f}x faster"


def typical_line(d: Diff) -> str:
    """The typical steps and their change, said as no change when it is within the runs' own spread."""
    both = f"Typical step: A {fmt_time(d.step_time_a)}, B {fmt_time(d.step_time_b)}"
    if d.within_spread:
        return (
            f"{both} ({d.slower_pct:+.1f}%): within the runs' own spread of ±{share_pct(d.spread or 0.0)}: no change shown "
            f"({TYPICAL_RULE})"
        )
    return f"{both}{_which(d)} ({d.slower_pct:+.1f}%{spread_said(d)}; {TYPICAL_RULE})"


def spread_said(d: Diff) -> str:
    """', beyond the runs' own spread of ±3.1%', or why there is none to tell noise by (no words without steps)."""
    if d.spread is not None:
        return f", beyond the runs' own spread of ±{share_pct(d.spread)}"
    return ", no step-to-step spread to tell noise by: fewer than 2 steps in each" if d.steps_a and d.steps_b else ""


def head_lines(d: Diff, labels: tuple[str, str] | list[str]) -> list[str]:
    """What is compared, the typical steps, and what graphs and step counts change: the lines above a diff."""
    lines = [
        f"A: {labels[0]}",
        f"B: {labels[1]}",
        typical_line(d),
    ]
    extra = (launches_saved_line(d.summary_a, d.summary_b), steps_note(len(d.steps_a), len(d.steps_b)))
    return lines + [line for line in extra if line]


def steps_note(steps_a: int, steps_b: int) -> str | None:
    """When A and B profiled different numbers of steps, the ops and kernels compare totals, not steps."""
    if steps_a == steps_b or not (steps_a and steps_b):
        return None
    return (
        f"Steps: A profiled {steps_a:,}, B {steps_b:,}; the ops and kernels below compare totals over each window, "
        "so more steps read as more time: compare the typical step above."
    )


def summary_fields(sa: Summary, sb: Summary) -> dict[str, dict[str, Any]]:
    """{key: {"a": value, "b": value}} with the summary's own keys and plain numbers."""
    return {key: {"a": getattr(sa, key), "b": getattr(sb, key)} for key, *_ in SUMMARY}


def zip_steps(a: list[Step], b: list[Step]) -> Iterator[tuple[Step | None, Step | None]]:
    for k in range(max(len(a), len(b))):
        yield (a[k] if k < len(a) else None), (b[k] if k < len(b) else None)


StepPair = tuple[int, Step | None, Step | None]  # (step number, A's, B's)


def step_pairs(a: list[Step], b: list[Step]) -> list[StepPair]:
    return [(k + 1, sa, sb) for k, (sa, sb) in enumerate(zip_steps(a, b))]


def step_name(p: StepPair) -> str:
    """The pair's step as the traces name it: one name when A's and B's agree, else both (A's / B's)."""
    names = list(dict.fromkeys(s.name for s in (p[1], p[2]) if s is not None))
    return " / ".join(names) or f"step {p[0]}"


def _side(b: bool, f: Callable[[Step], str]) -> Callable[[StepPair, None, int], str]:
    """A cell of A's step (b False) or B's: f of it, '-' where that side has no such step."""

    def text(p: StepPair, context: None, width: int) -> str:
        step = p[2] if b else p[1]
        return f(step) if step is not None else "-"

    return text


def _cpu(s: Step) -> str:
    return fmt_time(s.dur_us)


# Each pair of steps: CPU span, GPU work launched, elapsed (kept), launches (left out first on a narrow terminal).
STEP_COLUMNS: list[Column[StepPair, None]] = [
    Column("Step", lambda p, c, w: step_name(p), priority=KEEP, name=True, min_width=7),
    Column("CPU A", _side(False, _cpu), priority=1),
    Column("CPU B", _side(True, _cpu), priority=1),
    Column("GPU A", _side(False, lambda s: fmt_time(s.device_us)), priority=2),
    Column("GPU B", _side(True, lambda s: fmt_time(s.device_us)), priority=2),
    Column("Elapsed A", _side(False, lambda s: fmt_time(s.elapsed_us)), priority=KEEP),
    Column("Elapsed B", _side(True, lambda s: fmt_time(s.elapsed_us)), priority=KEEP),
    Column("Launches A", _side(False, lambda s: f"{s.launches:,}"), priority=3),
    Column("Launches B", _side(True, lambda s: f"{s.launches:,}"), priority=3),
]
CPU_STEP_COLUMNS = [replace(c, priority=KEEP) for c in STEP_COLUMNS[:3]]  # a CPU-only pair: the CPU spans


def step_columns(gpu: bool = True, pairs: list[StepPair] | None = None) -> list[Column[StepPair, None]]:
    """The steps side by side; given the pairs, the step's name is never cut (the other columns give way)."""
    cols = STEP_COLUMNS if gpu else CPU_STEP_COLUMNS
    whole = max((len(step_name(p)) for p in pairs or []), default=0)
    return [replace(c, min_width=max(c.min_width, whole)) if c.name else c for c in cols]


def step_rows(a: list[Step], b: list[Step], gpu: bool = True) -> list[list[str]]:
    """Each pair of steps as text, every column (the headers are STEP_HEADS, or CPU_STEP_HEADS without gpu)."""
    return [[c.text(p, None, 0) for c in step_columns(gpu)] for p in step_pairs(a, b)]


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


STEP_HEADS = [c.header for c in STEP_COLUMNS]
CPU_STEP_HEADS = [c.header for c in CPU_STEP_COLUMNS]  # a CPU-only pair: no GPU time or launches per step
