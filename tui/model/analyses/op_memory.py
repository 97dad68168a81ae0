"""The memory columns of torch's key_averages(): the [memory] records inside each op, and those outside every op."""

from __future__ import annotations

import numpy as np

from ..trace import TraceColumns

CPU_MEMORY_DEVICES = (0, 2, 5)  # c10 DeviceType CPU, MKLDNN, IDEEP
DEVICE_MEMORY_DEVICES = (1, 6, 12, 20)  # CUDA, HIP, XPU, PrivateUse1


def memory_records(trace: TraceColumns) -> np.ndarray:
    """Indices of the [memory] instants (allocations > 0, frees < 0)."""
    if "[memory]" not in trace.names or not len(trace.inst.ts):
        return np.empty(0, np.int64)
    return np.flatnonzero(trace.inst.name == trace.names.index("[memory]"))


def memory_usage(trace: TraceColumns, host, end) -> tuple[np.ndarray, np.ndarray]:
    """Per host event: net bytes of the [memory] records inside [start, end] (any thread), as torch counts."""
    out = np.zeros(trace.n, np.int64), np.zeros(trace.n, np.int64)
    mem = memory_records(trace)
    if not len(mem):
        return out
    inst = trace.inst
    order = mem[np.argsort(inst.ts[mem], kind="stable")]
    ts = inst.ts[order]
    events = np.flatnonzero(host)
    lo = np.searchsorted(ts, trace.x.ts[events], side="left")
    hi = np.searchsorted(ts, end[events], side="right")
    for target, kinds in zip(out, (CPU_MEMORY_DEVICES, DEVICE_MEMORY_DEVICES), strict=True):
        counted = np.where(np.isin(inst.dev_type[order], kinds), inst.bytes[order], 0)
        prefix = np.concatenate([[0], np.cumsum(counted)])
        target[events] = prefix[hi] - prefix[lo]
    return out


def loose_memory(trace: TraceColumns, roots, end) -> tuple[int, int, int]:
    """The [memory] records outside every host event, which torch makes a row of their own: how many, and their
    CPU and device bytes (roots: the host events under no other, which hold every other)."""
    mem = memory_records(trace)
    if not len(mem):
        return 0, 0, 0
    inst = trace.inst
    ts = inst.ts[mem]
    starts, ends = trace.x.ts[roots], end[roots]
    order = np.argsort(starts)
    starts, run_end = starts[order], np.maximum.accumulate(ends[order]) if len(order) else ends
    pos = np.searchsorted(starts, ts, side="right") - 1
    covered = (pos >= 0) & (run_end[np.maximum(pos, 0)] >= ts) if len(starts) else np.zeros(len(ts), bool)
    loose = mem[~covered]
    kinds = inst.dev_type[loose]
    cpu = int(inst.bytes[loose][np.isin(kinds, CPU_MEMORY_DEVICES)].sum())
    return len(loose), cpu, int(inst.bytes[loose][np.isin(kinds, DEVICE_MEMORY_DEVICES)].sum())
