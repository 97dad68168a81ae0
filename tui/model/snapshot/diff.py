"""Two snapshots compared: per device what grew, by frame, at the peak and at the end.

Frames are matched by function, not by line (`forward (model.py)`): a code change between the two runs
moves lines, and an allocation that moved is the same one. Rows are ordered by the size of the change.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .columns import Snapshot
from .frames import Namer
from .history import ALIVE
from .report import DeviceReport, device_memory, device_report, label_of


@dataclass
class FrameChange:
    frame: str
    a_bytes: int
    b_bytes: int
    a_count: int
    b_count: int

    @property
    def delta(self) -> int:
        return self.b_bytes - self.a_bytes


@dataclass
class DeviceDiff:
    name: str
    a: DeviceReport | None
    b: DeviceReport | None
    at_peak: list[FrameChange]  # live at each one's peak (at its end without history)
    at_end: list[FrameChange]  # live when each snapshot was taken


@dataclass
class SnapshotDiff:
    a_path: str
    b_path: str
    devices: list[DeviceDiff]


def diff(a: Snapshot, b: Snapshot) -> SnapshotDiff:
    """What grew from snapshot a to snapshot b, per device and frame."""
    sides = [_side(a), _side(b)]
    devices = []
    for d in sorted(set(sides[0]) | set(sides[1])):
        ra, rb = (s.get(d, (None, {}, {}))[0] for s in sides)
        peak = _changes(*(s.get(d, (None, {}, {}))[1] for s in sides))
        end = _changes(*(s.get(d, (None, {}, {}))[2] for s in sides))
        devices.append(DeviceDiff(f"cuda:{d}", ra, rb, peak, end))
    return SnapshotDiff(a.path, b.path, devices)


Grouped = dict[str, tuple[int, int]]  # frame -> (bytes, count)


def _side(snap: Snapshot) -> dict[int, tuple[DeviceReport, Grouped, Grouped]]:
    """Per device: its report, and its live allocations by function at the peak and at the end."""
    namer, by_function = Namer(snap.stacks), Namer(snap.stacks, lines_too=False)
    out = {}
    for d in snap.devices:
        mem = device_memory(snap, d)
        report = device_report(snap, mem, namer)
        a = mem.allocs
        end = np.flatnonzero(a.end_ns == ALIVE)
        peak = np.flatnonzero(a.alive_at(report.peak.entry)) if report.peak is not None else end
        out[d] = (report, _group(a, peak, by_function), _group(a, end, by_function))
    return out


def _group(a, rows: np.ndarray, namer: Namer) -> Grouped:
    out: dict[str, list[int]] = {}
    for r in rows.tolist():
        entry = out.setdefault(label_of(a, r, namer), [0, 0])
        entry[0] += int(a.size[r])
        entry[1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


def _changes(a: Grouped, b: Grouped) -> list[FrameChange]:
    rows = [FrameChange(f, *_pair(a.get(f), b.get(f))) for f in set(a) | set(b)]
    return sorted(rows, key=lambda r: (-abs(r.delta), r.frame))


def _pair(a: tuple[int, int] | None, b: tuple[int, int] | None) -> tuple[int, int, int, int]:
    a, b = a or (0, 0), b or (0, 0)
    return a[0], b[0], a[1], b[1]
