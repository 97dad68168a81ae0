"""The loaded trace: columns, string tables, tracks, device info and a load report."""

from __future__ import annotations

import mmap
from dataclasses import dataclass, field

import numpy as np

from .tracks import Track

KNOWN_UNDRAWN = {"C"}  # counters: valid Kineto output that the timeline does not draw


@dataclass
class LoadReport:
    """What loading saw, skipped or repaired, for the one-line salvage warning."""

    events: int = 0
    skipped: int = 0
    repaired: int = 0
    dropped_tail: bool = False
    truncated: bool = False
    gz_truncated: bool = False
    inexact_chunks: int = 0
    unknown_phases: dict[str, int] = field(default_factory=dict)
    from_cache: bool = False

    @property
    def salvaged(self) -> bool:
        return bool(self.skipped or self.dropped_tail or self.truncated or self.gz_truncated)

    def warning(self) -> str | None:
        """One line saying what was skipped, or None for a clean load."""
        parts = []
        if self.truncated or self.gz_truncated:
            cut = "gzip stream" if self.gz_truncated else "JSON"
            parts.append(
                f"the {cut} is truncated; loaded the {self.events:,} events before the cut"
                + (" and dropped the partial last one" if self.dropped_tail else "")
            )
        if self.skipped:
            parts.append(f"skipped {self.skipped:,} malformed event(s)")
        if self.repaired:
            parts.append(f"repaired {self.repaired:,} event(s) with bad characters")
        odd = {ph: n for ph, n in self.unknown_phases.items() if ph not in KNOWN_UNDRAWN}
        if odd:
            listed = ", ".join(f"{n:,} '{ph}'" for ph, n in sorted(odd.items()))
            parts.append(f"skipped events of phases tracetui does not read ({listed})")
        if self.inexact_chunks:
            parts.append(f"{self.inexact_chunks} chunk(s) kept float timestamps")
        return "; ".join(parts) or None


@dataclass
class Trace:
    """A whole trace (or a folder of per-rank traces) as numpy columns."""

    path: str
    x: dict[str, np.ndarray]
    inst: dict[str, np.ndarray]
    flow: dict[str, np.ndarray]
    names: list[str]
    cat_names: list[str]
    shapes: list[str]
    tracks: list[Track]
    chunks: np.ndarray  # (n, 4): start, end, first event, source index
    sources: list[str]
    devices: list[dict] = field(default_factory=list)
    ranks: list[dict] = field(default_factory=list)
    flags: dict[str, int] = field(default_factory=dict)
    report: LoadReport = field(default_factory=LoadReport)
    buffers: dict[int, bytes | mmap.mmap] = field(default_factory=dict, repr=False)  # unzipped sources, no cache

    @property
    def n(self) -> int:
        return len(self.x["ts"])

    def name_of(self, i: int) -> str:
        return self.names[int(self.x["name"][i])]

    def track_of(self, i: int) -> Track:
        return self.tracks[int(self.x["track"][i])]
