"""Where the device's time goes, as Holistic Trace Analysis breaks it down: the temporal breakdown (compute,
communication, copies, their overlaps and idle time, per device or per stream) and the idle-time breakdown per
stream (waiting on the host, on another stream, between kernels, other). activity.py says what each device
activity is and which windows are cut; temporal.py and idle.py cut them; report.py holds both for one window.
"""

from __future__ import annotations

from .activity import CLASSES, WindowMissing
from .idle import CAUSES, KERNEL_GAP_NS, STREAM_WAKE_NS, StreamIdle
from .report import BreakdownReport, breakdown
from .temporal import Breakdown

__all__ = [
    "CAUSES",
    "CLASSES",
    "KERNEL_GAP_NS",
    "STREAM_WAKE_NS",
    "Breakdown",
    "BreakdownReport",
    "StreamIdle",
    "WindowMissing",
    "breakdown",
]
