"""Aggregate the marked time range by name (Perfetto's area selection): the time each name holds within it.

Every event that overlaps the range counts with the part of it inside the range. Its self time there is
that part less its children's parts, so the self times of one thread add up to the time the thread was
busy in the range, and a row never counts its children's time again. CPU rows (threads) and GPU rows
(streams) are kept apart: the CPU column adds up to the CPU's busy time in the range, the GPU column to
the GPU's. GPU annotation spans (ProfilerStep#N, record_function on the GPU) are spans over kernels, not
work, and are left out. The Analysis given decides the nesting: without Python frames (p), frames are
not rows and their time goes to nothing (an op's self time is the same either way).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis import Analysis
from ..cats import GPU_CATS, Cat, of_cats
from ..sets import distinct


@dataclass
class RangeRow:
    name: str
    count: int  # events of this name overlapping the range
    total_ns: int  # their time inside the range (children included)
    self_ns: int  # their self time inside the range: cpu_self_ns + gpu_self_ns
    cpu_self_ns: int = 0
    gpu_self_ns: int = 0

    @property
    def avg_ns(self) -> float:
        return self.total_ns / self.count if self.count else 0.0


@dataclass
class RangeTotals:
    """What the rows add up to: busy time in the range on the CPU threads and the GPU streams."""

    span_ns: int
    cpu_ns: int
    gpu_ns: int
    threads: int
    streams: int


def aggregate_range(a: Analysis, t0: int, t1: int, tracks: set[int] | None = None) -> list[RangeRow]:
    """Events overlapping [t0, t1] (on the given tracks) by name, with their time inside it; most self time first."""
    x = a.trace.x
    idx = _overlapping(a, t0, t1, tracks)
    if not len(idx):
        return []
    inside = np.zeros(a.trace.n, np.int64)
    inside[idx] = np.minimum(a.end[idx], t1) - np.maximum(x.ts[idx], t0)
    parent = a.nesting.parent[idx]
    kids = np.zeros(a.trace.n, np.int64)
    np.add.at(kids, parent[parent >= 0], inside[idx][parent >= 0])
    own = inside[idx] - kids[idx]
    gpu = of_cats(x.cat[idx], GPU_CATS)
    names, group = np.unique(x.name[idx], return_inverse=True)

    def by_name(values: np.ndarray) -> np.ndarray:
        return np.bincount(group, weights=values, minlength=len(names))

    count, total = np.bincount(group, minlength=len(names)), by_name(inside[idx])
    cpu, dev = by_name(np.where(gpu, 0, own)), by_name(np.where(gpu, own, 0))
    rows = [
        RangeRow(a.trace.names[int(n)], int(c), int(t), int(s + g), int(s), int(g))
        for n, c, t, s, g in zip(names, count, total, cpu, dev, strict=True)
    ]
    return sorted(rows, key=lambda r: (-r.self_ns, -r.total_ns, r.name))


def range_totals(a: Analysis, rows: list[RangeRow], t0: int, t1: int, tracks: set[int] | None = None) -> RangeTotals:
    """The busy time the rows add up to, and on how many threads and streams."""
    idx = _overlapping(a, t0, t1, tracks)
    gpu = of_cats(a.trace.x.cat[idx], GPU_CATS)
    track = a.trace.x.track[idx]
    return RangeTotals(
        t1 - t0,
        sum(r.cpu_self_ns for r in rows),
        sum(r.gpu_self_ns for r in rows),
        len(distinct(track[~gpu])),
        len(distinct(track[gpu])),
    )


def _overlapping(a: Analysis, t0: int, t1: int, tracks: set[int] | None) -> np.ndarray:
    """The events of a's nesting (frames only if it has them) that overlap the range, GPU annotations left out."""
    order = a.nesting.order
    x = a.trace.x
    keep = (x.ts[order] < t1) & (a.end[order] > t0) & (x.cat[order] != int(Cat.GPU_ANNOTATION))
    if a.hide_python:
        keep &= x.cat[order] != int(Cat.PYTHON)
    if tracks is not None:
        keep &= np.isin(x.track[order], list(tracks))
    return order[keep]
