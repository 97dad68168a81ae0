"""Explain rules for the launch queue behind the critical path: a stream the CPU cannot keep fed (its queue always
empty), or one whose full queue the CPU waits on (critical/queue.py measures both)."""

from __future__ import annotations

import numpy as np

from ...analysis import Analysis
from ..critical.queue import StreamQueue, stream_queues
from ..kernel_roles import role
from ..summary import Summary
from .findings import Figure, Finding, Quantity, Rule, us
from .uses import next_figures, uses_of

MAIN_SHARE = 0.2  # a stream named holds at least this share of the launched device time (a side stream says little)


def launch_queue(a: Analysis, s: Summary) -> list[Finding]:
    """Per stream with enough launched work: its queue always empty (starved) or always full, with its figures."""
    kept = getattr(a, "launch_queues", None)  # Results keeps them (the kernels view's too); a bare Analysis does not
    queues = kept.streams if kept is not None else stream_queues(a.trace, a.links.launcher)
    busy = _busy_per_track(a, [q.track for q in queues])
    total = sum(busy.values()) or 1
    out = []
    for q in queues:
        if q.verdict and busy[q.track] / total >= MAIN_SHARE and not _collective(a, q.track):
            out.append(_finding(a, q, busy[q.track] / total))
    return out


def _busy_per_track(a: Analysis, tracks: list[int]) -> dict[int, int]:
    """The device time launched onto each stream (ns)."""
    x = a.trace.x
    launched = a.links.launcher >= 0
    return {t: int(x.dur[launched & (x.track == t)].sum()) for t in tracks}


def _collective(a: Analysis, track: int) -> bool:
    """A stream whose device time is mostly collectives: it waits for the other ranks, not for launches."""
    x = a.trace.x
    mine = np.flatnonzero((x.track == track) & (a.links.launcher >= 0))
    names, inv = np.unique(x.name[mine], return_inverse=True)
    coll = np.array([role(a.trace.names[int(n)]) == "collective" for n in names] or [False], bool)
    return bool(x.dur[mine][coll[inv]].sum() * 2 > x.dur[mine].sum()) if len(mine) else False


def _finding(a: Analysis, q: StreamQueue, share: float) -> Finding:
    figures: dict[str, Figure] = {
        "stream": a.trace.tracks[q.track].name,
        "activities": q.activities,
        "share": Quantity(share, "fraction"),
        "max_length": q.max_length,
        "mean_length": Quantity(q.mean_length, ""),
        "idle": Quantity(q.idle_launches, "fraction"),
        "full": Quantity(q.full_share, "fraction"),
        "median_latency": us(q.median_latency_ns / 1000),
        "p95_latency": us(q.p95_latency_ns / 1000),
    }
    if q.verdict == "empty":
        title = f"The CPU cannot keep {figures['stream']} fed"
        u = uses_of(a)  # what comes next, from what the run already uses
        return Finding("launch-queue", title, figures | next_figures(u), [], ["queue-empty", f"next/{u.cpu_next}"])
    title = f"The CPU waits on a full launch queue ({figures['stream']})"
    marked = np.asarray(q.outliers, np.int64).tolist()
    return Finding("launch-queue", title, figures, marked, ["queue-full"])


QUEUE_RULES = [Rule("launch-queue", launch_queue)]
