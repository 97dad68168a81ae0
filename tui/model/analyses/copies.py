"""Copies per direction (HTA's get_memory_bw_summary): count, bytes, device time and bandwidth of the H2D, D2H, D2D
and P2P copies and of the sets, pageable against pinned host memory where the copy's name says, and tiny copies.

The direction comes from the name (device_work.direction), the bytes from each copy's `bytes` arg (read with the
events: Events.nbytes). A direction's bandwidth is its bytes over its copies' summed device time; HTA describes the
per-moment bandwidth samples of Kineto's own `memory bandwidth (GB/s)` arg instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..cats import Cat, of_cats
from ..trace import TraceColumns
from .copy_row import CopyRow
from .device_work import DIRECTIONS, direction

SMALL_BYTES = 64 << 10  # a copy under this (64 KiB) moves too little to amortize its fixed cost (a few us)
PAGEABLE = re.compile(r"Pageable", re.IGNORECASE)
PINNED = re.compile(r"Pinned", re.IGNORECASE)
ORDER = [k for k, _ in DIRECTIONS] + ["copy", "set"]


@dataclass
class Copies:
    """Every direction with copies (and the sets), in ORDER."""

    rows: list[CopyRow] = field(default_factory=list)

    def of(self, kind: str) -> CopyRow | None:
        return next((r for r in self.rows if r.kind == kind), None)


def copies(trace: TraceColumns, among: np.ndarray | None = None) -> Copies:
    """The copies by direction and the sets (none: an empty table); among: only these events (a mask: one rank's)."""
    x = trace.x
    mine = of_cats(x.cat, (Cat.MEMCPY, Cat.MEMSET))
    ev = np.flatnonzero(mine if among is None else mine & among)
    if not len(ev):
        return Copies()
    names = [trace.names[int(k)] for k in x.name[ev]]
    kind = np.array(["set" if c == int(Cat.MEMSET) else direction(n) for c, n in zip(x.cat[ev], names, strict=True)])
    pageable = np.array([bool(PAGEABLE.search(n)) for n in names])
    pinned = np.array([bool(PINNED.search(n)) for n in names])
    size = copy_bytes(trace, ev)
    rows = []
    for k in ORDER:
        mine = kind == k
        if mine.any():
            rows.append(_row(trace, k, ev[mine], size[mine], pageable[mine], pinned[mine]))
    return Copies(rows)


def _row(
    trace: TraceColumns, kind: str, ev: np.ndarray, size: np.ndarray, pageable: np.ndarray, pinned: np.ndarray
) -> CopyRow:
    dur = trace.x.dur[ev]
    row = CopyRow(kind, len(ev), int(dur.sum()), int(size.sum()) if (size >= 0).all() else -1)
    row.pageable, row.pinned = int(pageable.sum()), int(pinned.sum())
    known = size >= 0
    small = known & (size < SMALL_BYTES)
    row.small, row.small_ns, row.pageable_ns = int(small.sum()), int(dur[small].sum()), int(dur[pageable].sum())
    if known.any():
        row.median_bytes = int(np.median(size[known]))
        timed = np.flatnonzero(known & (dur > 0))
        if len(timed):
            rate = size[timed] / dur[timed]
            k = int(np.argmin(rate))
            row.slowest, row.slowest_gbps = int(ev[timed[k]]), float(rate[k])
    return row


def copy_bytes(trace: TraceColumns, ev: np.ndarray) -> np.ndarray:
    """The `bytes` arg of each event (-1: none, or not a size), as the load read it (Events.nbytes)."""
    return trace.x.nbytes[ev]
