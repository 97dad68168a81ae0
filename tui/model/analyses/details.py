"""What the details panel says about one event: times, self time, links, footprint, args."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..analysis import Analysis
from ..cats import BUSY_CATS, GPU_CATS, Cat, of_cats
from ..load.args import event_args
from .code import frame_kind
from .graphs.replay import Replay, graph_owner, is_copy, is_graph_launch, own_launches, replay_of

TOP_LAUNCHED = 5  # the kernels (by name) a selection's details list, the most device time first
FOOTPRINT_KEYS = (
    "grid",
    "block",
    "registers per thread",
    "shared memory",
    "blocks per SM",
    "warps per SM",
    "est. achieved occupancy %",
)


def footprint(args: dict) -> dict[str, str]:
    """The launch footprint among a GPU event's args, as text."""
    return {k: str(args[k]) for k in FOOTPRINT_KEYS if k in args}


@dataclass
class Launched:
    """Everything a selection launched (whole counts, never a cut list's length) and the largest by name."""

    kernels: int = 0
    copies: int = 0
    sets: int = 0
    device_ns: int = 0  # their durations summed
    names: int = 0  # how many names they have
    top: list[tuple[str, int, int]] = field(default_factory=list)  # (name, count, ns), the most time first

    @property
    def count(self) -> int:
        return self.kernels + self.copies + self.sets


@dataclass
class Details:
    """Plain facts about an event; times in ns from the trace's origin (Trace.origin)."""

    index: int
    name: str
    category: str
    track: str
    start_ns: int
    dur_ns: int
    self_ns: int | None  # None until the nesting's self times are computed
    args: dict
    launch: tuple[int, str] | None = None  # (event, name) of the runtime call
    launch_latency_ns: int | None = None  # None: no launch of its own (a graph replay's activity after its first)
    footprint: dict = field(default_factory=dict)
    launched: Launched | None = None  # an op, annotation, frame or call: the device work launched beneath it
    stack: list[str] = field(default_factory=list)  # your frames (and nn.Modules), outermost first
    overlaps: list[tuple[str, str, int]] = field(default_factory=list)  # children overlapping: (a, b, ns)
    replay: Replay | None = None  # a graph launch: what it replayed
    replayed_by: tuple[int, str] | None = None  # a replayed device activity: (event, name) of its graph launch
    copied: bool = False  # a copy of the capture's stack: credited the replayed kernels, did no CPU work


def brief(a: Analysis, i: int, origin: int | None = None) -> Details:
    """What is known of an event before links and self times are computed: name, place, times, args.

    Times count from origin, the trace's own (Trace.origin) unless given.
    """
    t, x = a.trace, a.trace.x
    origin = t.origin if origin is None else origin
    return Details(
        i,
        t.name_of(i),
        t.cat_names[int(x.cat_str[i])],
        t.track_of(i).name,
        int(x.ts[i]) - origin,
        int(x.dur[i]),
        None,
        event_args(t, i),
    )


def describe(a: Analysis, i: int, origin: int | None = None, frames: Analysis | None = None) -> Details:
    """Everything about event i; frames is an Analysis nesting the Python frames, for its code stack.

    Times count from origin, the trace's own (Trace.origin) unless given: the same with frames shown or hidden.
    """
    t, x = a.trace, a.trace.x
    origin = t.origin if origin is None else origin
    args = event_args(t, i)
    d = Details(
        i,
        t.name_of(i),
        t.cat_names[int(x.cat_str[i])],
        t.track_of(i).name,
        int(x.ts[i]) - origin,
        int(x.dur[i]),
        int(a.self_ns[i]),
        args,
    )
    cat = int(x.cat[i])
    if cat in [int(c) for c in GPU_CATS]:
        r = int(a.links.launcher[i])
        if r >= 0:
            d.launch = (r, t.name_of(r))
            d.launch_latency_ns = int(x.ts[i] - x.ts[r])
        d.footprint = {k: args[k] for k in FOOTPRINT_KEYS if k in args}
    elif cat in (int(Cat.CPU_OP), int(Cat.USER_ANNOTATION), int(Cat.RUNTIME), int(Cat.PYTHON)):
        d.launched = launched_by(a, i)
    if frames is not None:
        d.stack = python_stack(frames, int(a.links.launcher[i]) if cat in [int(c) for c in GPU_CATS] else i)
    if d.self_ns is not None and d.self_ns < 0:
        d.overlaps = child_overlaps(a, i)
    _graph_facts(a, d)
    return d


def _graph_facts(a: Analysis, d: Details) -> None:
    """A graph launch's replay, a replayed activity's graph launch, a capture copy's mark."""
    i = d.index
    launch = is_graph_launch(a.trace, i)
    if not launch and int(a.trace.x.cat[i]) not in [int(c) for c in GPU_CATS]:
        d.copied = is_copy(a.trace, i)
        return
    owner = getattr(a, "graph_owner", None)  # Results keeps it; a plain Analysis reads it again
    owner = graph_owner(a.trace) if owner is None else owner
    if launch:
        d.replay = replay_of(a.trace, owner, i)
    elif owner[i] >= 0:
        d.replayed_by = (int(owner[i]), a.trace.name_of(int(owner[i])))
        own = getattr(a, "own_launch", None)  # Results keeps it; a plain Analysis reads it again
        own = own_launches(a.trace, a.links.launcher, owner) if own is None else own
        call = int(own[i])  # the replay's first: the graph launch's
        d.launch_latency_ns = int(a.trace.x.ts[i] - a.trace.x.ts[call]) if call >= 0 else None


def python_stack(a: Analysis, i: int, limit: int = 16) -> list[str]:
    """The user frames and nn.Modules above event i, outermost first (library frames left out)."""
    x, out = a.trace.x, []
    j = int(a.nesting.parent[i]) if i >= 0 else -1
    while j >= 0:
        if int(x.cat[j]) == int(Cat.PYTHON) and frame_kind(a.trace.name_of(j)) != "library":
            out.append(a.trace.name_of(j))
        j = int(a.nesting.parent[j])
    return out[::-1][-limit:]


def child_overlaps(a: Analysis, i: int) -> list[tuple[str, str, int]]:
    """Pairs of i's children that run at the same time, and for how long: why its self time is negative.

    A Python frame and the annotation or op it opens partially overlap on one row (profiler.step()
    starts ProfilerStep#N before it returns); both are children, so their times add up to more than
    the parent lasts. torch's key_averages counts them the same way.
    """
    x = a.trace.x
    kids = a.children(i)
    kids = kids[np.argsort(x.ts[kids], kind="stable")]
    out = []
    for prev, nxt in zip(kids[:-1].tolist(), kids[1:].tolist(), strict=True):
        overlap = int(min(x.ts[prev] + x.dur[prev], x.ts[nxt] + x.dur[nxt]) - x.ts[nxt])
        if overlap > 0:
            out.append((a.trace.name_of(prev), a.trace.name_of(nxt), overlap))
    return out


def launched_events(a: Analysis, i: int) -> np.ndarray:
    """The kernels, copies and sets launched from event i's subtree (its run of positions in the nesting)."""
    x, nesting, links = a.trace.x, a.nesting, a.links
    p = int(nesting.pos[i])
    sub = nesting.order[p : nesting.span_end[i]] if p >= 0 else np.array([i])
    calls = sub[x.cat[sub] == int(Cat.RUNTIME)]  # only runtime calls launch (no sort: each finds its own run)
    lo = np.searchsorted(links.launch_keys, calls, "left")
    hi = np.searchsorted(links.launch_keys, calls, "right")
    sizes = hi - lo
    at = np.repeat(lo - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes) + np.arange(int(sizes.sum()))
    work = links.by_launch[at]
    return work[of_cats(x.cat[work], BUSY_CATS)]


def launched_by(a: Analysis, i: int, top: int = TOP_LAUNCHED) -> Launched:
    """What event i launched, counted whole, with the names that took the most device time."""
    x, work = a.trace.x, launched_events(a, i)
    cat = x.cat[work]
    out = Launched(
        int((cat == int(Cat.KERNEL)).sum()),
        int((cat == int(Cat.MEMCPY)).sum()),
        int((cat == int(Cat.MEMSET)).sum()),
        int(x.dur[work].sum()),
    )
    names, inverse = np.unique(x.name[work], return_inverse=True)
    totals, counts = np.bincount(inverse, weights=x.dur[work]), np.bincount(inverse)
    out.names = len(names)
    best = np.argsort(-totals, kind="stable")[:top]
    out.top = [(a.trace.names[int(names[k])], int(counts[k]), int(totals[k])) for k in best.tolist()]
    return out
