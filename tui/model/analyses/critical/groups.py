"""The critical path grouped to read: its stretches summed by name, kind and class, frames folded into their op.

One home for the path's groups, which the `critical` table and the viewer's path view both show. A group is
every stretch of the path with one name, one kind (what the event is, in words: an op, a frame, a kernel...)
and one class (what bounds it), with its time, its share of the path, how many events it holds and its
stretches in time order. With frames hidden, a Python frame's stretch goes to the op it ran under (the
innermost other event of its thread around it), as the call tree gives an op its hidden frames' time.
Before the window's first op and after its last, what runs is bookkeeping (the profiler's step, the
harness's Python, the window's own span): those stretches are folded into one group.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ...analysis import Analysis
from ...cats import Cat, of_cats
from ...sets import distinct
from ...steps import STEP_NAME
from ...trace import TraceColumns
from .path import CriticalPath, PathItem

BOOKKEEPING = "(before and after the ops)"  # bookkeeping: before the window's first op, after its last
NO_OP = "(Python outside any op)"
KINDS = {  # an event's category -> what a path group says it is
    int(Cat.CPU_OP): "op",
    int(Cat.USER_ANNOTATION): "annotation",
    int(Cat.PYTHON): "frame",
    int(Cat.RUNTIME): "runtime",
    int(Cat.KERNEL): "kernel",
    int(Cat.MEMCPY): "copy",
    int(Cat.MEMSET): "set",
    int(Cat.GPU_ANNOTATION): "annotation",
    int(Cat.SYNC): "sync",
}
NO_EVENT_KINDS = {"wait": "wait", "cpu_op": "CPU"}  # a stretch that no event owns: waiting, or untraced CPU
WORK = frozenset({"op", "annotation", "runtime", "sync"})  # the CPU events that are the window's work


@dataclass
class PathGroup:
    """Stretches of the path with one name, kind and class: their time (ns) and events, in time order."""

    name: str
    kind: str  # what the events are, in words (KINDS), "bookkeeping" for the folded group
    bound_by: str
    dur_ns: int = 0
    items: list[PathItem] = field(default_factory=list)
    python_ns: int = 0  # of dur_ns, what hidden Python frames under its events ran (frames folded into it)

    @property
    def calls(self) -> int:
        """How many events the stretches belong to (stretches of one event split by its children count once)."""
        return len({it.event for it in self.items if it.event >= 0}) or len(self.items)


def kind_of(trace: TraceColumns, item: PathItem) -> str:
    """What a stretch's event is, in words: op, frame, annotation, runtime, sync, kernel, copy, set; or wait."""
    if item.event < 0:
        return NO_EVENT_KINDS.get(item.kind, item.kind)
    if item.kind == "sync":
        return "sync"
    return KINDS.get(int(trace.x.cat[item.event]), "other")


def has_frames(trace: TraceColumns, p: CriticalPath) -> bool:
    """Does the path run through Python frames (a with_stack trace)?"""
    events = np.array([it.event for it in p.items if it.event >= 0], dtype=np.int64)
    return bool(len(events)) and bool(np.any(trace.x.cat[events] == int(Cat.PYTHON)))


def path_groups(trace: TraceColumns, p: CriticalPath, frameless: Analysis | None = None) -> list[PathGroup]:
    """The path's groups, the most time first (then by name). frameless: the trace's nesting without frames
    (Results.frameless); given, each frame's stretch goes to the op it ran under."""
    items = list(p.items)
    outside = bookkeeping(trace, items, p.event)
    work = [it for it, out in zip(items, outside, strict=True) if not out]
    python = [0] * len(work)
    if frameless is not None:
        work, python = fold_frames(trace, work, frameless)
    groups: dict[tuple[str, str, str], PathGroup] = {}
    marked = [(it, True, 0) for it, out in zip(items, outside, strict=True) if out]
    marked += [(it, False, ns) for it, ns in zip(work, python, strict=True)]
    for it, out, ns in sorted(marked, key=lambda m: m[0].start_ns):
        named = f"{it.name} (waits for {it.waits_for})" if it.waits_for else it.name  # a wait says on what
        key = (BOOKKEEPING, "bookkeeping", it.bound_by) if out else (named, kind_of(trace, it), it.bound_by)
        g = groups.get(key) or groups.setdefault(key, PathGroup(*key))
        g.dur_ns += it.dur_ns
        g.python_ns += ns
        g.items.append(it)
    return sorted(groups.values(), key=lambda g: (-g.dur_ns, g.name, g.kind))


def bookkeeping(trace: TraceColumns, items: list[PathItem], window_event: int) -> list[bool]:
    """Per stretch: CPU time before the window's first op or after its last that is no part of the work: on the
    window's own span, on no event, or on a frame with no op beneath it (the profiler's step, the harness's
    Python; a frame that runs ops, as the model's forward, is work). The ops: CPU ops, annotations, runtime calls
    and syncs, the window's span aside."""
    kinds = [kind_of(trace, it) for it in items]
    work = [k in WORK and it.event != window_event for k, it in zip(kinds, items, strict=True)]
    if not any(work):
        return [False] * len(items)
    first, last = work.index(True), len(work) - 1 - work[::-1].index(True)
    edge = [k < first or k > last for k in range(len(items))]
    frames = {it.event for it, kind, e in zip(items, kinds, edge, strict=True) if e and kind == "frame"}
    running = _runs_ops(trace, frames)
    return [
        e and it.bound_by == "cpu_bound" and (kind == "CPU" or it.event == window_event or it.event in frames - running)
        for it, kind, e in zip(items, kinds, edge, strict=True)
    ]


def _runs_ops(trace: TraceColumns, frames: set[int]) -> set[int]:
    """The frames with a CPU op, annotation or runtime call of their thread starting inside their span (a
    ProfilerStep#N, which the profiler's own step() opens, is none)."""
    x = trace.x
    if not frames:
        return set()
    steps = [k for k, n in enumerate(trace.names) if STEP_NAME.match(n)]  # the profiler's own spans are not ops
    ops = np.flatnonzero(of_cats(x.cat, (Cat.CPU_OP, Cat.USER_ANNOTATION, Cat.RUNTIME)))
    ops = ops[~np.isin(x.name[ops], steps)]
    ops = ops[np.lexsort((x.ts[ops], x.track[ops]))]
    tracks, starts = x.track[ops], x.ts[ops]
    out = set()
    for f in frames:
        lo, hi = np.searchsorted(tracks, [x.track[f], x.track[f] + 1])
        k = lo + int(np.searchsorted(starts[lo:hi], x.ts[f], side="left"))
        if k < hi and starts[k] < x.ts[f] + x.dur[f]:
            out.add(f)
    return out


def fold_frames(trace: TraceColumns, items: list[PathItem], frameless: Analysis) -> tuple[list[PathItem], list[int]]:
    """The stretches with each frame's given to the innermost other event around it on its thread (its name
    and event; NO_OP with none), and consecutive stretches of one event and class merged again; with, per
    stretch, how much of it was frames' time (ns): per stretch, so that an event whose stretches fall in two groups
    (another class, the bookkeeping) gives each group its own frames' time only."""
    x = trace.x
    frames = [k for k, it in enumerate(items) if it.event >= 0 and int(x.cat[it.event]) == int(Cat.PYTHON)]
    python = [0] * len(items)
    if not frames:
        return list(items), python
    owner = _enclosing(trace, frameless, [items[k] for k in frames])
    out = list(items)
    for k, e in zip(frames, owner, strict=True):
        out[k] = replace(items[k], event=e, name=trace.name_of(e) if e >= 0 else NO_OP)
        python[k] = items[k].dur_ns
    return _merged(out, python)


def _enclosing(trace: TraceColumns, frameless: Analysis, stretches: list[PathItem]) -> list[int]:
    """For each frame's stretch, the innermost event of the frameless nesting on its track that holds it (-1): the
    last one starting at or before it, then up its parents until one holds the whole stretch (all at once)."""
    x, nesting = trace.x, frameless.nesting
    order = nesting.order
    key_track, key_start = x.track[order].astype(np.int64), x.ts[order]
    ev = np.array([it.event for it in stretches], np.int64)
    s = np.array([it.start_ns for it in stretches], np.int64) + trace.origin
    e = s + np.array([it.dur_ns for it in stretches], np.int64)
    track = x.track[ev].astype(np.int64)
    k, lo = np.full(len(ev), -1, np.int64), np.zeros(len(ev), np.int64)
    for t in distinct(track).tolist():  # a few threads: each searched at once
        mine = track == t
        a, b = np.searchsorted(key_track, [t, t + 1])
        lo[mine] = a
        k[mine] = a + np.searchsorted(key_start[a:b], s[mine], side="right") - 1
    j = np.where(k >= lo, order[np.maximum(k, 0)], -1).astype(np.int64)
    end, parent = x.ts + x.dur, nesting.parent
    while True:
        open_ = j >= 0
        holds = open_ & (x.ts[np.maximum(j, 0)] <= s) & (end[np.maximum(j, 0)] >= e) & (x.dur[np.maximum(j, 0)] > 0)
        climb = open_ & ~holds
        if not climb.any():
            return j.tolist()
        j[climb] = parent[j[climb]]


def _merged(items: list[PathItem], python: list[int]) -> tuple[list[PathItem], list[int]]:
    """Consecutive stretches of one event (or one unnamed owner) and class as one, their frames' time summed."""
    out: list[PathItem] = []
    ns: list[int] = []
    for it, frames in zip(items, python, strict=True):
        last = out[-1] if out else None
        if last is not None and (last.event, last.name, last.bound_by) == (it.event, it.name, it.bound_by):
            out[-1] = replace(last, dur_ns=last.dur_ns + it.dur_ns)
            ns[-1] += frames
        else:
            out.append(it)
            ns.append(frames)
    return out, ns
