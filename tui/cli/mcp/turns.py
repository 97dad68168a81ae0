"""Whose turn: a fixed number of calls run at once in worker threads, and of those waiting the quickest goes next.

A call is expected to take as long as the same tool took on the same trace before (an average of its last
runs; a call never seen is expected to be quick, so it is measured early). When a worker frees, the waiting
call with the least expected time, less the time it has waited, takes it: short calls pass long ones, and a
long call that has waited as long as it is expected to run goes before any newcomer, so none waits forever.
Everything here runs on the event loop: the waiting holds no thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")
KEEP_OLD = 0.5  # of the expected time, when a new run is measured (the rest is the new run's)


@dataclass(eq=False)
class _Waiting:
    expected_s: float
    since: float
    turn: Any  # an anyio.Event, set when the call may run
    given: bool = field(default=False)


class Turns:
    """At most `workers` calls run at once; the others wait, the quickest first (see the module's docstring)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.free = workers
        self.waiting: list[_Waiting] = []
        self.took: dict[Hashable, float] = {}  # what a kind of call is expected to take, in seconds
        self._limiter: Any = None  # the thread limiter: as many threads as turns, so it never holds a call back

    async def run(self, kind: Hashable, fn: Callable[[], T]) -> T:
        """Run fn in a worker thread once it is this call's turn; kind names what it is (tool and trace)."""
        import anyio

        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.workers)
        await self._wait(kind)
        began = time.monotonic()
        try:
            return await anyio.to_thread.run_sync(fn, limiter=self._limiter)
        finally:
            self._measured(kind, time.monotonic() - began)
            self._next()

    def expected(self, kind: Hashable) -> float:
        return self.took.get(kind, 0.0)

    async def _wait(self, kind: Hashable) -> None:
        import anyio

        if self.free > 0 and not self.waiting:
            self.free -= 1
            return
        me = _Waiting(self.expected(kind), time.monotonic(), anyio.Event())
        self.waiting.append(me)
        try:
            await me.turn.wait()
        except BaseException:  # cancelled while it waited: out of the queue, and a turn given meanwhile passed on
            if me.given:
                self._next()
            else:
                self.waiting.remove(me)
            raise

    def _next(self) -> None:
        """A turn ended: give it to the waiting call that should go first, else keep it free."""
        if not self.waiting:
            self.free += 1
            return
        now = time.monotonic()
        first = min(self.waiting, key=lambda w: w.expected_s - (now - w.since))
        self.waiting.remove(first)
        first.given = True
        first.turn.set()

    def _measured(self, kind: Hashable, seconds: float) -> None:
        old = self.took.get(kind)
        self.took[kind] = seconds if old is None else KEEP_OLD * old + (1 - KEEP_OLD) * seconds
