"""The summary a PyTorch engineer reads first: window, GPU busy, launches, steps, verdict."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ..cats import BUSY_CATS, Cat
from ..steps import Step, steps
from ..trace import Trace
from .ops import OpsTable

LAUNCH_NAME = re.compile(r"Launch|Memcpy|Memset", re.IGNORECASE)
COMPUTE_BOUND_UTIL = 0.7
OVERHEAD_BOUND_UTIL = 0.3
CPU_SHORT_OP_US = 20.0


Verdict = Literal["compute-bound", "overhead-bound", "mixed", "cpu-only", ""]


@dataclass
class Summary:
    """Times in microseconds; utilization as a fraction of the window."""

    wall_us: float
    gpu_busy_us: float
    gpu_utilization: float
    cpu_launch_us: float
    launches: int
    kernels: int
    device_self_total_us: float
    cpu_self_total_us: float
    verdict: Verdict
    reason: str
    cpu_only: bool
    gpus: int
    steps: list[Step] = field(default_factory=list)
    avg_kernel_us: float = 0.0
    avg_launch_us: float = 0.0


def union_length(starts: np.ndarray, ends: np.ndarray) -> int:
    """Total length covered by a set of intervals (overlaps counted once)."""
    if not len(starts):
        return 0
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    run = np.maximum.accumulate(e)
    new = np.ones(len(s), bool)
    new[1:] = s[1:] > run[:-1]
    block_start = s[new]
    block_end = np.maximum.reduceat(run, np.flatnonzero(new))
    return int((block_end - block_start).sum())


def summarize(trace: Trace, ops: OpsTable) -> Summary:
    """Compute the summary and the verdict with the numbers that decide it."""
    x = trace.x
    kinds = np.array([t.kind for t in trace.tracks] or ["cpu"])
    real = kinds[x.track] != "meta" if trace.n else np.zeros(0, bool)
    t0 = int(x.ts[real].min()) if real.any() else 0
    t1 = int((x.ts + x.dur)[real].max()) if real.any() else 0
    busy_mask = np.isin(x.cat, [int(c) for c in BUSY_CATS])
    busy, gpus = _gpu_busy(trace, busy_mask)
    launch = launch_mask(trace)
    wall = max(t1 - t0, 0) / 1000.0
    n_gpu = max(gpus, 1)
    util = busy / (wall * n_gpu) if wall else 0.0
    kern = x.cat == int(Cat.KERNEL)
    s = Summary(
        wall_us=wall,
        gpu_busy_us=busy,
        gpu_utilization=util,
        cpu_launch_us=float(x.dur[launch].sum()) / 1000.0,
        launches=int(launch.sum()),
        kernels=int(kern.sum()),
        device_self_total_us=ops.self_device_total_us,
        cpu_self_total_us=ops.self_cpu_total_us,
        verdict="",
        reason="",
        cpu_only=not busy_mask.any(),
        gpus=gpus,
        steps=steps(trace, t0),
        avg_kernel_us=float(x.dur[kern].mean()) / 1000.0 if kern.any() else 0.0,
        avg_launch_us=float(x.dur[launch].mean()) / 1000.0 if launch.any() else 0.0,
    )
    s.verdict, s.reason = _cpu_verdict(trace, ops, s) if s.cpu_only else _gpu_verdict(s)
    return s


def _gpu_busy(trace: Trace, busy_mask: np.ndarray) -> tuple[float, int]:
    """Busy time summed over devices (each device's union), and the device count."""
    x = trace.x
    dev_of_track = np.array([hash((t.rank, t.pid)) for t in trace.tracks] or [0], np.int64)
    devs = dev_of_track[x.track[busy_mask]]
    total = 0
    for d in np.unique(devs):
        sel = np.flatnonzero(busy_mask)[devs == d]
        total += union_length(x.ts[sel], x.ts[sel] + x.dur[sel])
    return total / 1000.0, len(np.unique(devs))


def launch_mask(trace: Trace) -> np.ndarray:
    """Runtime calls that launch GPU work (kernel launches, async copies and sets)."""
    is_launch = np.array([bool(LAUNCH_NAME.search(n)) for n in trace.names] or [False])
    return (trace.x.cat == int(Cat.RUNTIME)) & is_launch[trace.x.name]


def _gpu_verdict(s: Summary) -> tuple[Verdict, str]:
    numbers = (
        f"GPU busy {s.gpu_utilization:.0%} of the {s.wall_us:,.0f} us window; "
        f"{s.kernels:,} kernels averaging {s.avg_kernel_us:,.1f} us; "
        f"{s.launches:,} launch calls averaging {s.avg_launch_us:,.1f} us"
    )
    if s.gpu_utilization >= COMPUTE_BOUND_UTIL:
        return "compute-bound", numbers
    if s.gpu_utilization < OVERHEAD_BOUND_UTIL:
        return "overhead-bound", numbers
    return "mixed", numbers


def _cpu_verdict(trace: Trace, ops: OpsTable, s: Summary) -> tuple[Verdict, str]:
    """CPU only: judge by how much work each aten op does compared with fixed per-op cost."""
    aten = [r for r in ops.rows if r.name.startswith("aten::") and not r.is_device]
    calls = sum(r.count for r in aten)
    if not calls:
        return "cpu-only", "no aten ops in the trace"
    leaf_self = sum(r.self_cpu_us for r in aten)
    avg = leaf_self / calls
    share = leaf_self / s.cpu_self_total_us if s.cpu_self_total_us else 0.0
    numbers = f"CPU only; {calls:,} aten op calls averaging {avg:,.1f} us of own work; aten ops do {share:.0%} of the CPU time"
    if avg < CPU_SHORT_OP_US or share < OVERHEAD_BOUND_UTIL:
        return "overhead-bound", numbers
    if share >= COMPUTE_BOUND_UTIL:
        return "compute-bound", numbers
    return "mixed", numbers
