"""The trace's other tables for SQL and the API: allocator samples (memory), counters, and flows between events.

Each row that belongs to an event names it by its id (tables.py): a sample's op, a flow's two ends.
"""

from __future__ import annotations

import numpy as np

from ..analyses.results import Results
from ..cats import GPU_CATS, Cat, of_cats
from ..sets import distinct
from ..trace import TraceColumns, keyed
from .tables import NONE, Relation

MEMORY = {
    "id": "the sample's index among the trace's instant events",
    "ts_us": "when, in microseconds from the trace's first event",
    "device": "cpu, cuda:0, ... (the allocator's device)",
    "bytes": "allocated (> 0) or freed (< 0) by this sample",
    "total_allocated": "bytes allocated on the device after it (the allocator's Total Allocated, else a running sum)",
    "total_reserved": "bytes the allocator holds on the device after it (NULL: not written, before 2022)",
    "addr": "the address allocated or freed (NULL: not written)",
    "op_id": "the innermost CPU op on its thread around it (NULL: none): an events id",
}
COUNTERS = {
    "id": "the sample's index among the trace's instant events",
    "name": "the counter (a ph C event's name; one with several values is one counter per value: name · arg)",
    "ts_us": "when, in microseconds from the trace's first event",
    "value": "its value from then on",
    "lane": "the lane it was written on",
}
FLOWS = {
    "flow_id": "the id the trace gives the arrow (a launch's correlation, for ac2g)",
    "kind": "ac2g (a launch call to its device activity) or fwdbwd (a forward op to its backward op)",
    "rank": "the rank (0 for one file)",
    "from_id": "the event the arrow starts at: an events id (NULL: none found at its start)",
    "to_id": "the event the arrow ends at: an events id (NULL: none found, or its end is missing)",
    "from_ts_us": "where it starts, in microseconds from the trace's first event",
    "to_ts_us": "where it ends (NULL: its end is missing)",
}


def memory(a: Results) -> Relation:
    """One row per sound [memory] sample, by device then time (the samples the memory report reads)."""
    inst, origin = a.trace.inst, a.trace.origin
    parts = []
    for c in a.memory_curves:
        parts.append(
            {
                "id": c.index.astype(np.int64),
                "ts_us": (c.ts - origin) / 1000.0,
                "device": np.full(len(c.index), c.device, dtype=object),
                "bytes": inst.bytes[c.index],
                "total_allocated": np.asarray(c.allocated, np.int64),
                "total_reserved": np.asarray(c.reserved, np.int64),
                "addr": inst.addr[c.index],
                "op_id": np.asarray(c.op, np.int64),
            }
        )
    return Relation("memory", "one row per allocator sample (profile_memory=True)", _concat(parts, MEMORY), MEMORY)


def counters(trace: TraceColumns) -> Relation:
    """One row per counter sample (ph C), in time order."""
    inst = trace.inst
    sel = np.flatnonzero(inst.counter) if len(inst.ts) else np.zeros(0, np.int64)
    sel = sel[np.argsort(inst.ts[sel], kind="stable")]
    cols = {
        "id": sel.astype(np.int64),
        "name": np.array([trace.names[int(k)] for k in inst.name[sel]], dtype=object),
        "ts_us": (inst.ts[sel] - trace.origin) / 1000.0,
        "value": inst.value[sel],
        "lane": np.array([trace.tracks[int(k)].name for k in inst.track[sel]], dtype=object),
    }
    return Relation(
        "counters", "one row per counter sample (ph C: GPU utilization, SM efficiency, ...)", cols, COUNTERS
    )


def flows(a: Results) -> Relation:
    """One row per flow arrow: its two ends paired by id, each bound to the event that starts there."""
    trace = a.trace
    f = trace.flow
    ranks = _flow_ranks(trace)
    key = flow_keys(trace)
    at = flow_events(a)
    starts, ends = np.flatnonzero(f.start), np.flatnonzero(~f.start)
    starts = starts[np.argsort(key[starts], kind="stable")]
    pos = np.searchsorted(key[starts], key[ends])
    found = pos < len(starts)
    found[found] = key[starts[pos[found]]] == key[ends[found]]
    head = (
        np.where(found, starts[np.minimum(pos, max(len(starts) - 1, 0))], NONE)
        if len(starts)
        else np.full(len(ends), NONE)
    )
    alone = np.setdiff1d(distinct(starts), distinct(head[head >= 0]), assume_unique=True)  # starts no end names
    src = np.concatenate([head, alone]).astype(np.int64)
    dst = np.concatenate([ends, np.full(len(alone), NONE)]).astype(np.int64)
    one = np.where(src >= 0, src, dst)
    order = np.argsort(f.ts[one], kind="stable")
    src, dst, one = src[order], dst[order], one[order]
    origin = trace.origin
    cols = {
        "flow_id": f.fid[one],
        "kind": np.where(f.ac2g[one], "ac2g", "fwdbwd").astype(object),
        "rank": ranks[one],
        "from_id": _bound(at, src),
        "to_id": _bound(at, dst),
        "from_ts_us": np.where(src >= 0, (f.ts[np.maximum(src, 0)] - origin) / 1000.0, np.nan),
        "to_ts_us": np.where(dst >= 0, (f.ts[np.maximum(dst, 0)] - origin) / 1000.0, np.nan),
    }
    return Relation("flows", "one row per flow arrow (ph s and f joined by their id)", cols, FLOWS)


def _flow_ranks(trace: TraceColumns) -> np.ndarray:
    f = trace.flow
    return np.array([t.rank for t in trace.tracks] or [0], np.int64)[f.track] if len(f.ts) else np.zeros(0, np.int64)


def flow_keys(trace: TraceColumns) -> np.ndarray:
    """Per flow endpoint, the key its two ends share: its id, rank and kind (arrows of two kinds may share an id)."""
    return keyed(_flow_ranks(trace), trace.flow.fid) * 2 + trace.flow.ac2g


def _bound(at: np.ndarray, ends: np.ndarray) -> np.ndarray:
    return np.where(ends >= 0, at[np.maximum(ends, 0)], NONE) if len(at) else np.full(len(ends), NONE, np.int64)


def flow_events(a: Results) -> np.ndarray:
    """Per flow endpoint, the event it binds to (NONE: none): on its lane at its time, an ac2g start to a runtime
    call, an ac2g end to device work, a fwdbwd end to the outermost CPU op starting there."""
    trace = a.trace
    f, x = trace.flow, trace.x
    out = np.full(len(f.ts), NONE, np.int64)
    if not len(f.ts) or not trace.n:
        return out
    gpu = of_cats(x.cat, GPU_CATS)
    runtime = x.cat == int(Cat.RUNTIME)
    host = ~gpu & ~runtime
    for want, sel in ((runtime, f.ac2g & f.start), (gpu, f.ac2g & ~f.start), (host, ~f.ac2g)):
        out[sel] = _event_at(trace, want, f.track[sel], f.ts[sel])
    return out


def _event_at(trace: TraceColumns, candidates: np.ndarray, track: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """The longest candidate event starting on this track at this time (NONE: none)."""
    x = trace.x
    src = np.flatnonzero(candidates)
    out = np.full(len(ts), NONE, np.int64)
    if not len(src) or not len(ts):
        return out
    src = src[np.lexsort((-x.dur[src], x.ts[src], x.track[src]))]
    t0 = int(min(x.ts.min(), ts.min()))
    keys = x.track[src].astype(np.int64) << 44 | (x.ts[src] - t0)
    query = track.astype(np.int64) << 44 | (ts - t0)
    pos = np.searchsorted(keys, query)  # the first (the longest) of those starting there
    ok = pos < len(src)
    ok[ok] = keys[pos[ok]] == query[ok]
    out[ok] = src[pos[ok]]
    return out


def _concat(parts: list[dict[str, np.ndarray]], meanings: dict[str, str]) -> dict[str, np.ndarray]:
    """Column-wise concatenation (empty columns of the right names when there are no parts)."""
    if not parts:
        return {k: np.zeros(0, object if k == "device" else np.float64 if k == "ts_us" else np.int64) for k in meanings}
    return {k: np.concatenate([p[k] for p in parts]) for k in meanings}
