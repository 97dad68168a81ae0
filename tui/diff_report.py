"""`tracetui diff A B`: the comparison as text, markdown or JSON."""

from __future__ import annotations

from .fmt import fmt_time, truncate
from .model.analyses.diff import Diff, DiffRow, StepStats
from .model.analyses.summary import Summary
from .report import _grid, _json

MATCH_RULE = (
    "Kernels match by exact name, except Triton kernels, matched with their trailing _N counter removed; "
    "ops are compared by self CPU time; steps are paired in order."
)


def _change(a: float, b: float) -> str:
    if not a:
        return "new" if b else "-"
    return f"{100.0 * (b - a) / a:+.1f}%"


def summary_rows(sa: Summary, sb: Summary) -> list[list[str]]:
    rows = [
        ("Wall time", sa.wall_us, sb.wall_us),
        ("GPU busy", sa.gpu_busy_us, sb.gpu_busy_us),
        ("CPU time in launch calls", sa.cpu_launch_us, sb.cpu_launch_us),
        ("Self CPU total", sa.cpu_self_total_us, sb.cpu_self_total_us),
        ("Self CUDA total", sa.device_self_total_us, sb.device_self_total_us),
    ]
    out = [[k, fmt_time(a), fmt_time(b), _change(a, b)] for k, a, b in rows]
    out.append(["GPU utilization", f"{sa.gpu_utilization:.1%}", f"{sb.gpu_utilization:.1%}", ""])
    out.append(["Launch calls", f"{sa.launches:,}", f"{sb.launches:,}", _change(sa.launches, sb.launches)])
    out.append(["Verdict", sa.verdict, sb.verdict, ""])
    return out


def step_rows(a: list[StepStats], b: list[StepStats]) -> list[list[str]]:
    rows = []
    for k in range(max(len(a), len(b))):
        sa, sb = (a[k] if k < len(a) else None), (b[k] if k < len(b) else None)
        cell = lambda s, f: f(s) if s else "-"  # noqa: E731
        rows.append(
            [
                f"step {k + 1}",
                cell(sa, lambda s: fmt_time(s.cpu_us)),
                cell(sb, lambda s: fmt_time(s.cpu_us)),
                cell(sa, lambda s: fmt_time(s.gpu_us)),
                cell(sb, lambda s: fmt_time(s.gpu_us)),
                cell(sa, lambda s: f"{s.launches:,}"),
                cell(sb, lambda s: f"{s.launches:,}"),
            ]
        )
    return rows


def row_cells(r: DiffRow, width: int = 70) -> list[str]:
    mark = {"only A": "  [only A]", "only B": "  [only B]"}.get(r.status, "")
    return [
        truncate(r.name, width) + mark,
        str(r.count_a),
        str(r.count_b),
        fmt_time(r.time_a_us),
        fmt_time(r.time_b_us),
        ("+" if r.delta_us >= 0 else "-") + fmt_time(abs(r.delta_us)),
    ]


def row_json(r: DiffRow) -> dict:
    return {
        "name": r.name,
        "status": r.status,
        "count_a": r.count_a,
        "count_b": r.count_b,
        "time_a_us": float(r.time_a_us),
        "time_b_us": float(r.time_b_us),
        "delta_us": float(r.delta_us),
    }


def render_diff(d: Diff, fmt: str, limit: int, labels: tuple[str, str]) -> str:
    ops, kernels = (d.ops if limit <= 0 else d.ops[:limit]), (d.kernels if limit <= 0 else d.kernels[:limit])
    if fmt == "json":
        return _json(
            {
                "a": labels[0],
                "b": labels[1],
                "matching": MATCH_RULE,
                "slower_pct": d.slower_pct,
                "step_time_a_us": d.step_time_a,
                "step_time_b_us": d.step_time_b,
                "summary": {k: {"a": va, "b": vb} for k, va, vb, _ in summary_rows(d.summary_a, d.summary_b)},
                "steps": [
                    {"a": vars(sa) if sa else None, "b": vars(sb) if sb else None}
                    for sa, sb in _zip_longest(d.steps_a, d.steps_b)
                ],
                "ops": [row_json(r) for r in ops],
                "kernels": [row_json(r) for r in kernels],
            }
        )
    heads = ["Name", "Calls A", "Calls B", "Time A", "Time B", "Change"]
    parts = [
        f"A: {labels[0]}\nB: {labels[1]}\nTypical step: A {fmt_time(d.step_time_a)}, B {fmt_time(d.step_time_b)} "
        f"({d.slower_pct:+.1f}%)",
        _grid(fmt, ["Summary", "A", "B", "Change"], summary_rows(d.summary_a, d.summary_b), []),
        _grid(
            fmt,
            ["Step", "CPU A", "CPU B", "GPU A", "GPU B", "Launches A", "Launches B"],
            step_rows(d.steps_a, d.steps_b),
            [],
        )
        if d.steps_a or d.steps_b
        else "No ProfilerStep#N in either trace.",
        "Ops (self CPU time), by size of change",
        _grid(fmt, heads, [row_cells(r) for r in ops], []),
        "GPU kernels (total time), by size of change",
        _grid(fmt, heads, [row_cells(r) for r in kernels], [MATCH_RULE]),
    ]
    return "\n\n".join(parts)


def _zip_longest(a: list, b: list):
    for k in range(max(len(a), len(b))):
        yield (a[k] if k < len(a) else None), (b[k] if k < len(b) else None)
