"""The summary a PyTorch engineer reads first: window, GPU busy, launches, steps, verdict."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ..cats import BUSY_CATS, Cat, of_cats
from ..links import link
from ..nesting import children_total
from ..sets import distinct
from ..steps import Step, TypicalStep, steps, typical_step
from ..threads import side_by_side
from ..trace import TraceColumns, on_real_tracks, rank_of_events, ranks_at
from ..words import duration, took
from .compiling import Compiling
from .device_work import DeviceWork, device_work
from .graphs.replay import GraphStats, graph_note, graph_owner, graph_stats
from .host_collectives import HostCollectives, host_collectives
from .launches import (
    OUTLIER_MIN_US,
    RuntimeCalls,
    blocking_copies,
    device_callers,
    launch_calls,
    other_runtime,
    slow_launches,
)
from .ops import OpsTable

CUDA_LAUNCH = re.compile(r"^(cuda|hip|cu)[A-Z]")  # the CUDA and HIP runtime and driver calls
COMPUTE_BOUND_UTIL = 0.7
OVERHEAD_BOUND_UTIL = 0.3
IDLE_TOP = 3  # CPU consumers named while the GPU waits


# CPU only: cpu-in-ops (most of the window inside ops), cpu-between-ops (most of it between them), cpu-only (no ops).
# device-records-missing: launch calls but no device records (CUPTI off or failed): not CPU only.
# copy-bound: busy most of the window, mostly with copies and sets rather than kernels.
# From the critical path (verdict.py): also communication-bound, sync-bound, data-loading-bound and compiling.
GpuVerdict = Literal[
    "compute-bound",
    "copy-bound",
    "overhead-bound",
    "mixed",
    "communication-bound",
    "sync-bound",
    "data-loading-bound",
    "compiling",
]
Verdict = GpuVerdict | Literal["cpu-in-ops", "cpu-between-ops", "cpu-only", "device-records-missing", ""]
CPU_IN_OPS = 0.5  # CPU only: the share of the window inside ops above which the ops' own work is the cost
CPU_WORDS = ("cpu-in-ops", "cpu-between-ops")  # a CPU-only trace's verdicts for its CPU work


def cpu_in_ops_word(share: float) -> Literal["cpu-in-ops", "cpu-between-ops"]:
    """A CPU-only window's word for its CPU work, from the share of it that ops ran."""
    return "cpu-in-ops" if share >= CPU_IN_OPS else "cpu-between-ops"


NO_CPU_PER_LAUNCH_US = 0.05  # less CPU work on the path per launch than this is none (it would print as 0.0 us)
CPU_TOP = 3  # CPU only: the ops named by self time
CPU_SHORT_OP_US = 20.0  # CPU only: aten ops shorter than this on average are mostly fixed per-op cost


@dataclass
class LaunchOutlier:
    name: str
    dur_us: float
    event: int


@dataclass
class PathFacts:
    """The critical path the verdict reads (verdict.py): its window (the typical step, or the whole trace), length and
    breakdown (path class -> us, classes with time only), the launches in the window and the CPU work on the path."""

    window: str = ""
    event: int = -1  # the window's span (-1: the whole trace)
    length_us: float = 0.0
    breakdown: dict[str, float] = field(default_factory=dict)
    launches: int = 0
    cpu_us: float = 0.0
    device_us: float = 0.0  # the device work launched in the window (busy time: overlapping work counted once)
    # the window's own launch calls (a step's: those that start inside it), as the summary's typical_launch_us and
    # median_launch_us are the whole trace's: their mean (outliers and blocking copies left out), median, outliers
    call_us: float = 0.0
    call_median_us: float = 0.0
    call_outliers: list[LaunchOutlier] = field(default_factory=list)

    @property
    def cpu_per_launch_us(self) -> float:
        """The CPU work on the path per launch in the window: what each kernel costs the CPU when it is the cost."""
        return self.cpu_us / self.launches if self.launches else 0.0


@dataclass
class Summary:
    """Times in microseconds; utilization as a fraction of the window."""

    wall_us: float
    gpu_busy_us: float
    gpu_utilization: float
    cpu_launch_us: float
    launches: int  # runtime and driver calls that put work on the device (launches.py)
    kernels: int
    device_self_total_us: float
    cpu_self_total_us: float
    verdict: Verdict
    reason: str
    cpu_only: bool  # no device activity and no launch calls: a CPU-only run
    gpus: int
    device_records_missing: bool  # launch calls (and ac2g flows) but no kernel, memcpy or memset record
    steps: list[Step] = field(default_factory=list)
    avg_kernel_us: float = 0.0
    avg_launch_us: float = 0.0
    median_launch_us: float = 0.0
    launch_outliers: list[LaunchOutlier] = field(default_factory=list)  # the slowest first
    blocking_copies: list[LaunchOutlier] = field(default_factory=list)  # copies the CPU waited for (not launch time)
    cpu_launch_typical_us: float = 0.0  # CPU time in launch calls, outliers left out
    timed_launches: int = 0  # the launch calls whose time is launch time: blocking copies (waits) left out
    cpu_while_idle: list[tuple[str, float]] = field(default_factory=list)  # (op, us) the CPU ran while no GPU worked
    graphs: GraphStats = field(default_factory=GraphStats)  # CUDA/HIP graph launches and what they replayed
    ac2g_flows: int = 0  # launch-to-device flow arrows (with device records missing: where the records should be)
    profiler_ranges: int = 0  # cuda_profiler_range events: a CUPTI range-profiler capture, counters but no kernels
    cpu_in_ops_us: float = 0.0  # CPU only: time at least one op ran (overlaps counted once)
    cpu_top_self: list[tuple[str, float]] = field(default_factory=list)  # CPU only: (op, self us), the most first
    cpu_op_avg_us: float = 0.0  # CPU only: the aten ops' own (self) time per call
    cpu_short_op_share: float = 0.0  # CPU only: of the aten ops' own time, the share in ops of < CPU_SHORT_OP_US a call
    cpu_short_top: list[tuple[str, float]] = field(default_factory=list)  # CPU only: those short ops, (op, self us)
    cut_short: bool = False  # the file ended before its last event: records written last (the GPU's) may be lost
    other_runtime: list[RuntimeCalls] = field(default_factory=list)  # runtime calls that launched nothing, per name
    work: DeviceWork = field(default_factory=DeviceWork)  # kernels, copies by direction, sets
    path: PathFacts = field(default_factory=PathFacts)  # the critical path the verdict reads (none: busy shares)
    bound_by: str = ""  # the path class with the most time in the verdict's group ("" without a path)
    bound_share: float = 0.0  # the verdict group's share of the path
    compiling: Compiling = field(default_factory=Compiling)  # torch.compile compiling in the trace
    host_collectives: HostCollectives = field(default_factory=HostCollectives)  # collectives that launched nothing

    @property
    def other_runtime_calls(self) -> int:
        return sum(c.count for c in self.other_runtime)

    @property
    def other_runtime_us(self) -> float:
        return sum(c.cpu_us for c in self.other_runtime)

    @property
    def window_gpu_per_launch_us(self) -> float:
        """GPU busy time per launch over the whole window (0 without launches): what a launch buys where no step's
        path says it (gpu_per_kernel_us)."""
        return self.gpu_busy_us / self.launches if self.launches else 0.0

    @property
    def typical_launch_us(self) -> float:
        """The CPU time a launch call takes on average, outliers and blocking copies left out (0 without launches):
        cpu_launch_typical_us over the calls it sums."""
        n = self.timed_launches - len(self.launch_outliers)
        return self.cpu_launch_typical_us / n if n > 0 else 0.0

    @property
    def call_us(self) -> float:
        """The CPU time a launch call takes on average where the per-launch figures are read: the typical step's
        calls when the path reads one (launch_step), else the window's (typical_launch_us)."""
        return self.path.call_us if self.launch_step else self.typical_launch_us

    @property
    def call_median_us(self) -> float:
        """The median launch call where the per-launch figures are read (as call_us)."""
        return self.path.call_median_us if self.launch_step else self.median_launch_us

    @property
    def call_outliers(self) -> list[LaunchOutlier]:
        """The launch calls call_us leaves out: the step's (launch_step), else the window's."""
        return self.path.call_outliers if self.launch_step else self.launch_outliers

    @property
    def cpu_per_kernel_us(self) -> float:
        """The CPU time a kernel costs the step: the CPU work on the typical step's critical path per launch in it
        (the launch call's own time, typical_launch_us, when there is no path to read)."""
        return self.path.cpu_per_launch_us if self.path.launches else self.typical_launch_us

    @property
    def gpu_per_kernel_us(self) -> float:
        """The GPU work a launch buys: in the typical step when the path reads one, else over the window."""
        p = self.path
        return p.device_us / p.launches if p.launches else self.window_gpu_per_launch_us

    @property
    def per_launch_count(self) -> int:
        """The launches the per-launch figures (gpu_per_kernel_us, cpu_per_kernel_us) divide by: the typical step's
        when the path reads one, else the window's. Said beside those figures, never the window's count instead."""
        return self.path.launches or self.launches

    @property
    def launch_step(self) -> str | None:
        """The step those launches ran in (the typical step, whose path the figures read), or None: the window's."""
        return self.path.window if self.path.launches and self.path.event >= 0 else None

    @property
    def per_launch_where(self) -> str:
        """Where those launches ran, as said after their count: " in ProfilerStep#3", or "" for the window's."""
        return f" in {self.launch_step}" if self.launch_step else ""

    @property
    def whose(self) -> str:
        """Whose CPU work the per-launch figure divides: "the step's", or "the window's" where no step is read."""
        return "the step's" if self.launch_step else "the window's"

    @property
    def no_cpu_per_launch(self) -> bool:
        """The path reads launches but no CPU work is on it (under 0.05 us a launch, said as 0.0): the GPU's work sets
        the step, and a CPU cost per launch would read as a measured zero; said as none on the path instead."""
        return bool(self.path.launches) and self.cpu_per_kernel_us < NO_CPU_PER_LAUNCH_US

    @property
    def launches_cost_more(self) -> bool:
        """Does a launch call take more CPU time than the GPU work it buys? The one test of whether launching itself
        is the cost (else the CPU's other work is: cpu_per_kernel_us says how much CPU work a kernel costs the step
        in all)."""
        return self.launches > 0 and self.call_us > self.gpu_per_kernel_us

    @property
    def typical(self) -> TypicalStep:
        """The typical step (steps.py): the median warm step, the cold first one and those that compiled left out."""
        return typical_step(self.steps, frozenset(self.compiling.steps))

    @property
    def graph_launches(self) -> int:
        return self.graphs.launches

    @property
    def graph_kernels(self) -> int:
        return self.graphs.kernels


def union_length(starts: np.ndarray, ends: np.ndarray) -> int:
    """Total length covered by a set of intervals (overlaps counted once)."""
    block_start, block_end = _union(starts, ends)
    return int((block_end - block_start).sum())


def summarize(
    trace: TraceColumns,
    ops: OpsTable | Callable[[], OpsTable],
    parent: np.ndarray | Callable[[], np.ndarray] | None = None,
    launcher: np.ndarray | Callable[[], np.ndarray] | None = None,
    launches: Callable[[], LaunchesAndSteps] | None = None,
) -> Summary:
    """Compute the summary and the verdict with the numbers that decide it (parent: the nesting, for self times;
    launcher: the launch links, computed here when not given; launches: launches_and_steps, when the caller keeps
    it). ops, parent and launcher may be functions that make them: they then run side by side with the summary's
    own passes (threads.py): the links are made beside the nesting the ops table waits for."""
    parents: Callable[[], np.ndarray | None] = parent if callable(parent) else lambda: parent
    given = link(trace).launcher if launcher is None else launcher
    launchers: Callable[[], np.ndarray] = given if callable(given) else lambda: given
    busy_mask = of_cats(trace.x.cat, BUSY_CATS)
    table, (busy, gpus), s, ((t0, t1), idle), work = side_by_side(  # only the verdict waits for the ops table
        ops if callable(ops) else lambda: ops,  # first: the nesting it waits for starts at once
        lambda: _gpu_busy(trace, busy_mask),
        lambda: _launch_side(trace, launchers(), launches, busy_mask, parents),
        lambda: _idle_side(trace, busy_mask, parents),
        lambda: device_work(trace),
    )
    s.wall_us = max(t1 - t0, 0) / 1000.0
    s.gpu_busy_us, s.gpus = busy, gpus
    s.gpu_utilization = busy / (s.wall_us * max(gpus, 1)) if s.wall_us else 0.0
    s.device_self_total_us, s.cpu_self_total_us = table.self_device_total_us, table.self_cpu_total_us
    s.cpu_while_idle, s.work = idle, work
    s.cut_short = trace.report.truncated or trace.report.gz_truncated
    s.verdict, s.reason = _cpu_verdict(trace, table, s, parents()) if s.cpu_only else _gpu_verdict(s)
    if s.cpu_only and s.cut_short:
        s.reason += f"; {CUT_SHORT}"
    if s.device_records_missing:
        s.verdict, s.reason = "device-records-missing", _missing_reason(s)
    s.reason += graph_note(s.graphs)
    return s


LaunchesAndSteps = tuple[np.ndarray, np.ndarray, list[Step]]


def _idle_side(
    trace: TraceColumns, busy_mask: np.ndarray, parents: Callable[[], np.ndarray | None]
) -> tuple[tuple[int, int], list[tuple[str, float]]]:
    """The window (first start and last end on the real lanes) and the CPU's ops while the device idles in it."""
    x = trace.x
    real = on_real_tracks(trace)
    t0 = int(x.ts[real].min()) if real.any() else 0
    t1 = int((x.ts + x.dur)[real].max()) if real.any() else 0
    return (t0, t1), cpu_while_idle(trace, busy_mask, t0, t1, parents()) if busy_mask.any() else []


def _launch_side(
    trace: TraceColumns,
    launcher: np.ndarray,
    launches: Callable[[], LaunchesAndSteps] | None,
    busy_mask: np.ndarray,
    parents: Callable[[], np.ndarray | None],
) -> Summary:
    """The summary's launch figures, steps, graphs and host collectives: all but the window's, the busy time's and
    the ops table's figures (summarize fills those in), so that they are found beside the ops table."""
    owner, launch, step_list = launches() if launches else launches_and_steps(trace, launcher)
    x = trace.x
    blocking = blocking_copies(trace, launcher, launch)
    timed = launch & ~blocking  # a blocking copy's time is a wait on the device, not launch overhead
    kern = x.cat == int(Cat.KERNEL)
    s = Summary(
        wall_us=0.0,
        gpu_busy_us=0.0,
        gpu_utilization=0.0,
        cpu_launch_us=float(x.dur[timed].sum()) / 1000.0,
        launches=int(launch.sum()),
        kernels=int(kern.sum()),
        device_self_total_us=0.0,
        cpu_self_total_us=0.0,
        verdict="",
        reason="",
        cpu_only=False,
        gpus=0,
        device_records_missing=False,
        steps=step_list,
        avg_kernel_us=float(x.dur[kern].mean()) / 1000.0 if kern.any() else 0.0,
        avg_launch_us=float(x.dur[timed].mean()) / 1000.0 if timed.any() else 0.0,
    )
    _launch_stats(trace, timed, s)
    s.blocking_copies = _named_calls(trace, np.flatnonzero(blocking))
    s.other_runtime = other_runtime(trace, launch)
    _device_side(trace, busy_mask, launch, s)
    s.graphs = graph_stats(trace, owner, launch)
    s.host_collectives = host_collectives(trace, parents(), launcher)
    return s


def launches_and_steps(trace: TraceColumns, launcher: np.ndarray) -> LaunchesAndSteps:
    """The graph owner of each event, the launch calls, and the steps with the device work each launched (times
    from the trace's origin, as every time shown: the steps command, SQL and the viewer agree)."""
    owner = graph_owner(trace)
    launch = launch_calls(trace, launcher, owner)
    return owner, launch, steps(trace, trace.origin, callers=device_callers(trace, launcher, owner))


def device_union(trace: TraceColumns, mask: np.ndarray) -> tuple[int, int]:
    """The masked events' time summed over devices, each device's overlaps counted once (ns), and the device count."""
    x = trace.x
    dev_of_track = np.array([hash((t.rank, t.pid)) for t in trace.tracks] or [0], np.int64)
    sel = np.flatnonzero(mask)
    devs = dev_of_track[x.track[sel]]
    total = 0
    for d in distinct(devs):
        mine = sel[devs == d]
        total += union_length(x.ts[mine], x.ts[mine] + x.dur[mine])
    return total, len(distinct(devs))


def _gpu_busy(trace: TraceColumns, busy_mask: np.ndarray) -> tuple[float, int]:
    """Busy time summed over devices (each device's union, us), and the device count."""
    total, devices = device_union(trace, busy_mask)
    return total / 1000.0, devices


def _launch_stats(trace: TraceColumns, launch: np.ndarray, s: Summary) -> None:
    """Median launch, the outliers (named, the slowest first), and launch CPU time without them."""
    idx = np.flatnonzero(launch)
    if not len(idx):
        return
    dur = trace.x.dur[idx] / 1000.0
    s.median_launch_us = float(np.median(dur))
    s.timed_launches = len(idx)
    out = slow_launches(trace, idx)
    s.launch_outliers = _named_calls(trace, idx[out])
    s.cpu_launch_typical_us = float(dur[~out].sum())


def step_calls(trace: TraceColumns, launcher: np.ndarray, launch: np.ndarray, step: Step, p: PathFacts) -> None:
    """The step's own launch calls' figures into p (call_us, call_median_us, call_outliers): the launch calls that
    start inside its CPU span on its rank, as its device work counts them (steps.py), blocking copies left out, and
    the outliers among them by the window's rule (slow_launches), in place."""
    x = trace.x
    i = step.event
    lo, hi = int(x.ts[i]), int(x.ts[i] + x.dur[i])
    calls = np.flatnonzero(launch)
    calls = calls[(x.ts[calls] >= lo) & (x.ts[calls] <= hi) & (ranks_at(rank_of_events(trace), calls) == step.rank)]
    mine = np.zeros(trace.n, bool)
    mine[calls] = True
    calls = calls[~blocking_copies(trace, launcher, mine)[calls]]
    if not len(calls):
        return
    dur = x.dur[calls] / 1000.0
    out = slow_launches(trace, calls)
    p.call_us = float(dur[~out].mean()) if (~out).any() else 0.0
    p.call_median_us = float(np.median(dur))
    p.call_outliers = _named_calls(trace, calls[out])


def _named_calls(trace: TraceColumns, calls: np.ndarray) -> list[LaunchOutlier]:
    """Calls by name and CPU time, the slowest first."""
    dur = trace.x.dur[calls] / 1000.0
    order = np.argsort(-dur, kind="stable")
    return [
        LaunchOutlier(trace.name_of(int(i)), float(d), int(i)) for i, d in zip(calls[order], dur[order], strict=True)
    ]


def cpu_while_idle(
    trace: TraceColumns, busy_mask: np.ndarray, t0: int, t1: int, parent: np.ndarray | None = None
) -> list[tuple[str, float]]:
    """The CPU ops and runtime calls that ran longest, by self time, while no device was busy.

    Without the nesting (parent), a nested op's time counts in its callers too."""
    x = trace.x
    starts, ends = _union(x.ts[busy_mask], (x.ts + x.dur)[busy_mask])
    gap_s = np.concatenate([[t0], ends])
    gap_e = np.concatenate([starts, [t1]])
    keep = gap_e > gap_s
    gap_s, gap_e = gap_s[keep], gap_e[keep]
    before = np.concatenate([[0], np.cumsum(gap_e - gap_s)])

    def idle_until(t: np.ndarray) -> np.ndarray:
        k = np.searchsorted(gap_s, t, side="right") - 1
        inside = np.clip(t - gap_s[np.maximum(k, 0)], 0, (gap_e - gap_s)[np.maximum(k, 0)])
        return np.where(k >= 0, before[np.maximum(k, 0)] + inside, 0)

    host = np.flatnonzero(of_cats(x.cat, (Cat.CPU_OP, Cat.RUNTIME)))
    if not len(host) or not len(gap_s):
        return []
    overlap = (idle_until(x.ts[host] + x.dur[host]) - idle_until(x.ts[host])).astype(np.float64)
    if parent is not None:  # self time: leave out what host children ran
        at = np.full(trace.n, -1, np.int32)  # each host event's position in host
        at[host] = np.arange(len(host), dtype=np.int32)
        up = parent[host]
        where = at[np.maximum(up, 0)]
        inside = (up >= 0) & (where >= 0)
        np.subtract.at(overlap, where[inside], overlap[inside])
    total = np.bincount(x.name[host], overlap)  # by name id (whole ns in float64: exact sums)
    top = np.argsort(-total, kind="stable")[:IDLE_TOP]
    return [(trace.names[k], float(total[k]) / 1000.0) for k in top.tolist() if total[k] > 0]


def _union(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The merged intervals of a set (sorted, disjoint)."""
    if not len(starts):
        return starts, ends
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    run = np.maximum.accumulate(e)
    new = np.ones(len(s), bool)
    new[1:] = s[1:] > run[:-1]
    return s[new], np.maximum.reduceat(run, np.flatnonzero(new))


def busy_numbers(s: Summary) -> str:
    """GPU busy 34% of the 15,600 us window; 439 kernels averaging 12.4 us; 439 launches, ...: the reasons under a
    GPU verdict."""
    return (
        f"GPU busy {s.gpu_utilization:.0%} of the {duration(s.wall_us)} window; {work_phrase(s.work)}; "
        + launch_phrase(s)
    )


def _gpu_verdict(s: Summary) -> tuple[Verdict, str]:
    """The verdict by busy shares: used only where there is no critical path to read (verdict.py reads it)."""
    numbers = busy_numbers(s)
    if s.gpu_utilization >= COMPUTE_BOUND_UTIL:
        return ("copy-bound" if s.work.mostly_copies else "compute-bound"), numbers
    if s.gpu_utilization < OVERHEAD_BOUND_UTIL:
        return "overhead-bound", numbers
    return "mixed", numbers


def work_phrase(w: DeviceWork) -> str:
    """ "60 kernels averaging 5.1 us, 1 copy (D2H)" or "30 copies (P2P ×30, 12.3 GB/s), no kernels" """
    one = w.kernels == 1
    kernels = (
        f"{w.kernels:,} kernel{'' if one else 's'} averaging {w.kernel_us / w.kernels:,.1f} us"
        if w.kernels
        else "no kernels"
    )
    if not w.copies:
        return kernels
    copies = [c for c in w.copies if c.kind != "set"]
    sets = [c for c in w.copies if c.kind == "set"]
    parts = [kernels] if w.kernels else []
    if copies:
        n = sum(c.count for c in copies)
        parts.append(f"{n:,} cop{'y' if n == 1 else 'ies'} ({copy_kinds(w)}, {duration(sum(c.us for c in copies))})")
    if sets:
        parts.append(f"{sets[0].count:,} set{'s' if sets[0].count > 1 else ''} ({duration(sets[0].us)})")
    return ", ".join(parts + ([] if w.kernels else [kernels]))


def copy_kinds(w: DeviceWork) -> str:
    """ "P2P ×30 at 100.0 GB/s, H2D ×2": the copies by direction, with their bandwidth where bytes were read."""
    copies = [c for c in w.copies if c.kind != "set"]
    return ", ".join(f"{c.kind} ×{c.count:,}" + (f" at {c.gbps:,.1f} GB/s" if c.gbps else "") for c in copies)


def launch_phrase(s: Summary) -> str:
    """ "61 launches in ProfilerStep#5, each buying 5.1 us of GPU work for 72.3 us of the step's CPU work (the call
    itself 5.5 us on average)": the count is of the launches the figures are per (the typical step's, else the
    window's: "the window's CPU work")."""
    if not s.launches:
        return "no launch recorded: the device work is linked to no CPU call"
    call, left = duration(s.call_us), left_out(s.call_outliers)
    n = s.per_launch_count  # the launches the figures are per: the typical step's when the path reads one
    each = "buying" if n == 1 else "each buying"
    launches = f"{n:,} launch{'' if n == 1 else 'es'}{s.per_launch_where}, {each} {duration(s.gpu_per_kernel_us)}"
    if not s.path.launches:
        return f"{launches} of GPU work for {call} of CPU on average{left}, median {duration(s.median_launch_us)}"
    if s.no_cpu_per_launch:
        return f"{launches} of GPU work, with no CPU work on {s.whose} critical path (the call itself {call} on average{left})"
    per = f"{duration(s.cpu_per_kernel_us)} of {s.whose} CPU work (the call itself {call} on average{left})"
    return f"{launches} of GPU work for {per}"


def _device_side(trace: TraceColumns, busy_mask: np.ndarray, launch: np.ndarray, s: Summary) -> None:
    """CPU only, or device records missing: no device activity, and no launch call (or some)."""
    s.ac2g_flows = int((trace.flow.ac2g & trace.flow.start).sum())
    ranges = [k for k, c in enumerate(trace.cat_names) if c == "cuda_profiler_range"]
    s.profiler_ranges = int(np.isin(trace.x.cat_str, ranges).sum()) if ranges else 0
    no_device = not busy_mask.any()
    # CUDA/HIP launch calls, or launch-to-device flows (an hpu_op launch has its device records elsewhere by design)
    cuda = any(CUDA_LAUNCH.match(trace.name_of(i)) for i in np.flatnonzero(launch)[:1000].tolist())
    s.device_records_missing = no_device and s.launches > 0 and (s.ac2g_flows > 0 or cuda)
    s.cpu_only = no_device and not s.device_records_missing


def _cpu_verdict(trace: TraceColumns, ops: OpsTable, s: Summary, parent: np.ndarray | None) -> tuple[Verdict, str]:
    """CPU only: where the CPU time goes: inside ops and labelled regions (the top ones by self time), or between."""
    x = trace.x
    leaf = np.ones(trace.n, bool)
    if parent is not None:
        leaf[parent[parent >= 0]] = False
    # ops, and labelled regions with no op inside (record_function work such as gloo:all_reduce)
    op_mask = (x.cat == int(Cat.CPU_OP)) | ((x.cat == int(Cat.USER_ANNOTATION)) & leaf)
    op = np.flatnonzero(op_mask)
    s.cpu_in_ops_us = union_length(x.ts[op], x.ts[op] + x.dur[op]) / 1000.0
    names = {trace.names[int(k)] for k in distinct(x.name[op])}
    # a row's own time; an async region's (gloo:all_reduce, self CPU 0 in torch's table) is its span
    own = {r.name: r.cpu_total_us if r.is_async else r.self_cpu_us for r in ops.rows if not r.is_device}
    shown = [n for n in own if n in names and own[n] > 0]
    s.cpu_top_self = [(n, float(own[n])) for n in sorted(shown, key=lambda n: -own[n])[:CPU_TOP]]
    if not len(op):
        return "cpu-only", "CPU only; no ops in the trace"
    aten = [r for r in ops.rows if r.name.startswith("aten::") and not r.is_device]
    calls = sum(r.count for r in aten)
    s.cpu_op_avg_us = sum(r.self_cpu_us for r in aten) / calls if calls else 0.0
    own_total = sum(r.self_cpu_us for r in aten)
    typical = _typical_call_us(trace, parent)
    short = [r for r in aten if r.count and typical.get(r.name, r.self_cpu_us / r.count) < CPU_SHORT_OP_US]
    short.sort(key=lambda r: -r.self_cpu_us)
    s.cpu_short_op_share = sum(r.self_cpu_us for r in short) / own_total if own_total > 0 else 0.0
    s.cpu_short_top = [(r.name, float(r.self_cpu_us)) for r in short[:CPU_TOP]]
    share = s.cpu_in_ops_us / s.wall_us if s.wall_us else 0.0
    top = ", ".join(f"{name} {duration(us)}" for name, us in s.cpu_top_self)
    numbers = f"CPU only; ops run {share:.0%} of the {duration(s.wall_us)} window; the most self CPU time: {top}"
    numbers += f"; aten ops average {duration(s.cpu_op_avg_us)} of own work" if calls else ""
    return cpu_in_ops_word(share), numbers


def _typical_call_us(trace: TraceColumns, parent: np.ndarray | None) -> dict[str, float]:
    """Per op name, the median own (self) time of its calls in us, its first call left out when it has three or more:
    what a warm call costs (a 64x64 matmul's calls took 53, 21 and 17 us: its average, 31 us, made it long). Empty
    without the nesting (the caller then takes each row's average)."""
    if parent is None:
        return {}
    x = trace.x
    ops = np.flatnonzero(x.cat == int(Cat.CPU_OP))
    if not len(ops):
        return {}
    dur = x.dur.astype(np.float64)
    own = dur - children_total(parent, dur)
    order = ops[np.argsort(x.name[ops], kind="stable")]
    names = x.name[order]
    cuts = np.flatnonzero(np.diff(names)) + 1
    return {
        trace.names[int(group_names[0])]: float(np.median(own[group[1:] if len(group) >= 3 else group])) / 1000.0
        for group, group_names in zip(np.split(order, cuts), np.split(names, cuts), strict=True)
    }


CUT_SHORT = (
    "the file is cut short, and torch writes the GPU records after the CPU ones: a GPU run's kernels may be in the "
    "lost part"
)


def _missing_reason(s: Summary) -> str:
    """Why a trace with launch calls but no device activity is not CPU only, what lost the records, the fix."""
    flows = f" ({s.ac2g_flows:,} launch-to-device flows)" if s.ac2g_flows else ""
    head = (
        f"the trace made {s.launches:,} launches{flows} but recorded no device activity (no kernel, memcpy or "
        "memset), so GPU time cannot be judged: a GPU run whose device records were lost. "
    )
    if s.profiler_ranges:
        return head + (
            f"It is a CUPTI range-profiler capture ({s.profiler_ranges:,} cuda_profiler_range events with counters): "
            "that mode records hardware counters per range instead of kernel records. Profile again without "
            "profiler_metrics in experimental_config to see the kernels"
        )
    if s.cut_short:  # what the loader warned about explains it before any capture setting does
        return head + (
            "The file is cut short, and torch writes the GPU records after the CPU ones: they are most likely in "
            "the lost part. Open the whole file (let the profiler finish writing it, or copy it again)"
        )
    return head + (
        "Likely causes: the profiler ran without "
        "ProfilerActivity.CUDA for the device side, CUPTI could not start (another profiler such as Nsight or DCGM "
        "held it, or profiling is restricted to admin users: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES), or the run ended "
        "before the device buffers were flushed. Profile with activities=[ProfilerActivity.CPU, "
        "ProfilerActivity.CUDA], look for CUPTI errors in the run's log, and let the profiler stop normally"
    )


def left_out(outliers: list[LaunchOutlier]) -> str:
    """ ", leaving out the one hipLaunchKernel that took 6.5 ms" (", leaving out the 5 calls far slower than the
    rest, up to a cudaLaunchKernel of 2.0 ms"): the outliers an average of launch calls leaves out (Summary's
    call_outliers beside call_us), said beside it; "" without any."""
    if not outliers:
        return ""
    worst, n = outliers[0], len(outliers)
    if n == 1:
        return f", leaving out the one {worst.name} that took {took(worst.dur_us)}"
    return f", leaving out the {n:,} calls far slower than the rest, up to a {worst.name} of {took(worst.dur_us)}"


def outlier_note(s: Summary) -> str:
    """ " (one cudaLaunchKernel took 3.06 s)" when launch outliers skew the mean; "" otherwise."""
    if not s.launch_outliers:
        return ""
    worst = s.launch_outliers[0]
    more = (
        f", {len(s.launch_outliers) - 1} more over {OUTLIER_MIN_US / 1000:.0f} ms" if len(s.launch_outliers) > 1 else ""
    )
    return f" (one {worst.name} took {took(worst.dur_us)}{more})"
