"""Plain-English readings of the summary numbers, for beginners (no formatting libraries)."""

from __future__ import annotations

from ...steps import SLOW_FACTOR, Step, cold_first, is_slow, real_steps, typical
from ...words import duration, duration_as
from ..no_gpu import no_gpu
from ..summary import CPU_SHORT_OP_US, Summary, copy_kinds
from ..verdict import TITLE, path_where
from .uses import Uses, next_words

AROUND_LAUNCH = 3  # the CPU work per kernel on the path, against the launch call's own time: the work around it


def verdict_reading(s: Summary, uses: Uses | None = None) -> str:
    """What the verdict means, in words: what holds the typical step's critical path, and where the time is; with
    what the run already uses, its advice starts from there (never to compile a compiled run)."""
    if uses is not None and s.verdict in ("overhead-bound", "compute-bound") and not s.device_records_missing:
        return overhead_reading(s, uses) if s.verdict == "overhead-bound" else compute_reading(s, uses)
    if s.device_records_missing:
        return missing_reading(s)
    if s.cpu_only and s.verdict in ("cpu-in-ops", "cpu-between-ops", "cpu-only"):
        return cpu_reading(s)
    readings = {
        "overhead-bound": overhead_reading,
        "compute-bound": compute_reading,
        "copy-bound": copy_reading,
        "communication-bound": communication_reading,
        "sync-bound": sync_reading,
        "data-loading-bound": loading_reading,
        "compiling": compiling_reading,
        "mixed": mixed_reading,
    }
    return readings[s.verdict](s) if s.verdict in readings else ""


def path_head(s: Summary) -> str:
    """The critical path of ProfilerStep#6 (the typical step, 4.43 ms) is 97%"""
    return f"The critical path of {path_where(s)} is {s.bound_share:.0%}"


def compute_reading(s: Summary, uses: Uses | None = None) -> str:
    head = (
        f"{path_head(s)} GPU compute: the kernels' own time sets the step (GPU busy {s.gpu_utilization:.0%} of the "
        "window)."
    )
    if uses is not None:
        return f"{head} {next_words(uses, uses.gpu_next)}"
    return (
        f"{head} Faster kernels (tensor cores, lower precision, fusion) shorten it; the roofline view shows how close "
        "they run to the GPU's limits."
    )


def communication_reading(s: Summary) -> str:
    return (
        f"{path_head(s)} communication: collective kernels, and the CPU inside collective calls. The slowest "
        "rank sets the pace (tracetui ranks on the job's folder finds it); overlap communication with compute (DDP "
        "bucket size, FSDP prefetch) and look at what the other ranks do meanwhile."
    )


def sync_reading(s: Summary) -> str:
    return (
        f"{path_head(s)} the CPU coming back from waits on the device: it stops and waits for the GPU (a synchronize, "
        ".item(), a copy to the host) instead of queueing more work. Fewer synchronizations let the CPU run ahead."
    )


def loading_reading(s: Summary) -> str:
    return (
        f"{path_head(s)} data loading: the step waits for its input. More DataLoader workers, pin_memory=True and "
        "prefetching hide it behind the GPU's work."
    )


def compiling_reading(s: Summary) -> str:
    c = s.compiling
    return (
        f"{path_head(s)} torch.compile compiling ({duration(c.us)} in all, {c.frames:,} frame compile(s)): the window "
        "shows compile time, not how the model runs. It is paid once per shape: profile after warm-up steps, and mark "
        "changing sizes dynamic to avoid recompiles."
    )


def mixed_reading(s: Summary) -> str:

    p = s.path
    top = ", ".join(
        f"{TITLE.get(c, c)} {t / p.length_us:.0%}" for c, t in sorted(p.breakdown.items(), key=lambda kv: -kv[1])[:3]
    )
    where = f"{p.window} (the typical step)" if p.event >= 0 else p.window
    return (
        f"No one kind of work holds half the critical path of {where}: {top}. Each part is worth a look: "
        "tracetui critical shows the path, and --what-if what shortening each part would save."
    )


def copy_reading(s: Summary) -> str:
    """A GPU busy mostly copying: which copies, how fast, and what helps."""
    kinds = copy_kinds(s.work) or "memsets"
    return (
        f"GPU busy {s.gpu_utilization:.0%} of the window, mostly copying ({kinds}): moving data is the bottleneck, not "
        "computing. Fewer, larger copies, pinned host memory with non_blocking copies that overlap compute, or keeping "
        "the data on the GPU are where the time is."
    )


SMALL_OPS_SHARE = 0.5  # of the aten ops' own time, the share in short calls that makes their fixed costs the story


def small_ops(s: Summary) -> bool:
    """Is a CPU capture's top self time in aten ops, and most of the aten ops' own time in calls that each do little
    work (their fixed costs add up)? Weighed by time, not by calls: many tiny ops beside a few long matmuls holding
    the time do not make the matmuls small."""
    top_aten = bool(s.cpu_top_self) and s.cpu_top_self[0][0].startswith("aten::")
    return top_aten and s.cpu_short_op_share >= SMALL_OPS_SHARE


ALSO_BETWEEN = 0.2  # CPU time in the ops, yet this much of the window between them: said too, with its figures


def also_between(s: Summary) -> bool:
    """Ops hold most of a CPU capture's window, yet a fair part of it is between them (Python, framework code)?"""
    return bool(s.wall_us) and s.wall_us - s.cpu_in_ops_us >= ALSO_BETWEEN * s.wall_us


def _between_said(s: Summary) -> str:
    """The window's time between the ops, when also_between: a sentence, else nothing."""
    if not also_between(s):
        return ""
    between = s.wall_us - s.cpu_in_ops_us
    return (
        f" The other {between / s.wall_us:.0%} of the window ({duration(between)}) is between the ops: Python and "
        "framework code the profiler does not record as ops (tracetui code lists the Python by function where the "
        "trace has its frames: with_stack=True)."
    )


def cpu_reading(s: Summary) -> str:
    """CPU only: where the CPU time goes, inside the ops (the top ones named) or between them."""
    head = no_gpu(s.cut_short) + ". "
    if s.verdict == "cpu-only":
        return head + "It has no ops to judge."
    share = s.cpu_in_ops_us / s.wall_us if s.wall_us else 0.0
    top = ", ".join(f"{name} {duration(us)}" for name, us in s.cpu_top_self)
    short = ", ".join(f"{name} {duration(us)}" for name, us in s.cpu_short_top)
    if s.verdict == "cpu-in-ops" and small_ops(s):
        return (
            head
            + (
                f"Ops run {share:.0%} of the window, but {s.cpu_short_op_share:.0%} of the aten ops' own time is in calls "
                f"of under {duration(CPU_SHORT_OP_US)} each ({duration(s.cpu_op_avg_us)} on average), so fixed per-op costs "
                f"(dispatch, Python) are much of it; the most own time in such calls: {short}; the most in all: {top}. "
                "Bigger tensors per call, fewer small ops, or torch.compile would help."
            )
            + _between_said(s)
        )
    if s.verdict == "cpu-in-ops":
        return (
            head
            + (
                f"Ops run {share:.0%} of the window, so their own work is the cost; the most self time: {top}. Make those "
                "ops cheaper (fewer or larger calls, a better algorithm, torch.compile to fuse them)."
            )
            + _between_said(s)
        )
    return head + (
        f"Ops run only {share:.0%} of the window: most of the time is between them (Python, data loading, framework "
        f"code the profiler does not record as ops). The most self time inside ops: {top}. Profile with "
        "--with-stack to see the Python code between them."
    )


def missing_reading(s: Summary) -> str:
    """A CUDA run whose device records were lost: what that looks like, the likely causes and the fixes."""
    return f"Device records missing: {s.reason}."


def launches_cost_more(s: Summary) -> bool:
    """Does a launch (outliers left out) take more CPU time than the GPU work it buys?"""
    return s.launches_cost_more


def around_launches(s: Summary) -> bool:
    """Is the CPU work on the path per kernel launched far more than the launch call itself (AROUND_LAUNCH times)?
    Then the Python and dispatch around each launch are the cost, not the call."""
    return bool(s.path.launches) and s.cpu_per_kernel_us >= AROUND_LAUNCH * max(s.call_us, 1e-9)


def overhead_reading(s: Summary, uses: Uses | None = None) -> str:
    """Why the GPU waits, naming the real cause: the CPU work per kernel on the path, or the CPU's other work; what
    comes next from what the run already uses (a compiled run: CUDA graphs; a graphed one: what is outside them)."""
    if uses is not None and uses.cpu_next != "cpu-eager" and launches_cost_more(s):
        return _overhead_head(s) + next_words(uses, uses.cpu_next)
    head = _overhead_head(s)
    if launches_cost_more(s) and around_launches(s):  # (the launch reading gives the figures, once)
        return head + (
            "The CPU work around each launch (Python, dispatch, the op's own code) is the cost, far more than the "
            "launch call itself: fewer, larger kernels (torch.compile) or CUDA graphs remove both (tracetui critical "
            "--what-if graphs says what they would save); taking out only the launch calls would not (--what-if "
            "launch=0)."
        )
    if launches_cost_more(s):
        return head + (
            "Launching is the cost: a launch call takes more CPU time than the GPU work it buys. Fewer, larger kernels "
            "(torch.compile) or CUDA graphs (tracetui critical --what-if graphs says what they would save) are where "
            "the time is."
        )
    busy = ", ".join(f"{name} {duration(us)}" for name, us in s.cpu_while_idle) or "code outside the profiled ops"
    return head + (
        "The launch calls are cheap (each buys more GPU work than its own CPU time); the CPU's other work holds the "
        f"GPU up. Across the profiled window, while no GPU worked, the CPU ran: {busy}. Speed that up, or overlap it with GPU work."
    )


def _overhead_head(s: Summary) -> str:
    return (
        f"{path_head(s)} CPU work, launch delays and gaps between kernels: the GPU waits for the CPU (GPU busy "
        f"{s.gpu_utilization:.0%} of the window). "
        if s.path.length_us
        else f"GPU busy {s.gpu_utilization:.0%} of the window: the GPU waits for the CPU. "
    )


def launch_reading(s: Summary) -> str | None:
    """The CPU cost of a kernel as the step pays it (the path's CPU work per launch), beside the launch call's own."""
    if s.cpu_only or s.device_records_missing or not s.launches:
        return None
    p = s.path
    where = f" in {s.launch_step}" if s.launch_step else ""  # the step's calls where its figures are read
    call = f"A launch call{where} takes {duration(s.call_us)} of CPU (median {duration(s.call_median_us)})"
    if p.launches:
        step = f"the step {p.window}" if p.event >= 0 else "the trace"
        call += (
            f", but the CPU work on the critical path of {step} comes to {duration(s.cpu_per_kernel_us)} per kernel "
            f"launched ({duration(p.cpu_us)} over {p.launches:,} launches)"
        )
    buys = f"; each launch buys {duration(s.gpu_per_kernel_us)} of GPU work"
    outliers = launch_outliers_reading(s)
    if s.verdict == "overhead-bound" or (not p.launches and launches_cost_more(s)):
        return f"{call}{buys}: the CPU cannot keep the GPU fed." + outliers
    return f"{call}{buys}: the GPU has enough work to hide the cost of launching." + outliers


def launch_outliers_reading(s: Summary) -> str:
    """The calls the average launch call leaves out (the step's where its figures are read, as call_us)."""
    if not s.call_outliers:
        return ""
    worst = s.call_outliers[0]
    return (
        f" Left out: {len(s.call_outliers)} outlier(s); the slowest, {worst.name}, took {duration(worst.dur_us)} against a "
        f"median of {duration(s.call_median_us)} (see explain)."
    )


WARMUP_FACTOR = 1.2  # a first step this much slower than the others (but under SLOW_FACTOR): some warm-up left


def cold_start_reading(s: Summary) -> str | None:
    steps = real_steps(s.steps)
    if len(steps) < 2:
        return None
    elapsed = [st.elapsed_us for st in steps]
    first, others = steps[0], typical(elapsed[1:])  # the one baseline of the cold-start rule, its ratio and its words
    took = f"{first.name} took {duration(first.elapsed_us)}"
    took += "" if s.cpu_only else " until its CPU span and its GPU work both ended"
    against = f"{first.elapsed_us / others:.1f}x the typical step, {typical_said(steps[1:], others, first.elapsed_us)}"
    if cold_first(elapsed) is not None:
        return (
            f"{took}: {against}; a cold start (first-call allocations, library setup, autotuning). Warm up before "
            "profiling (--warmup)."
        )
    if is_slow(first.elapsed_us, others, WARMUP_FACTOR):
        return (
            f"{took}: {against}; some warm-up left, short of a cold start ({SLOW_FACTOR:g}x). Warm up longer before "
            "profiling (--warmup) for steps that all look alike."
        )
    gpu = "" if s.cpu_only else ", until its CPU span and its GPU work both ended"
    return (
        f"Steps take about the same time ({duration(s.typical.us)} typical{gpu}): no cold start in the profiled window."
    )


def typical_said(others: list[Step], us: float, beside: float) -> str:
    """The typical step a first one is measured against, by what it is (in the unit of the figure beside it):
    "ProfilerStep#3's 73.4 us" of one other step, "the faster of the other 2 steps (ProfilerStep#3, 192.7 us)",
    "the median of the other 4 steps (ProfilerStep#5, the lower of the middle two, 706.1 us)", "the median of the
    other 5 steps (215.89 ms)": a step that ran (steps.typical); never a median of one step."""
    said = duration_as(us, beside)
    if len(others) == 1:
        return f"{others[0].name}'s {said}"
    named = next((f"{st.name}, " for st in others if st.elapsed_us == us), "")
    if len(others) == 2:
        return f"the faster of the other 2 steps ({named}{said})"
    if len(others) % 2 == 0:
        return f"the median of the other {len(others):,} steps ({named}the lower of the middle two, {said})"
    return f"the median of the other {len(others):,} steps ({said})"


def fact_readings(s: Summary) -> dict[str, str]:
    """One plain-English line per summary number, keyed by the summary's JSON keys."""
    out = {
        "wall_us": "from the first start to the last end on the CPU threads and GPU streams (the active steps); the "
        "profiler's own spans (the trace's Traces and Spans lanes) are left out, so the timeline's ruler can run "
        "a little longer",
        "cpu_self_total_us": "self time summed over every thread's ops, as the ops table adds it up (a Python frame's "
        "time in the op it ran under; ops --python-frames lists frames as rows); threads run side by side, so it can "
        "pass the wall time",
    }
    if s.cpu_only or s.device_records_missing:
        return out
    launches = f"CPU time in launch calls: {_keeps_up(s)}" if s.launches else ""  # (the launch reading: figures)
    out |= {
        "gpu_busy_us": "time at least one kernel or copy was running on the GPU",
        "gpu_idle_us": "time the GPU had nothing to do: gaps on the GPU lanes"
        + ("; most of the window" if s.gpu_utilization < 0.5 else ""),
        "cpu_launch_us": launches or "no call put work on the device",
        "kernels": "too little work per launch to hide its CPU cost"
        if launches_cost_more(s)
        else f"enough work per launch to hide the launch call, not {s.whose} CPU work around it"
        if starved(s)
        else "enough work per launch to hide its CPU cost",
        "device_self_total_us": "kernel time summed over ops (overlapping streams count twice, unlike GPU busy)",
    }
    return out


def starved(s: Summary) -> bool:
    """Does the step's CPU work per kernel launched (on its critical path) pass the GPU work a launch buys? Then the
    CPU cannot keep the GPU fed, however cheap the launch call itself."""
    return bool(s.path.launches) and s.cpu_per_kernel_us > s.gpu_per_kernel_us


def _keeps_up(s: Summary) -> str:
    """Whether the launch calls are the cost, in the words the overhead reading uses (one story in both places)."""
    if not launches_cost_more(s) and starved(s):
        return f"each call is cheap beside the GPU work it buys, but {s.whose} CPU work around it is not"
    if not launches_cost_more(s):
        return "the GPU has work to hide them"
    if around_launches(s):
        return "each takes more CPU than the GPU work it buys, but the CPU work around each launch costs far more"
    return "each call takes more CPU than the GPU work it buys"


def readings(s: Summary, uses: Uses | None = None) -> list[str]:
    """All the readings that apply, most important first (with what the run uses: advice that starts from it)."""
    return [r for r in (verdict_reading(s, uses), launch_reading(s), cold_start_reading(s)) if r]
