"""Gaps on a stream while its device worked on another: the path's stretches of waiting on one stream, cut by what
the device ran then.

A stream gap or a wait on another stream binds where a stream sat idle before its next activity; when another
stream of the same device ran through that time (a side stream's GEMM the main stream waited for, a collective the
copies after it waited for, with no event recorded to say so), the GPU was not idle: that part of the stretch is the
other stream's activity, with its class (compute, copy, collective), and only the time where no stream of the
device ran stays a gap between kernels. So the path's gaps are the device's idle time, as the breakdown counts it.

Likewise a synchronize returns when the device work it waited for ends: where the work the graph found for it
ended early (another device's, work launched with no call recorded, or a kernel whose clock ends it a few
microseconds after the call returned) and a device of the rank still ran until the call returned, that time is
the device's work; only the microseconds after the device went quiet are the CPU coming back from the wait.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...cats import BUSY_CATS, of_cats
from ...sets import distinct
from ...trace import TraceColumns
from .classes import CLASS_NAMES, KIND_NAMES, Bound, Kind, device_bound, device_kind

GAP = CLASS_NAMES[Bound.KERNEL_KERNEL_OVERHEAD]
WAITED = KIND_NAMES[Kind.SYNC]  # a blocking call's stretch (its wait's tail, or all of it where no wait was found)
SKEW_NS = 20_000  # the device's clock may end the work a sync waited for this long after the call returned (20 us)
ANY = "*"  # every device of the rank: a synchronize waits for whichever device it names, and the trace may not say


class _Device:
    """One device's activities by start, with the one running longest among those started so far."""

    def __init__(self, ev: np.ndarray, ts: np.ndarray, end: np.ndarray) -> None:
        order = np.argsort(ts, kind="stable")
        self.ev, self.ts, end = ev[order], ts[order], end[order]
        self.reach = np.maximum.accumulate(end) if len(end) else end  # the latest end of those started so far
        at = np.where(end == self.reach, np.arange(len(end)), 0)
        self.who = np.maximum.accumulate(at) if len(at) else at  # which one reaches it

    def running(self, t: int) -> tuple[int, int]:
        """At t: the activity running (the one that runs on longest) and until when; else (-1, the next start)."""
        p = int(np.searchsorted(self.ts, t, "right"))
        if p > 0 and self.reach[p - 1] > t:
            return int(self.ev[self.who[p - 1]]), int(self.reach[p - 1])
        return -1, int(self.ts[p]) if p < len(self.ts) else np.iinfo(np.int64).max


Moved = tuple[np.ndarray, np.ndarray, np.ndarray]  # device activities and their start and end (ns, raw clock)


def split_gaps(trace: TraceColumns, rank: int, items: list, moved: Moved | None = None) -> list:
    """The path's items, each gap cut where another stream of its device ran, and each return from a wait on the
    device where any device of the rank still ran: those pieces become that activity (its name, kind and class),
    the rest stay what they were (times in ns from the trace's origin). moved: the device activities at the times
    a what-if gives them (None: as recorded)."""
    if not any((it.bound_by == GAP or it.kind == WAITED) and it.event >= 0 for it in items):
        return items
    devices = _devices(trace, rank, moved)
    out: list = []
    for it in items:
        device = None
        if it.bound_by == GAP and it.event >= 0:
            device = devices.get(str(trace.track_of(it.event).pid))
        elif it.kind == WAITED and it.event >= 0 and ANY in devices and _drained(trace, devices[ANY], it):
            device = devices[ANY]
        pieces = _pieces(trace, device, it) if device is not None else [it]
        for piece in pieces:
            last = out[-1] if out else None
            if last is not None and (last.event, last.bound_by, last.kind) == (piece.event, piece.bound_by, piece.kind):
                out[-1] = replace(last, dur_ns=last.dur_ns + piece.dur_ns)
            else:
                out.append(piece)
    return out


def _drained(trace: TraceColumns, device: _Device, it) -> bool:
    """Did the device go quiet as the blocking call returned (the work running then ended by SKEW_NS after it)?
    A call that returned while a kernel ran on did not wait for that kernel."""
    end = it.start_ns + trace.origin + it.dur_ns
    ev, until = device.running(end - 1)
    return ev < 0 or until <= end + SKEW_NS


def _devices(trace: TraceColumns, rank: int, moved: Moved | None) -> dict[str, _Device]:
    x = trace.x
    if moved is None:
        busy = np.flatnonzero(of_cats(x.cat, BUSY_CATS))
        moved = (busy, x.ts[busy], x.ts[busy] + x.dur[busy])
    ev, ts, end = moved
    pid = np.array([str(t.pid) if t.kind == "gpu" and t.rank == rank else "" for t in trace.tracks] or [""])
    of = pid[x.track[ev]]
    out = {p: _Device(ev[of == p], ts[of == p], end[of == p]) for p in distinct(of).tolist() if p}
    if out:
        out[ANY] = _Device(ev[of != ""], ts[of != ""], end[of != ""])
    return out


def _pieces(trace: TraceColumns, device: _Device, it) -> list:
    t, end = it.start_ns + trace.origin, it.start_ns + trace.origin + it.dur_ns
    out = []
    while t < end:
        ev, until = device.running(t)
        stop = min(until, end)
        if ev < 0:
            out.append(replace(it, start_ns=t - trace.origin, dur_ns=stop - t))
        else:
            cat, name = int(trace.x.cat[ev]), trace.name_of(ev)
            bound, kind = CLASS_NAMES[device_bound(name, cat)], KIND_NAMES[device_kind(cat)]
            out.append(
                replace(
                    it,
                    event=ev,
                    name=name,
                    kind=kind,
                    bound_by=bound,
                    start_ns=t - trace.origin,
                    dur_ns=stop - t,
                    waits_for="",
                )
            )
        t = stop
    return out
