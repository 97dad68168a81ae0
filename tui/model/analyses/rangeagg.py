"""Aggregate the events inside a marked time range by name (Perfetto's area selection)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis import Analysis


@dataclass
class RangeRow:
    name: str
    count: int
    total_ns: int
    self_ns: int

    @property
    def avg_ns(self) -> float:
        return self.total_ns / self.count if self.count else 0.0


def aggregate_range(a: Analysis, t0: int, t1: int, tracks: set[int] | None = None) -> list[RangeRow]:
    """Events fully inside [t0, t1] (on the given tracks), by name, largest total first."""
    order = a.nesting.order
    x = a.trace.x
    inside = (x.ts[order] >= t0) & (a.end[order] <= t1)
    if tracks is not None:
        inside &= np.isin(x.track[order], list(tracks))
    idx = order[inside]
    if not len(idx):
        return []
    names, group = np.unique(x.name[idx], return_inverse=True)
    count = np.bincount(group)
    total = np.bincount(group, weights=x.dur[idx])
    own = np.bincount(group, weights=a.self_ns[idx])
    rows = [
        RangeRow(a.trace.names[int(n)], int(c), int(t), int(s))
        for n, c, t, s in zip(names, count, total, own, strict=False)
    ]
    return sorted(rows, key=lambda r: -r.total_ns)
