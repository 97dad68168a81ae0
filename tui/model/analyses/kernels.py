"""Per-kernel statistics: count, total, average, spread (sample standard deviation, min, max), share of GPU time,
launch latency (median and p95).

The standard deviation is the sample one (n - 1 in the denominator), as HTA's kernel breakdown takes it (pandas'
default `std` in hta/analyzers/breakdown_analysis.py, `_aggr_gpu_kernel_time`); a kernel that ran once has none
(None), where HTA fills in 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cats import BUSY_CATS, Cat, of_cats
from ..links import Links
from ..trace import TraceColumns
from .critical.queue import launch_latency
from .kernel_roles import device_class


@dataclass
class KernelRow:
    """One GPU activity name; times in microseconds."""

    name: str
    kind: str  # kernel, memcpy or memset
    count: int
    total_us: float
    avg_us: float
    min_us: float
    max_us: float
    std_us: float | None  # sample standard deviation of its durations (None: it ran once)
    pct_gpu: float
    latency_median_us: float | None  # launch latency: the launch call's start to the kernel's start (None: no launch)
    latency_p95_us: float | None  # its 95th percentile
    example: int  # one event index, to show its args
    role: str = ""  # what the kernel does, from its name (see kernel_roles.py); memcpy/memset: data movement
    unit: str = ""  # where its math runs, from its name: matrix (tensor / matrix cores), vector (CUDA cores), "" unsaid
    dtype: str = ""  # the dtype of that math, where the name says it


_KIND = {int(Cat.KERNEL): "kernel", int(Cat.MEMCPY): "memcpy", int(Cat.MEMSET): "memset"}


def kernel_rows(trace: TraceColumns, links: Links) -> list[KernelRow]:
    """Aggregate GPU activity by name, sorted by total time descending."""
    x = trace.x
    idx = np.flatnonzero(of_cats(x.cat, BUSY_CATS))
    if not len(idx):
        return []
    names, group = np.unique(x.name[idx], return_inverse=True)
    dur = x.dur[idx].astype(np.float64) / 1000.0
    total = np.bincount(group, weights=dur)
    count = np.bincount(group)
    mins = np.full(len(names), np.inf)
    maxs = np.zeros(len(names))
    np.minimum.at(mins, group, dur)
    np.maximum.at(maxs, group, dur)
    std = _sample_std(group, dur, total / count, count)
    med, p95 = _latency(trace, links, names)
    first = np.full(len(names), -1)
    first[group[::-1]] = idx[::-1]
    grand = total.sum() or 1.0
    rows = [
        KernelRow(
            trace.names[int(names[g])],
            _KIND[int(x.cat[first[g]])],
            int(count[g]),
            float(total[g]),
            float(total[g] / count[g]),
            float(mins[g]),
            float(maxs[g]),
            float(std[g]) if count[g] > 1 else None,
            float(100.0 * total[g] / grand),
            med.get(int(names[g])),
            p95.get(int(names[g])),
            int(first[g]),
            *_class(trace.names[int(names[g])], int(x.cat[first[g]])),
        )
        for g in range(len(names))
    ]
    rows.sort(key=lambda r: -r.total_us)
    return rows


def _sample_std(group: np.ndarray, dur: np.ndarray, mean: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Per group, the sample standard deviation (ddof 1) of dur, from the deviations from each group's mean (no
    sum-of-squares cancellation); NaN where a group has one value."""
    squares = np.bincount(group, weights=(dur - mean[group]) ** 2, minlength=len(count))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(squares / (count - 1))


def _class(name: str, cat: int) -> tuple[str, str, str]:
    """A row's role, unit and dtype (kernel_roles.py: one classifier for every table and rule)."""
    k = device_class(name, cat == int(Cat.KERNEL))
    return k.role, k.unit, k.dtype


def _latency(trace: TraceColumns, links: Links, names: np.ndarray) -> tuple[dict[int, float], dict[int, float]]:
    """Per name id, the median and the 95th percentile of its launch latency (us), over its launches: the one
    definition the launch queue reads too (critical/queue.py). A graph replay's kernels are no launches of their
    own; its first carries the graph launch's latency."""
    dev, latency = launch_latency(trace, links.launcher)
    ids = trace.x.name[dev]
    order = np.lexsort((latency, ids))
    ids, latency = ids[order], latency[order]
    bounds = np.r_[np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]), len(ids)] if len(ids) else np.zeros(1, np.int64)
    med, p95 = {}, {}
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        m, p = np.percentile(latency[a:b], [50, 95])  # whole ns, as the launch queue's
        med[int(ids[a])], p95[int(ids[a])] = int(m) / 1000.0, int(p) / 1000.0
    return med, p95
