"""When Python's cycle collector may walk the objects of a loaded trace.

A full (generation 2) collection visits every tracked object. With a big trace and its results alive,
that held the UI for 30-55 ms on whichever key happened to trigger it (`benchmarks/bench_views.py`).
Once the background analyses are done, what is alive stays alive until the app ends, so it is moved
out of the collector's sight; objects made later are collected as usual.
"""

from __future__ import annotations

import gc


def keep_long_lived() -> None:
    """Collect what is garbage now, then freeze the rest (the trace, its results, the widgets)."""
    gc.collect()
    gc.freeze()


def release() -> None:
    """The app is ending: hand what was frozen back to the collector (a test run opens many apps)."""
    gc.unfreeze()
