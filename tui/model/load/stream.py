"""Lanes first: while a file decodes, traces of the events decoded so far, for a viewer to paint before the rest.

A caller that wants them wraps its load in `partial_traces(callback)`; every load of one file under it
(through any front door: load_trace, the CLI's, the app's) then calls callback(trace, fraction) from
the loading thread with a TraceColumns of the parts decoded so far, in file order, at most every `every_s`
seconds and never once the whole trace is ready. Each partial TraceColumns stands on its own (its names,
tracks, chunk rows and args are all its own), and the final TraceColumns does not depend on whether any was
made. A cached trace loads at once and makes none.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..trace import TraceColumns

Callback = Callable[["TraceColumns", float], None]


@dataclass
class Watcher:
    """Who wants partial traces, and how often."""

    callback: Callback
    every_s: float = 1.0
    first_s: float = 0.3  # the first one as soon as this much decoding has been done
    started: float = field(default_factory=time.perf_counter)
    last: float = 0.0
    pace: float = 2.0  # the next one waits at least this many times as long as the last one took
    cost: float = 0.0  # how long the last one took, made and handed over (the decode waited that long)

    def due(self) -> bool:
        now = time.perf_counter()
        gap = max(self.every_s, self.pace * self.cost)
        if now - self.started < self.first_s or (self.last and now - self.last < gap):
            return False
        self.last = now
        return True

    def hand(self, make: Callable[[], TraceColumns | None], fraction: float) -> None:
        """Make a partial trace and hand it over (nothing when make() has no events), timing both."""
        begun = time.perf_counter()
        trace = make()
        if trace is not None:
            self.callback(trace, fraction)
        self.cost = time.perf_counter() - begun
        self.last = time.perf_counter()


_WATCHER: ContextVar[Watcher | None] = ContextVar("tracetui_partial_traces", default=None)


@contextmanager
def partial_traces(
    callback: Callback, every_s: float = 1.0, first_s: float = 0.3, pace: float = 2.0
) -> Iterator[Watcher]:
    """Within this block, file loads in this thread hand callback(trace, fraction) the events decoded so far:
    the first after first_s seconds, then at most every every_s seconds and never sooner than `pace` times
    what the last one cost (the decode waits while one is made), so they take at most about 1 / (pace + 1)
    of the load."""
    token = _WATCHER.set(Watcher(callback, every_s, first_s, pace=pace))
    try:
        yield _WATCHER.get()  # type: ignore[misc]
    finally:
        _WATCHER.reset(token)


def watcher() -> Watcher | None:
    """The watcher of a load starting now, if anyone asked for partial traces (its clock starts with the load)."""
    watching = _WATCHER.get()
    if watching is not None:
        watching.started, watching.last, watching.cost = time.perf_counter(), 0.0, 0.0
    return watching
