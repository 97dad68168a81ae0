"""The summary: its labelled lines (text, markdown, the overview) and its JSON fields, defined once."""

from __future__ import annotations

from typing import Any

from ..fmt import fmt_time
from ..model.analyses.graphs import GraphStats
from ..model.analyses.ranks import RankRow
from ..model.analyses.summary import Summary, outlier_note

MAX_RANK_COLUMNS = 8  # more ranks than this: one row per rank (steps, typical, slowest) instead
MAX_STEPS_SHOWN = 24  # more steps than this: the first few and the slowest, in step order


def shown_steps(steps: list) -> tuple[list, int]:
    """The steps worth a row or a bar (all, or the first 4 and the slowest), and how many are left out."""
    if len(steps) <= MAX_STEPS_SHOWN:
        return steps, 0
    slowest = sorted(range(4, len(steps)), key=lambda k: -steps[k].dur_us)[: MAX_STEPS_SHOWN - 4]
    keep = sorted([0, 1, 2, 3, *slowest])
    return [steps[k] for k in keep], len(steps) - len(keep)


LABELS = {
    "wall_us": "Wall time (profiled window)",
    "gpu_busy_us": "GPU busy (kernels, memcpy, memset)",
    "gpu_idle_us": "GPU idle",
    "cpu_launch_us": "CPU time in launch calls",
    "kernels": "Kernels",
    "graphs": "CUDA/HIP graphs",
    "device_records_missing": "Device activity",
    "cpu_in_ops_us": "CPU time inside ops",
    "cpu_self_total_us": "Self CPU time total",
    "device_self_total_us": "Self CUDA time total",
    "verdict": "Verdict",
}


def gpu_idle_us(s: Summary) -> float:
    return max(s.wall_us * max(s.gpus, 1) - s.gpu_busy_us, 0)


def _per_gpu(s: Summary, us: float) -> str:
    """A GPU time and its share of the window; with several GPUs, the sum and what one GPU has on average."""
    if s.gpus <= 1:
        return f"{fmt_time(us)} ({us / s.wall_us if s.wall_us else 0:.1%} of the window)"
    each = us / s.gpus
    share = each / s.wall_us if s.wall_us else 0
    return f"{fmt_time(us)} summed over {s.gpus} GPUs: {fmt_time(each)} per GPU, {share:.1%} of the window"


def lines(s: Summary) -> list[tuple[str, str, str]]:
    """(key, label, value text) for each line that applies to this trace (GPU lines only with GPU work)."""
    rows = [("wall_us", fmt_time(s.wall_us))]
    if s.cpu_only:
        in_ops = f"{fmt_time(s.cpu_in_ops_us)} ({_share(s.cpu_in_ops_us, s.wall_us)} of the window)"
        rows.append(("cpu_in_ops_us", in_ops))
    if s.device_records_missing:
        rows.append(("device_records_missing", missing_line(s)))
    elif not s.cpu_only:
        rows += [("gpu_busy_us", _per_gpu(s, s.gpu_busy_us)), ("gpu_idle_us", _per_gpu(s, gpu_idle_us(s)))]
    if not s.cpu_only:
        rows += [
            (
                "cpu_launch_us",
                f"{fmt_time(s.cpu_launch_us)} in {s.launches:,} calls, median {fmt_time(s.median_launch_us)}"
                + outlier_note(s),
            ),
        ]
    if not s.cpu_only and not s.device_records_missing:
        rows += [("kernels", f"{s.kernels:,} averaging {fmt_time(s.avg_kernel_us)}")]
        rows += [("graphs", graph_line(s.graphs))] if s.graph_launches else []
    rows += [("cpu_self_total_us", fmt_time(s.cpu_self_total_us))]
    if not s.cpu_only and not s.device_records_missing:
        rows.append(("device_self_total_us", fmt_time(s.device_self_total_us)))
    rows.append(("verdict", f"{s.verdict}: {s.reason}"))
    return [(key, LABELS[key], text) for key, text in rows]


def no_gpu_text(s: Summary) -> str | None:
    """What a GPU view (kernels, GPU lanes, roofline) shows instead of an empty table; None when there is GPU work."""
    if s.device_records_missing:
        return f"No GPU activity recorded: {s.launches:,} launch calls, but the device records are missing."
    return "No GPU activity in this trace: it is CPU only." if s.cpu_only else None


def _share(part: float, whole: float) -> str:
    return f"{part / whole if whole else 0:.1%}"


def missing_line(s: Summary) -> str:
    """A CUDA run whose device records were lost: what it launched, and that nothing was recorded."""
    flows = f", {s.ac2g_flows:,} flows" if s.ac2g_flows else ""
    return f"none recorded ({s.launches:,} launch calls{flows}): device records missing"


def graph_line(g: GraphStats) -> str:
    """12 launches replay 5,046 device activities (28% of device time); 2.9 us of launch CPU each, 8.0 us eager ..."""
    text = (
        f"{g.launches:,} launches replay {g.kernels:,} device activities ({g.share:.0%} of device time); "
        f"{fmt_time(g.cost_per_kernel_us)} of launch CPU per activity"
        + (f" against {fmt_time(g.eager_median_us)} eager" if g.eager_launches else "")
        + f", {g.launches_saved:,} launch calls saved"
    )
    if g.credited:
        text += f"; {g.credited:,} of {g.kernels:,} credited to their capture"
    if g.empty:
        text += f"; {g.empty:,} launches show no device activity (records lost)"
    return text


def fields(s: Summary) -> dict[str, Any]:
    """The summary as JSON: numbers in microseconds, stable snake_case keys."""
    return {
        "wall_us": s.wall_us,
        "gpu_busy_us": s.gpu_busy_us,
        "gpu_utilization": s.gpu_utilization,
        "cpu_launch_us": s.cpu_launch_us,
        "median_launch_us": s.median_launch_us,
        "launch_outliers": [{"name": o.name, "dur_us": o.dur_us} for o in s.launch_outliers],
        "cpu_while_gpu_idle": [{"name": n, "us": us} for n, us in s.cpu_while_idle],
        "device_self_total_us": s.device_self_total_us,
        "cpu_self_total_us": s.cpu_self_total_us,
        "verdict": s.verdict,
        "reason": s.reason,
        "cpu_only": s.cpu_only,
        "device_records_missing": s.device_records_missing,
        "cut_short": s.cut_short,
        "ac2g_flows": s.ac2g_flows,
        "cpu_in_ops_us": s.cpu_in_ops_us,
        "cpu_top_self": [{"name": n, "self_cpu_us": us} for n, us in s.cpu_top_self],
        "cpu_op_avg_us": s.cpu_op_avg_us,
        "launches": s.launches,
        "kernels": s.kernels,
        "graph_launches": s.graph_launches,
        "graph_kernels": s.graph_kernels,
        "graph_launches_empty": s.graphs.empty,
        "graph_kernels_credited": s.graphs.credited,
        "gpus": s.gpus,
        "steps": [{"name": st.name, "dur_us": st.dur_us} for st in s.steps],
    }


def steps_per_rank(rows: list[RankRow]) -> tuple[list[str], list[list[str]]]:
    """A folder's steps: one column per rank (a few ranks), or one row per rank (many)."""
    if len(rows) > MAX_RANK_COLUMNS:
        heads = ["Rank", "Steps", "Median step", "Slowest step"]
        return heads, [
            [str(r.rank), str(len(r.steps)), fmt_time(r.step_us), fmt_time(max((s.dur_us for s in r.steps), default=0))]
            for r in rows
        ]
    names = list(dict.fromkeys(s.name for r in rows for s in r.steps))
    per = [{s.name: s.dur_us for s in r.steps} for r in rows]
    body = [[n] + [fmt_time(p[n]) if n in p else "-" for p in per] for n in names]
    return ["Step"] + [f"rank {r.rank}" for r in rows], body or [["(no ProfilerStep#N on any rank)"] + [""] * len(rows)]


def job_fields(rows: list[RankRow]) -> dict[str, Any]:
    """A folder's summary JSON: its ranks and their steps."""
    return {
        "ranks": len(rows),
        "steps_per_rank": [
            {"rank": r.rank, "file": r.file, "steps": [{"name": s.name, "dur_us": s.dur_us} for s in r.steps]}
            for r in rows
        ],
    }
