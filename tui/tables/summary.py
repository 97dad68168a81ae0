"""The summary: its labelled lines (text, markdown, the overview) and its JSON fields, defined once."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..model.analyses.graphs.replay import GraphStats
from ..model.analyses.host_collectives import HostCollectives
from ..model.analyses.no_gpu import no_gpu
from ..model.analyses.summary import Summary, outlier_note
from ..model.steps import Step, TypicalStep
from ..text.fmt import fmt_time, plural
from .base import KEEP, Column, Field

NO_STEPS = "no ProfilerStep#N in this trace (a profiler schedule with prof.step() records them)"

if TYPE_CHECKING:  # a job's rows only: a summary of one file never imports the ranks' analysis
    from ..model.analyses.ranks import RankRow

MAX_RANK_COLUMNS = 8  # more ranks than this: one row per rank (steps, typical, slowest) instead
MAX_STEPS_SHOWN = 24  # more steps than this: the first few and the slowest, in step order
OTHER_RUNTIME_NAMED = 3  # the other runtime calls named in the summary line


def shown_steps(steps: list) -> tuple[list, int]:
    """The steps worth a row or a bar (all, or the first 4 and the slowest), and how many are left out."""
    if len(steps) <= MAX_STEPS_SHOWN:
        return steps, 0
    slowest = sorted(range(4, len(steps)), key=lambda k: -steps[k].elapsed_us)[: MAX_STEPS_SHOWN - 4]
    keep = sorted([0, 1, 2, 3, *slowest])
    return [steps[k] for k in keep], len(steps) - len(keep)


LABELS = {
    "wall_us": "Wall time (profiled window)",
    "gpu_busy_us": "GPU busy (kernels, memcpy, memset)",
    "gpu_idle_us": "GPU idle",
    "cpu_launch_us": "Launches",
    "other_runtime_us": "Other runtime calls",
    "kernels": "Kernels",
    "graphs": "CUDA/HIP graphs",
    "collectives": "Collectives",
    "device_records_missing": "Device activity",
    "cpu_in_ops_us": "CPU time inside ops",
    "cpu_self_total_us": "Self CPU time total",
    "device_self_total_us": "Self CUDA time total",
    "compiling": "torch.compile compiling",
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
        rows.append(("cpu_launch_us", launch_line(s)))
        rows += [("other_runtime_us", other_runtime_line(s))] if s.other_runtime else []
    if not s.cpu_only and not s.device_records_missing:
        rows += [("kernels", f"{s.kernels:,} averaging {fmt_time(s.avg_kernel_us)}")]
        rows += [("graphs", graph_line(s.graphs))] if s.graph_launches else []
        rows += [("collectives", collectives_line(s.host_collectives))] if s.host_collectives.calls else []
    rows += [("compiling", compile_line(s))] if s.compiling.compiled else []
    rows += [("cpu_self_total_us", fmt_time(s.cpu_self_total_us))]
    if not s.cpu_only and not s.device_records_missing:
        rows.append(("device_self_total_us", fmt_time(s.device_self_total_us)))
    rows.append(("verdict", f"{s.verdict}: {s.reason}"))
    return [(key, LABELS[key], text) for key, text in rows]


def compile_line(s: Summary) -> str:
    """17.0 s of the 18.0 s window: 1 frame compile, 1 recompile, 2 graphs; 2 steps compiled (left out of the typical)"""
    c = s.compiling
    parts = [f"{c.frames:,} frame compile{'s' if c.frames != 1 else ''}"]
    parts += [f"{c.recompiles:,} recompile{'s' if c.recompiles != 1 else ''}"] if c.recompiles else []
    parts += [f"{c.graphs:,} graph{'s' if c.graphs != 1 else ''} called"] if c.graphs else []
    steps = (
        f"; {len(c.steps):,} step{'s' if len(c.steps) != 1 else ''} compiled, left out of the typical step"
        if c.steps
        else ""
    )
    return f"{fmt_time(c.us)} of the {fmt_time(s.wall_us)} window: {', '.join(parts)}{steps}"


def launch_line(s: Summary) -> str:
    """61 calls that put work on the GPU, 332.494us of CPU, median 4.940us; 5.073us of GPU work per launch"""
    if not s.launches:
        return "none: no call put work on the device"
    calls = plural(s.launches, "call") + (
        "" if s.device_records_missing else f" that put{'s' if s.launches == 1 else ''} work on the GPU"
    )
    line = f"{calls}, {fmt_time(s.cpu_launch_us)} of CPU, median {fmt_time(s.median_launch_us)}"
    line += outlier_note(s)
    if s.blocking_copies:
        waited = sum(c.dur_us for c in s.blocking_copies)
        line += (
            f"; {len(s.blocking_copies):,} blocking cop{'y' if len(s.blocking_copies) == 1 else 'ies'} waited "
            f"{fmt_time(waited)} for the device (a wait, not launch time)"
        )
    if s.device_records_missing:
        return line
    gpu = f"{fmt_time(s.gpu_per_kernel_us)} of GPU work per launch"
    if not s.path.launches:  # per launch of the window: the count said first
        return f"{line}; {gpu}"
    where = f"{plural(s.per_launch_count, 'launch', 'launches')}{s.per_launch_where}: " if s.per_launch_where else ""
    if s.no_cpu_per_launch:
        return f"{line}; {where}{gpu}, no CPU work on {s.whose} critical path"
    return f"{line}; {where}{gpu}, {fmt_time(s.cpu_per_kernel_us)} of {s.whose} CPU work per launch"


def other_runtime_line(s: Summary, top: int = OTHER_RUNTIME_NAMED) -> str:
    """71 calls, 24.163us of CPU, none put work on the GPU: cudaMemsetAsync ×22 (5.0us), ... and 4 more names"""
    named = ", ".join(f"{c.name} ×{c.count:,} ({fmt_time(c.cpu_us)})" for c in s.other_runtime[:top])
    more = len(s.other_runtime) - top
    named += f" and {more} more name{'s' if more > 1 else ''}" if more > 0 else ""
    head = f"{plural(s.other_runtime_calls, 'call')}, {fmt_time(s.other_runtime_us)} of CPU"
    return f"{head}, none put work on the GPU: {named}"


def no_gpu_text(s: Summary) -> str | None:
    """What a GPU view (kernels, GPU lanes, roofline) shows instead of an empty table; None when there is GPU work."""
    if s.device_records_missing:
        return (
            f"No GPU activity recorded: {plural(s.launches, 'launch', 'launches')}, but the device records are missing."
        )
    return no_gpu(s.cut_short) + "." if s.cpu_only else None


def _share(part: float, whole: float) -> str:
    return f"{part / whole if whole else 0:.1%}"


def missing_line(s: Summary) -> str:
    """A CUDA run whose device records were lost: what it launched, and that nothing was recorded."""
    flows = f", {s.ac2g_flows:,} flows" if s.ac2g_flows else ""
    return f"none recorded ({plural(s.launches, 'launch', 'launches')}{flows}): device records missing"


def graph_line(g: GraphStats) -> str:
    """12 launches replay 5,046 device activities (28% of device time); 2.9 us of launch CPU each, 8.0 us eager ..."""
    text = (
        f"{plural(g.launches, 'launch', 'launches')} replay{'s' if g.launches == 1 else ''} "
        f"{g.kernels:,} device activities ({g.share:.0%} of device time); "
        f"{fmt_time(g.cost_per_kernel_us)} of launch CPU per activity"
        + (f" against {fmt_time(g.eager_median_us)} eager" if g.eager_launches else "")
        + f", {g.launches_saved:,} launch calls saved"
    )
    if g.credited:
        text += f"; {g.credited:,} of {g.kernels:,} credited to their capture"
    if g.empty:
        text += f"; {plural(g.empty, 'launch', 'launches')} show{'s' if g.empty == 1 else ''} no device activity (records lost)"
    return text


def collectives_line(h: HostCollectives) -> str:
    """24 collective calls (c10d::allreduce_ ×24), 1.2ms of CPU, launched no collective kernel: world size 1 ..."""
    named = ", ".join(f"{name} ×{n:,}" for name, n in h.names)
    head = f"{h.calls:,} collective call{'s' if h.calls != 1 else ''} ({named}), {fmt_time(h.cpu_us)} of CPU"
    return f"{head}, launched no collective kernel: {host_collectives_why(h)}"


def host_collectives_why(h: HostCollectives) -> str:
    """Why collectives launched nothing, in a few words: the group's one rank, or a backend that uses the host."""
    if h.world_size == 1:
        return "world size 1, nothing to exchange"
    if h.backend == "gloo" or h.copies:
        via = f" ({h.copies:,} copies to and from the GPU)" if h.copies else ""
        return f"the {h.backend or 'collective'} backend moves the data through the host{via}"
    return "no data moved between GPUs on the device"


def host_collectives_fields(h: HostCollectives) -> dict[str, Any] | None:
    if not h.calls:
        return None
    return {
        "calls": h.calls,
        "cpu_us": h.cpu_us,
        "names": [{"name": name, "count": n} for name, n in h.names],
        "world_size": h.world_size or None,
        "backend": h.backend or None,
        "copies": h.copies,
    }


def fields(s: Summary) -> dict[str, Any]:
    """The summary as JSON: numbers in microseconds, stable snake_case keys."""
    return {
        "wall_us": s.wall_us,
        "gpu_busy_us": s.gpu_busy_us,
        "gpu_utilization": s.gpu_utilization,
        "cpu_launch_us": s.cpu_launch_us,
        "median_launch_us": s.median_launch_us,  # the window's launch calls: their median, their mean (outliers out)
        "mean_launch_us": s.typical_launch_us,
        "launch_outliers": [{"name": o.name, "dur_us": o.dur_us} for o in s.launch_outliers],
        "cpu_while_gpu_idle": [{"name": n, "us": us} for n, us in s.cpu_while_idle],
        "device_self_total_us": s.device_self_total_us,
        "cpu_self_total_us": s.cpu_self_total_us,
        "verdict": s.verdict,
        "bound_by": s.bound_by,
        "bound_share": s.bound_share,
        "reason": s.reason,
        "path": path_fields(s),
        "compiling": compile_fields(s),
        "cpu_per_kernel_us": s.cpu_per_kernel_us,
        "blocking_copies": [{"name": c.name, "dur_us": c.dur_us} for c in s.blocking_copies],
        "cpu_only": s.cpu_only,
        "device_records_missing": s.device_records_missing,
        "cut_short": s.cut_short,
        "ac2g_flows": s.ac2g_flows,
        "cpu_in_ops_us": s.cpu_in_ops_us,
        "cpu_top_self": [{"name": n, "self_cpu_us": us} for n, us in s.cpu_top_self],
        "cpu_op_avg_us": s.cpu_op_avg_us,
        "cpu_short_op_share": s.cpu_short_op_share,
        "cpu_short_top": [{"name": n, "self_cpu_us": us} for n, us in s.cpu_short_top],
        "launches": s.launches,
        # the per-launch figures as the text says them: per launch in launch_step (null: in the whole window)
        "launch_step": s.launch_step,
        "per_launch_count": s.per_launch_count,
        "gpu_per_launch_us": s.gpu_per_kernel_us,
        # launch_step's own launch calls (null without one): their mean (outliers left out) and median CPU time
        "step_mean_launch_us": s.path.call_us if s.launch_step else None,
        "step_median_launch_us": s.path.call_median_us if s.launch_step else None,
        "other_runtime_us": s.other_runtime_us,
        "other_runtime_calls": [{"name": c.name, "count": c.count, "cpu_us": c.cpu_us} for c in s.other_runtime],
        "kernels": s.kernels,
        "graph_launches": s.graph_launches,
        "graph_kernels": s.graph_kernels,
        "graph_launches_empty": s.graphs.empty,
        "graph_kernels_credited": s.graphs.credited,
        "gpus": s.gpus,
        "steps": [step_fields(st) for st in s.steps],
        "typical_step": typical_fields(s.typical),
        "collectives_without_kernels": host_collectives_fields(s.host_collectives),
    }


V = "VARCHAR"
# The summary as one SQL row: the JSON's figures of the same names, the path's and compiling's flattened.
SQL_FIELDS: list[Field[dict[str, Any]]] = [
    Field(
        "verdict",
        lambda d: d["verdict"],
        "the verdict, read from the typical step's critical path (overhead-bound, compute-bound, ...)",
        V,
    ),
    Field(
        "bound_by",
        lambda d: d["bound_by"],
        "the path class with the most time in the verdict's group (cpu_bound, gpu_compute_bound, ...)",
        V,
    ),
    Field("bound_share", lambda d: d["bound_share"], "the verdict's group's share of the path (0..1)"),
    Field(
        "path_window",
        lambda d: d["path"]["window"],
        "the path's window: the typical step (its name), or the whole trace",
        V,
    ),
    Field("path_us", lambda d: d["path"]["length_us"], "the path's length"),
    Field("reason", lambda d: d["reason"], "the verdict's reasons, as tracetui summary prints them", V),
    Field("wall_us", lambda d: d["wall_us"], "the profiled window"),
    Field(
        "gpu_busy_us",
        lambda d: d["gpu_busy_us"],
        "time any device activity ran (overlapping work counted once)",
    ),
    Field("gpu_utilization", lambda d: d["gpu_utilization"], "gpu_busy_us over the window (0..1)"),
    Field("launches", lambda d: d["launches"], "the calls that put work on the device", "BIGINT"),
    Field(
        "launch_step",
        lambda d: d["launch_step"],
        "the step the per-launch figures are read in (the typical step; null: the whole trace)",
        V,
    ),
    Field("per_launch_count", lambda d: d["per_launch_count"], "the launches in launch_step", "BIGINT"),
    Field(
        "cpu_per_kernel_us",
        lambda d: d["cpu_per_kernel_us"],
        "the CPU work on the typical step's path per launch in it",
    ),
    Field("compile_us", lambda d: d["compiling"]["us"], "torch.compile compiling in the trace"),
]


def path_fields(s: Summary) -> dict[str, Any]:
    """The critical path the verdict reads: its window, length and breakdown (class -> us, classes with time)."""
    p = s.path
    return {"window": p.window, "length_us": p.length_us, "breakdown": dict(p.breakdown), "launches": p.launches}


def compile_fields(s: Summary) -> dict[str, Any]:
    """torch.compile compiling in the trace (zeros without)."""
    c = s.compiling
    return {"us": c.us, "frames": c.frames, "recompiles": c.recompiles, "graphs": c.graphs, "steps": len(c.steps)}


def typical_fields(t: TypicalStep) -> dict[str, Any] | None:
    """The typical step (steps.typical_step): its elapsed time, of how many steps, those left out, and the steps'
    spread either side of it (elapsed, and GPU busy per step), in percent; None without steps."""
    if not t.of:
        return None
    return {
        "elapsed_us": t.us,
        "of_steps": t.of,
        "left_out": list(t.left_out),
        "uncertain": t.uncertain,
        "spread_pct": None if t.spread is None else 100 * t.spread,
        "gpu_busy_spread_pct": None if t.device_spread is None else 100 * t.device_spread,
    }


def step_fields(st: Step) -> dict[str, Any]:
    """A step as JSON: its rank, its CPU span (dur_us), the device work it launched (device_us, the union of busy
    time), when both had ended (end_us, from the window's start), how long the user waited for it (elapsed_us) and
    how long into it the device ran work queued before it (queued_us)."""
    return {
        "name": st.name,
        "rank": st.rank,
        "dur_us": st.dur_us,
        "start_us": st.start_us,
        "device_us": st.device_us,
        "end_us": st.end_us,
        "elapsed_us": st.elapsed_us,
        "queued_us": st.queued_us,
        "launches": st.launches,
    }


STEP_HEADS = ["Step", "CPU span", "GPU busy", "Elapsed"]
CPU_STEP_HEADS = ["Step", "Duration"]  # a CPU-only trace: its steps are their CPU spans
ELAPSED_NOTE = (
    "GPU busy: the device work launched inside the step (overlapping work counted once). Elapsed: from the step's start, or the "
    "previous step's end while that one still ran, until its CPU span and its GPU work both ended (the steps' "
    "elapsed times add up to the wall time they took, less any wait after a step's CPU span for device work queued "
    "before it)."
)
QUEUED_MIN_SHARE = 0.005  # a step's device ran work queued before it for less than this share of it: not said


def queued_note(steps: list[Step]) -> str:
    """Queued ahead: ProfilerStep#6 for its first 15.08ms, the device ran work queued before the step...: what its
    elapsed time and critical path count and its GPU busy does not. "" when no step waited so (over QUEUED_MIN_SHARE
    of it)."""
    held = [st for st in steps if st.queued_us > QUEUED_MIN_SHARE * max(st.elapsed_us, st.dur_us)]
    if not held:
        return ""
    said = "; ".join(f"{st.name} for its first {fmt_time(st.queued_us)}" for st in held[:3])
    more = f" and {plural(len(held) - 3, 'more step')}" if len(held) > 3 else ""
    return (
        f"Queued ahead: {said}{more}, the device ran work queued before the step (launched before the profiler "
        "started, or outside any step). The step's critical path counts that wait (a synchronize in it waits for the "
        "work), and so does its elapsed time while its CPU span ran; its GPU busy does not."
    )


def _time(key: str) -> Any:
    return lambda r, c, w: fmt_time(r[key])


# `tracetui steps`: a row per step (the steps relation's dicts). Narrow, Start goes first, then Ended, the launches,
# the GPU busy time and the CPU span; the step, its rank and its elapsed time stay.
STEPS_COLUMNS: list[Column[dict, None]] = [
    Column("Step", lambda r, c, w: r["name"], priority=KEEP, name=True, min_width=8),
    Column("Rank", lambda r, c, w: str(r["rank"]), priority=KEEP),
    Column("Start", _time("start_us"), priority=6),
    Column("CPU span", _time("dur_us"), priority=2),
    Column("GPU busy", _time("device_us"), priority=3),
    Column("Ended", _time("end_us"), priority=5),
    Column("Elapsed", _time("elapsed_us"), priority=KEEP),
    Column("Launches", lambda r, c, w: f"{r['launches']:,}", priority=4),
]


def steps_columns(rows: list[dict], ranks: bool, device: bool) -> list[Column[dict, None]]:
    """The steps command's columns: the rank with several, the GPU busy time and launches with device work; the
    step's name never cut (columns give way first)."""
    drop = ({"Rank"} if not ranks else set()) | ({"GPU busy", "Launches"} if not device else set())
    whole = max((len(r["name"]) for r in rows), default=8)
    return [replace(c, min_width=whole) if c.name else c for c in STEPS_COLUMNS if c.header not in drop]


TYPICAL_RULE = "the typical step is the median of the steps' elapsed times, a cold first step left out"


def typical_note(t: TypicalStep) -> str:
    """Typical step: 76.763ms, the median elapsed time of 5 steps, which ran within ±3.1% of it (ProfilerStep#1 left
    out: a cold start). Of an even count it is the lower of the middle two, named; of two steps the other's time is
    said too, and under three the typical step is said to be uncertain."""
    if not t.of:
        return ""
    cold = [name for name in t.left_out if name not in t.empty]
    aside = [f"{', '.join(cold)} left out: a cold start"] if cold else []
    if t.empty:
        aside.append(f"{', '.join(t.empty)} left out: {'it' if len(t.empty) == 1 else 'each'} launched no device work")
    if t.of == 1:
        of = "the elapsed time of the one step left" if t.left_out else "the elapsed time of the one step"
    elif t.of == 2:
        of = f"the elapsed time of {t.step.name if t.step else 'the faster'}, the faster of 2 steps"
        if t.spread is not None:
            aside.insert(0, f"the other took {fmt_time(t.us * (1 + 2 * t.spread))}")
    elif t.of % 2 == 0:  # the lower of the middle two: a step that ran (steps.typical_step)
        step = f" ({t.step.name}, the lower of the middle two)" if t.step else ""
        of = f"the median elapsed time of {plural(t.of, 'step')}{step}{spread_words(t)}"
    else:
        of = f"the median elapsed time of {plural(t.of, 'step')}{spread_words(t)}"
    aside_said = f" ({'; '.join(aside)})" if aside else ""
    uncertain = f"; uncertain with {plural(t.of, 'step')}: profile 3 or more to compare" if t.uncertain else ""
    return f"Typical step: {fmt_time(t.us)}, {of}{aside_said}{uncertain}."


def spread_words(t: TypicalStep) -> str:
    """', which ran within ±12% of it' (the steps' elapsed times), with the GPU busy per step's when there is one;
    of steps more than twice apart either side, where a ± share reads as nonsense, their range: ', though they
    ran from 429.000us to 35.700ms'."""
    if t.spread is None:
        return ""
    gpu = f" (GPU busy per step ±{pct(t.device_spread)})" if t.device_spread is not None else ""
    if t.spread > 1:
        return f", though they ran from {fmt_time(t.low_us)} to {fmt_time(t.high_us)}{gpu}"
    return f", which ran within ±{pct(t.spread)} of it{gpu}"


def pct(share: float) -> str:
    """A spread or change as a percentage, one decimal under 10%: 3.1%, 12%."""
    value = 100 * share
    return f"{value:.1f}%" if value < 9.95 else f"{value:.0f}%"


def has_device_steps(s: Summary) -> bool:
    """Do the steps have device work to show (not a CPU-only run, nor one whose device records were lost)?"""
    return not (s.cpu_only or s.device_records_missing)


def step_heads(s: Summary) -> list[str]:
    return STEP_HEADS if has_device_steps(s) else CPU_STEP_HEADS


def step_cells(st: Step, cpu_only: bool) -> list[str]:
    """A step's row: its CPU span, and with device work the work it launched and how long it took in all."""
    if cpu_only:
        return [st.name, fmt_time(st.dur_us)]
    return [st.name, fmt_time(st.dur_us), fmt_time(st.device_us), fmt_time(st.elapsed_us)]


def steps_per_rank(rows: list[RankRow]) -> tuple[list[str], list[list[str]]]:
    """A folder's steps: one column per rank (a few ranks), or one row per rank (many)."""
    if len(rows) > MAX_RANK_COLUMNS:
        heads = ["Rank", "Steps", "Typical step", "Slowest step"]
        return heads, [
            [
                str(r.rank),
                str(len(r.steps)),
                fmt_time(r.step_us),
                fmt_time(max((s.elapsed_us for s in r.steps), default=0)),
            ]
            for r in rows
        ]
    names = list(dict.fromkeys(s.name for r in rows for s in r.steps))
    per = [{s.name: s.elapsed_us for s in r.steps} for r in rows]
    body = [[n] + [fmt_time(p[n]) if n in p else "-" for p in per] for n in names]
    return ["Step"] + [f"rank {r.rank}" for r in rows], body or [["(no ProfilerStep#N on any rank)"] + [""] * len(rows)]


def job_fields(rows: list[RankRow]) -> dict[str, Any]:
    """A folder's summary JSON: its ranks and their steps."""
    return {
        "ranks": len(rows),
        "steps_per_rank": [{"rank": r.rank, "file": r.file, "steps": [step_fields(s) for s in r.steps]} for r in rows],
    }
