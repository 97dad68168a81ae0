"""Moving the selection: neighbours on a row, parent and child, launch <-> kernel, search."""

from __future__ import annotations

import numpy as np

from ..analysis import Analysis
from ..cats import GPU_CATS, Cat
from ..pattern import Matcher, compile_name_pattern
from .lanes import LaneIndex


def neighbour(lanes: LaneIndex, i: int, step: int) -> int:
    """The previous (step=-1) or next (step=1) event on i's row; i itself at the ends."""
    a = lanes.analysis
    row = lanes.row(int(a.trace.x.track[i]), int(a.nesting.row[i]))
    if row is None:
        return i
    k = int(np.searchsorted(row.starts, a.trace.x.ts[i], side="left"))
    while k < len(row.events) - 1 and row.events[k] != i:
        k += 1
    k = min(max(k + step, 0), len(row.events) - 1)
    return int(row.events[k])


def parent(a: Analysis, i: int) -> int:
    p = int(a.nesting.parent[i])
    return p if p >= 0 else i


def first_child(a: Analysis, i: int) -> int:
    kids = a.children(i)
    return int(kids[0]) if len(kids) else i


def follow_flow(a: Analysis, i: int, forward: bool) -> int:
    """] from a launch (or an op that launches) to its first GPU event; [ back to the launch."""
    cat = int(a.trace.x.cat[i])
    if not forward:
        if cat in [int(c) for c in GPU_CATS]:
            r = int(a.links.launcher[i])
            return r if r >= 0 else i
        return parent(a, i) if cat == int(Cat.RUNTIME) else i
    if cat == int(Cat.RUNTIME):
        return first_launched(a, i)
    for j in a.descendants(i):
        if int(a.trace.x.cat[j]) == int(Cat.RUNTIME) and len(a.links.launched(j)):
            return int(a.links.launched(j)[0])
    return i


def launched_all(a: Analysis, i: int) -> np.ndarray:
    """The GPU events runtime call i launched: for a graph launch, every device activity it replayed, also those
    credited to the copies of their capture nested under it."""
    x = a.trace.x
    found = [a.links.launched(i)]
    found += [a.links.launched(j) for j in a.descendants(i) if int(x.cat[j]) == int(Cat.RUNTIME)]
    return np.concatenate(found)


def first_launched(a: Analysis, i: int) -> int:
    """The earliest GPU event runtime call i launched (i itself if none): a graph launch's first replayed kernel."""
    kids = launched_all(a, i)
    return int(kids[np.argmin(a.trace.x.ts[kids])]) if len(kids) else i


def replay_span(a: Analysis, i: int) -> tuple[int, int, int] | None:
    """(GPU track, first start, last end) of what runtime call i launched, when it launched more than one (a graph)."""
    x = a.trace.x
    if int(x.cat[i]) != int(Cat.RUNTIME):
        return None
    kids = launched_all(a, i)
    if len(kids) < 2:
        return None
    return int(x.track[kids[0]]), int(x.ts[kids].min()), int((x.ts[kids] + x.dur[kids]).max())


def search(a: Analysis, pattern: str | Matcher) -> np.ndarray:
    """Shown events whose name matches the regular expression (case-insensitive), in time order."""
    rx = compile_name_pattern(pattern) if isinstance(pattern, str) else pattern
    hits = np.array([bool(rx.search(n)) for n in a.trace.names] or [False])
    order = a.nesting.order
    found = order[hits[a.trace.x.name[order]]]
    return found[np.argsort(a.trace.x.ts[found], kind="stable")]
