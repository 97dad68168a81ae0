"""Per-kernel statistics: count, total, average, min, max, share of GPU time, launch latency."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cats import BUSY_CATS, Cat
from ..links import Links
from ..trace import Trace
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
    pct_gpu: float
    launch_latency_us: float | None  # mean (kernel start - launch call start)
    example: int  # one event index, to show its args
    role: str = ""  # what the kernel does, from its name (see kernel_roles.py); memcpy/memset: data movement
    unit: str = ""  # where its math runs, from its name: matrix (tensor / matrix cores), vector (CUDA cores), "" unsaid
    dtype: str = ""  # the dtype of that math, where the name says it


_KIND = {int(Cat.KERNEL): "kernel", int(Cat.MEMCPY): "memcpy", int(Cat.MEMSET): "memset"}


def kernel_rows(trace: Trace, links: Links) -> list[KernelRow]:
    """Aggregate GPU activity by name, sorted by total time descending."""
    x = trace.x
    idx = np.flatnonzero(np.isin(x.cat, [int(c) for c in BUSY_CATS]))
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
    lat_sum, lat_n = _latency(trace, links, idx, group, len(names))
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
            float(100.0 * total[g] / grand),
            float(lat_sum[g] / lat_n[g]) if lat_n[g] else None,
            int(first[g]),
            *_class(trace.names[int(names[g])], int(x.cat[first[g]])),
        )
        for g in range(len(names))
    ]
    rows.sort(key=lambda r: -r.total_us)
    return rows


def _class(name: str, cat: int) -> tuple[str, str, str]:
    """A row's role, unit and dtype (kernel_roles.py: one classifier for every table and rule)."""
    k = device_class(name, cat == int(Cat.KERNEL))
    return k.role, k.unit, k.dtype


def _latency(trace: Trace, links: Links, idx, group, n) -> tuple[np.ndarray, np.ndarray]:
    launcher = links.launcher[idx]
    ok = launcher >= 0
    lat = (trace.x.ts[idx[ok]] - trace.x.ts[launcher[ok]]) / 1000.0
    return np.bincount(group[ok], weights=lat, minlength=n), np.bincount(group[ok], minlength=n)
