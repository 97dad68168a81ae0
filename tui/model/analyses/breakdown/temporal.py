"""The temporal breakdown: a window of one device (or one stream of it) cut by what ran at each moment.

Every nanosecond of the window is counted once, under the combination of classes running then: compute alone,
communication alone, copies alone, an overlap of two or three of them (named: compute+communication, ...), or
idle (nothing ran). So the parts add up to the window. HTA's get_temporal_breakdown reports compute time (every
moment a compute kernel ran, overlaps included), idle time, and non-compute time (the rest); the same three
figures are the compute_total, idle and non_compute properties here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...sets import distinct
from .activity import CLASSES, COMPUTE, Activities, Scope

MASKS = 1 << len(CLASSES)


@dataclass
class Breakdown:
    """One device's (lane "") or one stream's window, in ns per combination of classes (bit k: CLASSES[k]; [0]: idle)."""

    rank: int
    device: str
    lane: str
    start_ns: int  # the trace's clock
    end_ns: int
    by_mask: list[int]

    @property
    def span_ns(self) -> int:
        return self.end_ns - self.start_ns

    @property
    def idle_ns(self) -> int:
        return self.by_mask[0]

    @property
    def busy_ns(self) -> int:
        return self.span_ns - self.idle_ns

    def alone(self, cls: str) -> int:
        """The time this class ran with no other class running."""
        return self.by_mask[1 << CLASSES.index(cls)]

    def total(self, cls: str) -> int:
        """The time this class ran, overlaps included (the union of its activities)."""
        bit = 1 << CLASSES.index(cls)
        return sum(ns for mask, ns in enumerate(self.by_mask) if mask & bit)

    @property
    def overlaps(self) -> dict[str, int]:
        """Each combination of two classes or more that ran at once ("compute+communication"), and for how long."""
        return {name(mask): ns for mask, ns in enumerate(self.by_mask) if ns and mask.bit_count() > 1}

    @property
    def overlap_ns(self) -> int:
        return sum(self.overlaps.values())

    @property
    def non_compute_ns(self) -> int:
        """HTA's non-compute time: busy, and no compute kernel running."""
        return self.busy_ns - self.total(CLASSES[COMPUTE])


def name(mask: int) -> str:
    """A combination of classes: "compute+copies"; "idle" for none."""
    return "+".join(c for k, c in enumerate(CLASSES) if mask >> k & 1) or "idle"


def cut(ts: np.ndarray, end: np.ndarray, cls: np.ndarray, start_ns: int, end_ns: int) -> list[int]:
    """ns of [start_ns, end_ns] per combination of the classes running (activities clipped to the window)."""
    keep = (end > start_ns) & (ts < end_ns)
    s, e, c = np.clip(ts[keep], start_ns, end_ns), np.clip(end[keep], start_ns, end_ns), cls[keep]
    n = len(s)
    t = np.concatenate([s, e, [start_ns, end_ns]]).astype(np.int64)
    delta = np.zeros((len(t), len(CLASSES)), np.int64)
    delta[np.arange(n), c] = 1
    delta[n + np.arange(n), c] = -1
    order = np.argsort(t, kind="stable")
    running = np.cumsum(delta[order], axis=0) > 0
    mask = (running * (1 << np.arange(len(CLASSES)))).sum(axis=1)
    held = np.diff(t[order])
    out = np.zeros(MASKS, np.int64)
    np.add.at(out, mask[:-1], held)
    return out.tolist()


def device_rows(acts: Activities, scopes: list[Scope]) -> list[Breakdown]:
    """One row per device: all its streams together in its window."""
    out = []
    for sc in scopes:
        mine = acts.device == sc.device
        rank, device = acts.devices[sc.device]
        by = cut(acts.ts[mine], acts.end[mine], acts.cls[mine], sc.start_ns, sc.end_ns)
        out.append(Breakdown(rank, device, "", sc.start_ns, sc.end_ns, by))
    return out


def stream_rows(acts: Activities, scopes: list[Scope], lanes: list[str]) -> list[Breakdown]:
    """One row per stream with work in its device's window (the device's window, so the rows of a device compare)."""
    out = []
    for sc in scopes:
        rank, device = acts.devices[sc.device]
        on = (acts.device == sc.device) & (acts.end > sc.start_ns) & (acts.ts < sc.end_ns)
        for track in distinct(acts.track[on]).tolist():
            mine = on & (acts.track == track)
            by = cut(acts.ts[mine], acts.end[mine], acts.cls[mine], sc.start_ns, sc.end_ns)
            out.append(Breakdown(rank, device, lanes[track], sc.start_ns, sc.end_ns, by))
    return out
