"""Which runtime and driver calls are launches: the ones that put work (a kernel, a copy, a set) on the device.

A launch is a runtime or driver call linked to at least one kernel, memcpy or memset record (a graph
launch: to what it replayed). Every other runtime call (a cudaMemsetAsync that set nothing, a
synchronize, an event record, an attribute query) is reported beside the launches, by name and CPU
time, and never counted as one. A trace whose device records were lost has no links: there, the calls
whose launch-to-device (ac2g) flow reaches a device lane are the launches, or, without flows, the calls
named as launches (Launch, Memcpy, Memset).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..cats import BUSY_CATS, Cat, of_cats
from ..trace import TraceColumns, keyed, rank_of_events, ranks_at
from .graphs.replay import GRAPH_LAUNCH, graph_owner, name_mask, synthetic_mask

LAUNCH_NAME = re.compile(r"Launch|Memcpy|Memset", re.IGNORECASE)


@dataclass
class RuntimeCalls:
    """Runtime calls of one name that launched nothing: how many, and their CPU time (us)."""

    name: str
    count: int
    cpu_us: float


def device_callers(trace: TraceColumns, launcher: np.ndarray, owner: np.ndarray | None = None) -> np.ndarray:
    """Per event: the CPU call that put it on the device (-1: none), for kernels, copies and sets only; a replayed
    kernel's call is its graph launch (not the copy of the capture's stack it is credited to)."""
    owner = graph_owner(trace) if owner is None else owner
    busy = of_cats(trace.x.cat, BUSY_CATS)
    return np.where(busy, np.where(owner >= 0, owner, launcher), -1)


def launch_mask(trace: TraceColumns, launcher: np.ndarray, owner: np.ndarray | None = None) -> np.ndarray:
    """Runtime and driver calls that put work on the device (see the module docstring)."""
    out = np.zeros(trace.n, bool)
    callers = device_callers(trace, launcher, owner)
    out[callers[callers >= 0]] = True
    return out & (trace.x.cat == int(Cat.RUNTIME)) & ~synthetic_mask(trace)


def named_launch_mask(trace: TraceColumns) -> np.ndarray:
    """Runtime calls named as launches (kernel launches, async copies and sets), whatever they put on the device."""
    named = np.array([bool(LAUNCH_NAME.search(n)) for n in trace.names] or [False])
    return (trace.x.cat == int(Cat.RUNTIME)) & named[trace.x.name] & ~synthetic_mask(trace)


def flow_launch_mask(trace: TraceColumns) -> np.ndarray:
    """Runtime calls whose launch-to-device (ac2g) flow ends on another lane: what they launched was recorded
    as an arrow, even where the device record itself is missing."""
    f, x = trace.flow, trace.x
    out = np.zeros(trace.n, bool)
    ends = np.flatnonzero(f.ac2g & ~f.start) if len(f.ts) else np.empty(0, np.int64)
    calls = np.flatnonzero((x.cat == int(Cat.RUNTIME)) & (x.corr >= 0))
    if not len(ends) or not len(calls):
        return out
    franks = np.array([t.rank for t in trace.tracks], np.int64)[f.track[ends]]
    end_key = keyed(franks, f.fid[ends])
    order = np.argsort(end_key, kind="stable")
    end_key, end_track = end_key[order], f.track[ends][order]
    call_key = keyed(ranks_at(rank_of_events(trace), calls), x.corr[calls])
    lo, hi = np.searchsorted(end_key, call_key, "left"), np.searchsorted(end_key, call_key, "right")
    for k in np.flatnonzero(hi > lo).tolist():  # a call's flow ends on its own lane: not at the device
        out[calls[k]] = bool((end_track[lo[k] : hi[k]] != x.track[calls[k]]).any())
    return out & ~synthetic_mask(trace)


def other_runtime(trace: TraceColumns, launch: np.ndarray) -> list[RuntimeCalls]:
    """The runtime and driver calls that launched nothing, per name, the most CPU time first."""
    x = trace.x
    other = np.flatnonzero((x.cat == int(Cat.RUNTIME)) & ~launch & ~synthetic_mask(trace))
    if not len(other):
        return []
    names, inverse = np.unique(x.name[other], return_inverse=True)
    cpu = np.bincount(inverse, weights=x.dur[other]) / 1000.0
    counts = np.bincount(inverse)
    order = np.lexsort((names, -cpu))
    return [RuntimeCalls(trace.names[int(names[k])], int(counts[k]), float(cpu[k])) for k in order.tolist()]


# A launch call is an outlier when it takes this many times the median launch, and at least OUTLIER_MIN_US:
# lazy module loading on a kernel's first use, or a launch blocked behind a full queue.
OUTLIER_FACTOR = 50.0
OUTLIER_MIN_US = 1000.0


def slow_launches(trace: TraceColumns, calls: np.ndarray) -> np.ndarray:
    """Per launch call (the indices of all the trace's): is it an outlier, far slower than their median? A graph
    launch is one call for all it replays: never an outlier."""
    if not len(calls):
        return np.zeros(0, bool)
    dur = trace.x.dur[calls] / 1000.0
    out = dur >= max(OUTLIER_FACTOR * float(np.median(dur)), OUTLIER_MIN_US)
    return out & ~name_mask(trace, GRAPH_LAUNCH)[calls]


def launch_calls(trace: TraceColumns, launcher: np.ndarray, owner: np.ndarray | None = None) -> np.ndarray:
    """The launches of a trace: the calls linked to device work; with no device record at all (lost), the calls
    whose flow reaches the device, else those named as launches."""
    if of_cats(trace.x.cat, BUSY_CATS).any():
        return launch_mask(trace, launcher, owner)
    by_flow = flow_launch_mask(trace)
    return by_flow if by_flow.any() else named_launch_mask(trace)


BLOCKING_COPY = re.compile(r"^(?:cuda|hip|cu)Memcpy(?!Peer)")


def blocking_copies(trace: TraceColumns, launcher: np.ndarray, launch: np.ndarray) -> np.ndarray:
    """The launches that are copies the CPU waited for: a copy call whose copy ended inside the call (cudaMemcpy,
    or cudaMemcpyAsync to or from pageable host memory). Its time is a wait on the device, not launch overhead."""
    x = trace.x
    copies = np.flatnonzero(of_cats(x.cat, (Cat.MEMCPY,)) & (launcher >= 0))
    out = np.zeros(trace.n, bool)
    if not len(copies):
        return out
    call = launcher[copies]
    inside = (x.ts[copies] + x.dur[copies] <= x.ts[call] + x.dur[call]) & (x.ts[copies] + x.dur[copies] > x.ts[call])
    named = np.array([bool(BLOCKING_COPY.search(n)) for n in trace.names] or [False])
    out[call[inside & named[x.name[call]]]] = True
    return out & launch
