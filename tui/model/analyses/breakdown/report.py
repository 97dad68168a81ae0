"""Both breakdowns of one window (the whole trace, or one step on every rank): per device, per stream, idle causes."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...trace import TraceColumns
from ..launches import device_callers
from .activity import activities, scopes
from .idle import StreamIdle, stream_idle
from .temporal import Breakdown, device_rows, stream_rows


@dataclass
class BreakdownReport:
    """The temporal breakdown per device and per stream, and each stream's idle time by cause, in one window."""

    window: str  # "the whole trace", or ProfilerStep#N
    devices: list[Breakdown] = field(default_factory=list)
    streams: list[Breakdown] = field(default_factory=list)
    idle: list[StreamIdle] = field(default_factory=list)
    left_out: list[int] = field(default_factory=list)  # ranks without the step asked for


def breakdown(trace: TraceColumns, launcher: np.ndarray, owner: np.ndarray, step: int | None = None) -> BreakdownReport:
    """The breakdowns of the whole trace (each device's span), or of ProfilerStep#step on every rank that has it
    (WindowMissing: on none). A trace without device work has no rows."""
    acts = activities(trace, launcher, owner)
    if not len(acts.ev):
        if step is not None:
            scopes(trace, acts, device_callers(trace, launcher, owner), step)  # a step that is not there still says so
        return BreakdownReport("the whole trace" if step is None else f"ProfilerStep#{step}")
    name, found, left_out = scopes(trace, acts, device_callers(trace, launcher, owner), step)
    lanes = [t.name for t in trace.tracks]
    return BreakdownReport(
        name,
        device_rows(acts, found),
        stream_rows(acts, found, lanes),
        stream_idle(acts, found, lanes),
        left_out,
    )
