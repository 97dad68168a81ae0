"""One verdict, read from the critical path of the typical step: what bounds it, in the words a beginner acts on.

The path's classes (critical/classes.py) fall into the verdict's groups: CPU work, launch delays and gaps between
kernels are overhead (the GPU waits for per-op costs, not for the math); GPU compute; copies; communication (the
GPU's collective kernels and the CPU's time inside collective calls); sync (the CPU's own time returning from waits
on the device); data loading; compiling. The verdict names the group that holds at least half of the path, and is
`mixed` when none does. Busy shares, the launches and the rest stay as the reasons under it. A CPU-only trace keeps
its own words for CPU work (cpu-in-ops, cpu-between-ops); a trace whose device records were lost says so.
"""

from __future__ import annotations

from collections.abc import Callable

from ..steps import Step
from ..words import duration
from .compiling import Compiling
from .critical.path import CriticalPath
from .summary import CPU_WORDS, PathFacts, Summary, busy_numbers, cpu_in_ops_word

MIXED_BELOW = 0.5  # no group holds this share of the path: mixed
GROUP = {  # path class -> verdict
    "cpu_bound": "overhead-bound",
    "gpu_kernel_launch_overhead": "overhead-bound",
    "gpu_kernel_kernel_overhead": "overhead-bound",
    "gpu_compute_bound": "compute-bound",
    "gpu_memcpy_bound": "copy-bound",
    "gpu_communication_bound": "communication-bound",
    "communication": "communication-bound",
    "sync": "sync-bound",
    "data_loading": "data-loading-bound",
    "compiling": "compiling",
    "idle": "mixed",
}
WHAT = {  # verdict -> what holds the path, in words
    "overhead-bound": "CPU work, launch delays and gaps between kernels: the GPU waits for the CPU",
    "compute-bound": "GPU compute: the kernels' own time",
    "copy-bound": "copies and memsets",
    "communication-bound": "communication: collective kernels, and the CPU inside collective calls",
    "sync-bound": "the CPU coming back from waits on the device",
    "data-loading-bound": "data loading",
    "compiling": "torch.compile compiling",
}
GROUP_TITLE = {  # verdict -> the path classes it stands for, in a few words
    "overhead-bound": "CPU work, launch delays and gaps between kernels",
    "compute-bound": "GPU compute",
    "copy-bound": "copies",
    "communication-bound": "communication",
    "sync-bound": "returns from waits on the device",
    "data-loading-bound": "data loading",
    "compiling": "compiling",
}
TITLE = {  # path class -> a few words (the reason's breakdown)
    "cpu_bound": "CPU work",
    "gpu_compute_bound": "GPU compute",
    "gpu_communication_bound": "collectives",
    "gpu_memcpy_bound": "copies",
    "gpu_kernel_launch_overhead": "launch delays",
    "gpu_kernel_kernel_overhead": "gaps between kernels",
    "data_loading": "data loading",
    "idle": "nothing recorded",
    "sync": "sync",
    "compiling": "compiling",
    "communication": "CPU in collectives",
}


def shares(breakdown: dict[str, float]) -> dict[str, float]:
    """Per verdict group: its share of the path (0..1)."""
    total = sum(breakdown.values())
    out: dict[str, float] = {}
    for cls, t in breakdown.items():
        out[GROUP.get(cls, "mixed")] = out.get(GROUP.get(cls, "mixed"), 0.0) + (t / total if total else 0.0)
    return out


def path_verdict(breakdown: dict[str, float]) -> tuple[str, str, float]:
    """(verdict, bound_by, its share): the path's top class, its group when that group holds at least half the
    path, and the group's share; mixed (with the top class) otherwise. The verdict always names the class the path
    spends most on: CPU 45% and launch delays 7% beside 48% GPU compute is mixed, not overhead-bound."""
    by_group = shares(breakdown)
    if not by_group:
        return "", "", 0.0
    top = max(breakdown, key=lambda c: breakdown[c])
    group = GROUP.get(top, "mixed")
    share = by_group.get(group, 0.0)
    return ("mixed" if group == "mixed" or share < MIXED_BELOW else group), top, share


def facts(path: CriticalPath, step: Step | None) -> PathFacts:
    """What the summary keeps of the path it reads: window, length, breakdown (classes with time), the kernels
    launched in the window and the CPU time on the path."""
    breakdown = {c: ns / 1000.0 for c, ns in path.breakdown.items() if ns > 0}
    cpu = sum(t for c, t in breakdown.items() if c == "cpu_bound")
    launches = step.launches if step is not None and step.event == path.event else 0
    device = step.device_us if launches and step is not None else 0.0
    return PathFacts(path.window, path.event, path.length_ns / 1000.0, breakdown, launches, cpu, device)


def judge(
    s: Summary,
    path: CriticalPath | None,
    compiled: Compiling,
    step: Step | None,
    calls: Callable[[Step, PathFacts], None] | None = None,
) -> Summary:
    """Give the summary its verdict from the path (the busy-share rule where there is no path), in place; calls:
    what fills in the step's own launch calls' figures (summary.step_calls), when the path reads a step."""
    s.compiling = compiled
    if s.device_records_missing or path is None or path.length_ns <= 0:
        return s
    s.path = facts(path, step)
    if path.event < 0:  # the whole trace: its launches and its device work
        s.path.launches, s.path.device_us = s.launches, s.gpu_busy_us
    elif calls is not None and step is not None and s.launch_step:
        calls(step, s.path)
    verdict, s.bound_by, s.bound_share = path_verdict(s.path.breakdown)
    if s.cpu_only and verdict == "overhead-bound":
        verdict = s.verdict if s.verdict in CPU_WORDS else verdict
    s.verdict = verdict  # type: ignore[assignment]
    s.reason = path_reason(s) + "; " + _numbers(s)
    return s


def _numbers(s: Summary) -> str:
    """The reasons under the verdict: the busy shares and launches, or a CPU-only trace's own (its ops' self time,
    which threads waiting side by side in collectives would add up past the window: left out when they bound it)."""
    if not s.cpu_only:
        return busy_numbers(s)
    if s.verdict in CPU_WORDS:
        return s.reason
    return f"CPU only; {TITLE.get(s.bound_by, s.bound_by)} {s.bound_share:.0%} of the path"


def path_where(s: Summary) -> str:
    """ProfilerStep#6 (the typical step, 4.43 ms): the window the verdict reads, with the path's length. A step whose
    elapsed time is shorter than its window (it began at the previous step's end, which was still running at its
    start, or it waited after its CPU span for device work queued before it) says both."""
    p = s.path
    if p.event < 0:
        return f"{p.window} ({duration(p.length_us)})"
    elapsed = s.typical.us  # the path's own step's (steps.typical_step: a step that ran)
    if elapsed > 0 and abs(p.length_us - elapsed) > max(0.005 * elapsed, 1.0):
        work = "work" if s.cpu_only else "device work"  # a CPU-only trace's step ends with its CPU's work
        return (
            f"{p.window} (the typical step: {duration(p.length_us)} from its start to the end of its {work}, "
            f"{duration(elapsed)} elapsed)"
        )
    return f"{p.window} (the typical step, {duration(p.length_us)})"


def path_reason(s: Summary) -> str:
    """the critical path of ProfilerStep#6 (the typical step, 4.43 ms) is 97% CPU work, launch delays and gaps..."""
    p = s.path
    where = path_where(s)
    if s.verdict == "mixed":
        top = sorted(p.breakdown.items(), key=lambda kv: -kv[1])[:3]
        parts = ", ".join(f"{TITLE.get(c, c)} {t / p.length_us:.0%}" for c, t in top)
        return f"no kind of work holds half the critical path of {where}: {parts}"
    what = WHAT.get(s.verdict, "CPU work: the CPU's own work")
    if s.cpu_only and s.verdict in CPU_WORDS:
        what = "CPU work (no device activity)"
    return f"the critical path of {where} is {s.bound_share:.0%} {what}"


def cpu_word(s: Summary) -> str:
    """The summary's word for CPU work on a trace with no device work: its own verdict where that is one, else (a
    job, whose verdict is the job's) the same rule on its window: cpu-in-ops when ops ran most of it."""
    if s.verdict in CPU_WORDS:
        return s.verdict
    if not s.cpu_only or not s.wall_us:
        return ""
    return cpu_in_ops_word(s.cpu_in_ops_us / s.wall_us)


def verdict_words(breakdown: dict[str, float], cpu_only: bool = False, cpu_word: str = "") -> str:
    """overhead-bound: CPU work, launch delays and gaps between kernels hold 92% of the path (the critical report's
    line, and the viewer's); mixed: the top classes with their shares; on a trace with no device work, the
    summary's word for its CPU work (cpu_word: cpu-in-ops, cpu-between-ops, as summary and ranks say it), else
    cpu-bound."""
    verdict, _cls, share = path_verdict(breakdown)
    if not verdict:
        return "nothing on the path"
    if cpu_only and verdict == "overhead-bound":
        return f"{cpu_word or 'cpu-bound'}: CPU work holds {share:.0%} of the path (no device activity)"
    if verdict == "mixed":
        total = sum(breakdown.values()) or 1.0
        top = sorted(breakdown.items(), key=lambda kv: -kv[1])[:3]
        return (
            "mixed: no kind of work holds half the path ("
            + ", ".join(f"{TITLE.get(c, c)} {t / total:.0%}" for c, t in top)
            + ")"
        )
    return f"{verdict}: {GROUP_TITLE[verdict]} hold {share:.0%} of the path"
