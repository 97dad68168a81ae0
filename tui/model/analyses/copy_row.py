"""One direction's copies (or the sets) as a row: what copies.py computes and a rank's row of a job carries
(ranks.py, which sits below copies.py in the analyses' layers, reads it from here)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CopyRow:
    """The copies of one direction (or the sets): times in ns, bytes (-1 when a copy records none)."""

    kind: str  # H2D, D2H, D2D, P2P, copy (direction not named), set
    count: int
    ns: int
    bytes: int
    pageable: int = 0  # copies the name says are from or to pageable host memory
    pinned: int = 0  # ... from or to pinned host memory
    small: int = 0  # copies under copies.SMALL_BYTES
    pageable_ns: int = 0  # the device time of the pageable ones
    small_ns: int = 0  # ... of the small ones
    median_bytes: int = -1
    slowest: int = -1  # the copy with the lowest bandwidth (an event id; -1: no bytes)
    slowest_gbps: float = 0.0

    @property
    def gbps(self) -> float | None:
        """Bytes per second of copy time, in GB/s (None without bytes or time)."""
        return self.bytes / self.ns if self.bytes >= 0 and self.ns > 0 else None
