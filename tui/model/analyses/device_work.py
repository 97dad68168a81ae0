"""What the device spent its time on: kernels, copies (by direction, with their bandwidth) and sets.

A copy's direction comes from its name (CUDA's `Memcpy HtoD (Pageable -> Device)`, HIP's
`CopyHostToDevice`): H2D, D2H, D2D, P2P (peer to peer, between devices), else "copy". Its bytes come
from its args (`bytes`), read only when the copies are what the device mostly did, so the summary of
a kernel-bound trace reads no args; a trace that records no bytes gets no bandwidth.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..cats import Cat
from ..trace import TraceColumns

COPY_SHARE = 0.5  # copies and sets take at least this share of the device's work time: it is busy copying
DIRECTIONS = [
    ("H2D", re.compile(r"HtoD|HostToDevice|H2D", re.IGNORECASE)),
    ("D2H", re.compile(r"DtoH|DeviceToHost|D2H", re.IGNORECASE)),
    ("P2P", re.compile(r"PtoP|PeerToPeer|P2P|Peer", re.IGNORECASE)),
    ("D2D", re.compile(r"DtoD|DeviceToDevice|D2D", re.IGNORECASE)),
]


@dataclass
class CopyKind:
    """Copies of one direction (or the sets): how many, their device time (us) and bytes (-1: not recorded)."""

    kind: str  # H2D, D2H, D2D, P2P, copy (direction not named), set
    count: int
    us: float
    bytes: int = -1

    @property
    def gbps(self) -> float | None:
        """Bytes moved per second of copy time, in GB/s (None without bytes or time)."""
        return self.bytes / (self.us * 1e3) if self.bytes >= 0 and self.us > 0 else None


@dataclass
class DeviceWork:
    """The device's work by kind: sums of durations (us), not unions."""

    kernels: int = 0
    kernel_us: float = 0.0
    copies: list[CopyKind] = field(default_factory=list)  # by direction, then the sets; the most time first

    @property
    def copy_us(self) -> float:
        return sum(c.us for c in self.copies)

    @property
    def copy_count(self) -> int:
        return sum(c.count for c in self.copies)

    @property
    def mostly_copies(self) -> bool:
        """Copies and sets take most of the device's work time (no kernels at all, or kernels a small part)."""
        total = self.kernel_us + self.copy_us
        return self.copy_count > 0 and self.copy_us >= COPY_SHARE * total


def direction(name: str) -> str:
    for kind, pattern in DIRECTIONS:
        if pattern.search(name):
            return kind
    return "copy"


def device_work(trace: TraceColumns) -> DeviceWork:
    """Kernels, copies by direction and sets, with the bytes of the copies when they are most of the work."""
    x = trace.x
    kern = x.cat == int(Cat.KERNEL)
    work = DeviceWork(int(kern.sum()), float(x.dur[kern].sum()) / 1000.0)
    copies = np.flatnonzero(x.cat == int(Cat.MEMCPY))
    ids, inverse = np.unique(x.name[copies], return_inverse=True)  # a name's direction, read once per name
    kinds = np.array([direction(trace.names[int(n)]) for n in ids.tolist()] or ["copy"], dtype=object)[inverse]
    for kind in [k for k, _ in DIRECTIONS] + ["copy"]:
        mine = copies[kinds == kind] if len(copies) else copies
        if len(mine):
            work.copies.append(CopyKind(kind, len(mine), float(x.dur[mine].sum()) / 1000.0))
    sets = np.flatnonzero(x.cat == int(Cat.MEMSET))
    if len(sets):
        work.copies.append(CopyKind("set", len(sets), float(x.dur[sets].sum()) / 1000.0))
    work.copies.sort(key=lambda c: -c.us)
    if work.mostly_copies:
        _read_bytes(trace, copies, kinds, work)
    return work


def _read_bytes(trace: TraceColumns, copies: np.ndarray, kinds: np.ndarray, work: DeviceWork) -> None:
    """The bytes of each direction's copies, from their args (left at -1 when any copy records none)."""
    for c in work.copies:
        if c.kind == "set":
            continue
        n = trace.x.nbytes[copies[kinds == c.kind]]
        c.bytes = -1 if (n < 0).any() else int(n.sum())
