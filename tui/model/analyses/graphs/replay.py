"""CUDA/HIP graphs: each graph launch owns the device activities that share its correlation id."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ...cats import BUSY_CATS, Cat, of_cats
from ...trace import TraceColumns, keyed, rank_of_events, ranks_at

GRAPH_LAUNCH = re.compile(r"^(?:cuda|hip|cu)GraphLaunch(?:Ex)?(?:_v\d+)?(?:_ptsz|_spt)?$")
BEGIN_CAPTURE = re.compile(r"^(?:cuda|hip|cu)StreamBeginCapture")
END_CAPTURE = re.compile(r"^(?:cuda|hip|cu)StreamEndCapture")
EAGER_LAUNCH = re.compile(r"Launch|Memcpy|Memset", re.IGNORECASE)
TOP_KERNELS = 5


@dataclass
class Credit:
    """What crediting a capture to the replay did (capture.py): matched kernels stay linked to their capture."""

    source: str  # the capture's path ("" for a capture recorded in the replay itself)
    matched: int = 0  # replayed device activities credited to the ops that captured them
    replayed: int = 0  # replayed device activities in all
    launches_matched: int = 0  # graph launches whose replay matched a capture
    launches: int = 0
    synthetic_from: int = 0  # events from this index on are copies of the capture's stacks (no CPU work of their own)


@dataclass
class CreditedTrace(TraceColumns):
    """A replay with its capture merged in: the replayed kernels relinked to copies of the capture's stacks."""

    replayed_by: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # per event: its graph launch
    credit: Credit = field(default_factory=lambda: Credit(""))


def name_mask(trace: TraceColumns, pattern: re.Pattern) -> np.ndarray:
    """Per event: does its name match?"""
    hit = np.array([bool(pattern.search(n)) for n in trace.names] or [False])
    return hit[trace.x.name] if hit.any() else np.zeros(trace.n, bool)  # (most traces: no name matches)


def graph_launches(trace: TraceColumns) -> np.ndarray:
    """The graph launch calls (runtime or driver), in index order."""
    named = name_mask(trace, GRAPH_LAUNCH)
    if not named.any():  # most traces: every open asks, and the categories need not be read (the 1 GB tile's: 8-40 ms)
        return np.empty(0, np.intp)
    return np.flatnonzero(named & (trace.x.cat == int(Cat.RUNTIME)))


def device_mask(trace: TraceColumns) -> np.ndarray:
    """Device activities a graph can replay: kernels, memcpy and memset."""
    return of_cats(trace.x.cat, BUSY_CATS)


def graph_owner(trace: TraceColumns) -> np.ndarray:
    """Per event: the graph launch whose correlation id it shares (-1: none), for device activities only.

    A replay credited to its capture keeps the owners read before its kernels were relinked.
    """
    if isinstance(trace, CreditedTrace):
        return trace.replayed_by
    out = np.full(trace.n, -1, np.int64)
    launches = graph_launches(trace)
    if not len(launches):
        return out
    x, rank = trace.x, rank_of_events(trace)
    keys = keyed(ranks_at(rank, launches), x.corr[launches])
    order = np.argsort(keys, kind="stable")
    keys, launches = keys[order], launches[order]
    dev = np.flatnonzero(device_mask(trace) & (x.corr >= 0))
    dkeys = keyed(ranks_at(rank, dev), x.corr[dev])
    pos = np.clip(np.searchsorted(keys, dkeys), 0, len(keys) - 1)
    hit = (keys[pos] == dkeys) & (keys[pos] >= 0)
    out[dev[hit]] = launches[pos[hit]]
    return out


def own_launches(trace: TraceColumns, launcher: np.ndarray, owner: np.ndarray | None = None) -> np.ndarray:
    """Per event: the call it counts as a launch of (-1: none), the one rule of every per-launch figure (launch
    latency, slow and late launches, the launch queue).

    A device activity with a launch call is a launch of its own, except inside a graph replay. The CPU makes one
    call (cudaGraphLaunch) and the GPU then runs the graph's nodes in order; CUPTI gives each replayed kernel,
    copy and set that call's correlation id (cupti_activity.h: correlationId is the launching API record's,
    graphNodeId is set for a graph launch), which is how Kineto links every one of them to the one call. So a
    graph launch is one launch, from its call's start until the first activity it replays starts (the earliest
    start, on whichever stream), and the replay's other activities are no launches at all. In a replay credited
    to its capture the first activity counts from the graph launch, not from the copy of its capture's call.
    """
    owner = graph_owner(trace) if owner is None else owner
    out = np.where(device_mask(trace), launcher, -1).astype(np.int64)
    replayed = np.flatnonzero(owner >= 0)
    if not len(replayed):
        return out
    out[replayed] = -1
    order = replayed[np.lexsort((replayed, trace.x.ts[replayed], owner[replayed]))]
    first = order[np.r_[True, owner[order][1:] != owner[order][:-1]]]
    out[first] = owner[first]
    return out


@dataclass
class GraphStats:
    """Graph launches and what they replayed; times in microseconds."""

    launches: int = 0
    kernels: int = 0  # device activities replayed (kernels, memcpy, memset)
    empty: int = 0  # graph launches with no device activity (records lost)
    device_us: float = 0.0  # device time of the replayed activities
    device_total_us: float = 0.0  # device time of all activities
    launch_cpu_us: float = 0.0  # CPU time in the graph launch calls
    eager_launches: int = 0
    eager_median_us: float = 0.0  # the median CPU cost of an eager launch call (0: none in the trace)
    captures: int = 0  # stream captures recorded inside the window (Begin/EndCapture pairs)
    empty_examples: list[int] = field(default_factory=list)
    credited: int = 0  # replayed activities credited to the ops that captured them (capture.py)

    @property
    def share(self) -> float:
        return self.device_us / self.device_total_us if self.device_total_us else 0.0

    @property
    def cost_per_kernel_us(self) -> float:
        return self.launch_cpu_us / self.kernels if self.kernels else 0.0

    @property
    def launches_saved(self) -> int:
        """Launch calls eager execution would have made for the replayed work, less the graph launches."""
        return max(self.kernels - self.launches, 0)


def graph_stats(trace: TraceColumns, owner: np.ndarray | None = None, launch: np.ndarray | None = None) -> GraphStats:
    """Count graph launches, what they replayed, and the launch cost per kernel against eager launches (launch: the
    calls that put work on the device, launches.py; without it, the calls named as launches)."""
    owner = graph_owner(trace) if owner is None else owner
    x = trace.x
    launches = graph_launches(trace)
    replayed = owner >= 0
    busy = device_mask(trace)
    per_launch = np.bincount(owner[replayed], minlength=trace.n) if trace.n else np.zeros(0, np.int64)
    empty = launches[per_launch[launches] == 0] if len(launches) else launches
    s = GraphStats(
        launches=len(launches),
        kernels=int(replayed.sum()),
        empty=len(empty),
        device_us=float(x.dur[replayed].sum()) / 1000.0,
        device_total_us=float(x.dur[busy].sum()) / 1000.0,
        launch_cpu_us=float(x.dur[launches].sum()) / 1000.0,
        captures=int((name_mask(trace, BEGIN_CAPTURE) & (x.cat == int(Cat.RUNTIME))).sum()),
        empty_examples=empty[:20].tolist(),
    )
    eager = np.flatnonzero(_eager_launch_mask(trace, launch))
    if len(eager):
        s.eager_launches, s.eager_median_us = len(eager), float(np.median(x.dur[eager])) / 1000.0
    if isinstance(trace, CreditedTrace):
        s.credited = trace.credit.matched
    return s


def _eager_launch_mask(trace: TraceColumns, launch: np.ndarray | None = None) -> np.ndarray:
    """Launches that are not graph launches (nor copies of a capture's stacks)."""
    named = name_mask(trace, EAGER_LAUNCH) if launch is None else launch
    mask = named & ~name_mask(trace, GRAPH_LAUNCH) & (trace.x.cat == int(Cat.RUNTIME))
    if isinstance(trace, CreditedTrace):
        mask[trace.credit.synthetic_from :] = False
    return mask


def synthetic_mask(trace: TraceColumns) -> np.ndarray:
    """Per event: is it a copy of a capture's stack (replayed, not run on the CPU)?"""
    out = np.zeros(trace.n, bool)
    if isinstance(trace, CreditedTrace):
        out[trace.credit.synthetic_from :] = True
    return out


@dataclass
class Replay:
    """What one graph launch replayed: its device activities, their time and extent (us), the top kernels."""

    launch: int
    events: np.ndarray  # in start order
    device_us: float
    start_ns: int
    end_ns: int
    top: list[tuple[str, int, float]]  # (name, count, us), the most time first

    @property
    def count(self) -> int:
        return len(self.events)

    @property
    def span_us(self) -> float:
        return (self.end_ns - self.start_ns) / 1000.0


def replay_of(trace: TraceColumns, owner: np.ndarray, launch: int) -> Replay:
    """The replay of one graph launch (no events: its records were lost)."""
    x = trace.x
    mine = np.flatnonzero(owner == launch)
    mine = mine[np.argsort(x.ts[mine], kind="stable")]
    if not len(mine):
        return Replay(launch, mine, 0.0, 0, 0, [])
    names, inverse = np.unique(x.name[mine], return_inverse=True)
    totals = np.bincount(inverse, weights=x.dur[mine])
    counts = np.bincount(inverse)
    top = np.argsort(-totals, kind="stable")[:TOP_KERNELS]
    return Replay(
        launch,
        mine,
        float(x.dur[mine].sum()) / 1000.0,
        int(x.ts[mine].min()),
        int((x.ts[mine] + x.dur[mine]).max()),
        [(trace.names[int(names[k])], int(counts[k]), float(totals[k]) / 1000.0) for k in top.tolist()],
    )


def replay_extents(trace: TraceColumns, owner: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Per graph launch with a replay: (launch, device track, first start, last end) in ns, for the timeline."""
    x = trace.x
    mine = np.flatnonzero(owner >= 0)
    if not len(mine):
        return []
    order = mine[np.lexsort((x.track[mine], owner[mine]))]
    key = owner[order] * (len(trace.tracks) + 1) + x.track[order]
    cuts = np.concatenate([[0], np.flatnonzero(np.diff(key)) + 1])
    starts = np.minimum.reduceat(x.ts[order], cuts)
    ends = np.maximum.reduceat(x.ts[order] + x.dur[order], cuts)
    return [
        (int(owner[order[c]]), int(x.track[order[c]]), int(s), int(e))
        for c, s, e in zip(cuts.tolist(), starts.tolist(), ends.tolist(), strict=True)
    ]


def graph_note(g: GraphStats) -> str:
    """What the verdict adds for graphs: the replayed work and the launch cost per kernel ("" without graphs)."""
    if not g.launches:
        return ""
    eager = f" against {g.eager_median_us:,.1f} us eager" if g.eager_launches else ""
    return (
        f"; {g.kernels:,} activit{'y' if g.kernels == 1 else 'ies'} on the device ({g.share:.0%} of device time) "
        f"replayed from {g.launches:,} graph launch{'' if g.launches == 1 else 'es'}, "
        f"{g.cost_per_kernel_us:,.1f} us of launch CPU per activity{eager}"
    )


def is_graph_launch(trace: TraceColumns, i: int) -> bool:
    return int(trace.x.cat[i]) == int(Cat.RUNTIME) and bool(GRAPH_LAUNCH.search(trace.name_of(i)))


def is_copy(trace: TraceColumns, i: int) -> bool:
    """Is event i a copy of a capture's stack (it credited replayed kernels and did no CPU work)?"""
    return isinstance(trace, CreditedTrace) and i >= trace.credit.synthetic_from
