"""Waits the trace does not name: CPU time inside an op that ends when the device drains what was queued before it.

A spin on host-mapped memory (an all-to-all dispatch polling a flag the GPU writes), a `.item()` inside a library's
C++ code, a lock handed over when a kernel finishes: the CPU sits in an op, between its ops, until the GPU catches
up, and no synchronize call is recorded. A stretch of CPU time owned by an op, annotation or Python frame (a
runtime call's own waits are sync.py's) is such a wait when
- it lasts at least HIDDEN_MIN_NS,
- a device activity launched from its thread before the stretch began ends at most HIDDEN_LAG_NS before the
  stretch ends (the CPU notices the GPU's progress within a poll), and
- nothing launched before the stretch's end was queued behind that activity on its stream (the stream drained:
  the CPU waited for it, rather than stopping by chance while the GPU still worked through its queue).
Each such stretch gets a wait edge from the activity's end to the stretch's end, as a synchronize does: the path
follows the device work it waited for, and the CPU's own time after the GPU finished is class sync.
"""

from __future__ import annotations

import numpy as np

from ...cats import Cat
from .classes import Bound, Edge, Kind
from .edges import EdgeList, edges
from .sync import Scope

HIDDEN_MIN_NS = 100_000  # a stretch shorter than this is not worth calling a wait (100 us)
HIDDEN_LAG_NS = 20_000  # the CPU resumes at most this long after the device work it waited for ended (20 us)
_OWNERS = (int(Cat.CPU_OP), int(Cat.USER_ANNOTATION), int(Cat.PYTHON))


def hidden_waits(s: Scope) -> EdgeList:
    """Wait edges into the CPU stretches that end when the device drained what their thread queued before them."""
    src, dst, own = _found(s) if len(s.dev.ev) else ([], [], [])
    if src:
        s.caveats.append(("hidden_waits", len(src)))
    return edges(
        np.array(src, np.int64), np.array(dst, np.int64), Edge.SYNC, Bound.SYNC, Kind.SYNC, np.array(own, np.int64)
    )


def _found(s: Scope) -> tuple[list[int], list[int], list[int]]:
    x, chain, ts = s.trace.x, s.cpu.chain, s.cpu.ts
    owner = chain.owner
    safe = np.maximum(owner, 0)
    long = (owner >= 0) & np.isin(x.cat[safe], _OWNERS) & (ts[chain.dst] - ts[chain.src] >= HIDDEN_MIN_NS)
    if not long.any():
        return [], [], []
    queue = _Queue(s)
    src, dst, own = [], [], []
    for k in np.flatnonzero(long).tolist():
        a, b = int(ts[chain.src[k]]), int(ts[chain.dst[k]])
        g = queue.drained_at(b, a, int(x.track[owner[k]]))
        if g >= 0:
            src.append(int(s.dev.end_node[g]))
            dst.append(int(chain.dst[k]))
            own.append(int(owner[k]))
    return src, dst, own


class _Queue:
    """The window's device activities with their launch thread, by end and per stream by start."""

    def __init__(self, s: Scope) -> None:
        x = s.trace.x
        self.end, self.ts, self.lts = s.dev_end, s.dev_ts, s.launch_ts
        self.track = x.track[s.dev.ev]
        self.thread = np.where(s.launcher >= 0, x.track[np.maximum(s.launcher, 0)], -1)
        self.by_end = np.argsort(self.end, kind="stable")
        self.ends = self.end[self.by_end]

    def drained_at(self, t: int, before: int, thread: int) -> int:
        """The activity the thread launched before `before` that ended last in (t - lag, t], if its stream then
        had nothing queued behind it that was launched before t (-1: none)."""
        lo = int(np.searchsorted(self.ends, t - HIDDEN_LAG_NS, "right"))
        hi = int(np.searchsorted(self.ends, t, "right"))
        for p in range(hi - 1, lo - 1, -1):
            g = int(self.by_end[p])
            if self.thread[g] != thread or self.lts[g] >= before:
                continue
            behind = (self.track == self.track[g]) & (self.ts > self.ts[g]) & (self.lts < t)
            return -1 if behind.any() else g
        return -1
