"""Finding events and describing one, for the API and the MCP server: by name, category and time; by id.

Names match as the viewer's search does (a regular expression, case-insensitive, anywhere in the name);
rows come in time order, then by id. An event's description gives its row, its self time, its args,
where it sits (its parents and children), what links it to the other side (the runtime call that
launched it, or the device work it launched) and its flow arrows: every other event by its id.
"""

from __future__ import annotations

import math

import numpy as np

from ..analyses.details import describe
from ..analyses.results import Results
from ..cats import GPU_CATS
from ..errors import QueryError
from ..pattern import BadPattern, Matcher, compile_name_pattern
from .tables import KINDS, EventColumns, Relation, event_rows

CHILDREN_SHOWN = 50
KERNELS_SHOWN = 20


def name_pattern(pattern: str) -> Matcher:
    """The name filter, compiled as the viewer's search compiles it (linear time: model/pattern.py); QueryError
    naming the problem."""
    try:
        return compile_name_pattern(pattern)
    except BadPattern as exc:
        raise QueryError(f"bad regular expression {pattern!r}: {exc}") from None


def find_events(
    a: Results,
    name: str | None = None,
    cat: str | None = None,
    start_us: float | None = None,
    end_us: float | None = None,
) -> np.ndarray:
    """The ids of the events matching every filter given, in time order (ties by id).

    cat matches the category as written or normalized (kernel, cpu_op, cuda_runtime, runtime, ...), any case.
    A window keeps the events that overlap [start_us, end_us] (microseconds from the trace's first event).
    """
    trace, x = a.trace, a.trace.x
    keep = np.ones(trace.n, bool)
    if name is not None:
        rx = name_pattern(name)
        hits = np.array([bool(rx.search(n)) for n in trace.names] or [False])
        keep &= hits[x.name]
    if cat is not None:
        keep &= _cat_mask(a, cat)
    if start_us is not None or end_us is not None:
        keep &= _window_mask(a, start_us, end_us)
    ids = np.flatnonzero(keep)
    return ids[np.argsort(x.ts[ids], kind="stable")]


def _cat_mask(a: Results, cat: str) -> np.ndarray:
    want = cat.strip().lower()
    x = a.trace.x
    written = np.array([c.lower() == want for c in a.trace.cat_names] or [False])
    mask = written[x.cat_str]
    if want in KINDS:
        mask |= x.cat == KINDS.index(want)
    return mask


def _window_mask(a: Results, start_us: float | None, end_us: float | None) -> np.ndarray:
    if start_us is not None and end_us is not None and end_us < start_us:
        raise QueryError(f"the window ends ({end_us:g} us) before it starts ({start_us:g} us)")
    x, origin = a.trace.x, a.trace.origin
    keep = np.ones(a.trace.n, bool)
    if start_us is not None:
        keep &= x.ts + x.dur >= origin + _ns(start_us, "start_us")
    if end_us is not None:
        keep &= x.ts <= origin + _ns(end_us, "end_us")
    return keep


_FAR_NS = 1 << 62  # past any event's time (see model/limits.py TIME_NS): a window edge this far takes them all


def _ns(us: float, what: str) -> int:
    """A window edge in ns from the first event; one past every event's time reads as that far (-1e308: from
    the start); QueryError for NaN or no number."""
    if isinstance(us, bool) or not isinstance(us, (int, float, np.integer, np.floating)) or math.isnan(us):
        raise QueryError(f"{what} must be a number of microseconds, got {us!r}")
    return int(max(-_FAR_NS, min(_FAR_NS, us * 1000)))


def check_id(a: Results, i: int) -> int:
    """The id as an int, or QueryError saying which ids the trace has."""
    n = a.trace.n
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= int(i) < n:
        raise QueryError(f"no event with id {i!r}: this trace's ids are 0 to {n - 1:,}")
    return int(i)


def event_document(a: Results, i: int, cols: EventColumns, lanes: Relation) -> dict:
    """Everything about one event, every event it names by id (parents outermost first, children in time order)."""
    i = check_id(a, i)
    row = event_rows(a, np.array([i]), cols, lanes)[0]
    d = describe(a, i)
    kids = a.children(i)
    doc: dict = {
        **row,
        "self_us": d.self_ns / 1000.0 if d.self_ns is not None else None,
        "args": d.args,
        "parents": _brief(a, _parents(cols.parent, i)),
        "children": _brief(a, kids[:CHILDREN_SHOWN]),
        "children_total": len(kids),
    }
    doc |= _links(a, i, d.launch_latency_ns)
    doc["flows"] = flows_of(a, i)
    return doc


def _parents(parent: np.ndarray, i: int) -> list[int]:
    out = []
    j = int(parent[i])
    while j >= 0:
        out.append(j)
        j = int(parent[j])
    return out[::-1]


def _brief(a: Results, ids: list[int] | np.ndarray) -> list[dict]:
    x, origin = a.trace.x, a.trace.origin
    return [
        {
            "id": int(j),
            "name": a.trace.name_of(int(j)),
            "ts_us": (int(x.ts[j]) - origin) / 1000.0,
            "dur_us": int(x.dur[j]) / 1000.0,
        }
        for j in ids
    ]


def _links(a: Results, i: int, latency_ns: int | None) -> dict:
    """Device work: the runtime call that launched it, and its launch-to-start latency (latency_ns, as the details
    give it: None for a graph replay's activity after its first). A host event: the device work launched from
    beneath it."""
    x = a.trace.x
    if int(x.cat[i]) in [int(c) for c in GPU_CATS]:
        r = int(a.links.launcher[i])
        launch = None
        if r >= 0:
            launch = {**_brief(a, [r])[0], "latency_us": latency_ns / 1000.0 if latency_ns is not None else None}
        return {"launch": launch}
    below = _launched_below(a, i)
    return {"kernels": _brief(a, below[:KERNELS_SHOWN]), "kernels_total": int(a.launches_below[i])}


def _launched_below(a: Results, i: int) -> list[int]:
    """The device work launched from i's subtree, in time order (the first KERNELS_SHOWN)."""
    out: list[int] = []
    stack = [i]
    below = a.launches_below
    while stack and len(out) < KERNELS_SHOWN:
        j = stack.pop()
        out += [int(g) for g in a.links.launched(j)]
        kids = a.children(j)
        stack.extend(int(k) for k in kids[below[kids] > 0][::-1])
    ts = a.trace.x.ts
    return sorted(out, key=lambda g: (int(ts[g]), g))[:KERNELS_SHOWN]


def flows_of(a: Results, i: int, at: np.ndarray | None = None) -> list[dict]:
    """The flow arrows that start or end at this event, with the event at their other end (None: not found).

    at: each flow endpoint's event (more_tables.flow_events), when the caller keeps it.
    """
    from .more_tables import flow_events, flow_keys

    f = a.trace.flow
    if not len(f.ts):
        return []
    at = flow_events(a) if at is None else at
    keys = flow_keys(a.trace)
    out = []
    for k in np.flatnonzero(at == i).tolist():
        other = np.flatnonzero((keys == keys[k]) & (f.start != f.start[k]))
        to = int(at[other[0]]) if len(other) and at[other[0]] >= 0 else None
        out.append(
            {
                "kind": "ac2g" if f.ac2g[k] else "fwdbwd",
                "flow_id": int(f.fid[k]),
                "direction": "out" if f.start[k] else "in",
                "other_id": to,
            }
        )
    return out
