"""The critical path: the chain of CPU work, launches, kernels and waits that sets a window's length, and what-if.

window.py picks the window (a step, an annotation's instance, the trace); lanes.py, sync.py and wake.py
build the graph's edges (graph.py); path.py walks the longest path; solve.py re-solves it with other
weights for whatif.py; queue.py measures the launch queue behind it. Pure numpy, no UI.
"""

from __future__ import annotations

from .classes import CLASSES, HTA_CLASS, Bound
from .path import CriticalPath, PathItem, critical_path
from .whatif import Spec, WhatIf, WhatIfError, parse_spec, what_if, what_if_for_event, window_at, window_of
from .window import Window, WindowError, find_window, span_window

__all__ = [
    "CLASSES",
    "HTA_CLASS",
    "Bound",
    "CriticalPath",
    "PathItem",
    "Spec",
    "WhatIf",
    "WhatIfError",
    "Window",
    "WindowError",
    "critical_path",
    "find_window",
    "parse_spec",
    "span_window",
    "what_if",
    "what_if_for_event",
    "window_at",
    "window_of",
]
