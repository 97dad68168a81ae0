"""Links from runtime launches to GPU activity, by correlation with an External id fallback."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cats import GPU_CATS, Cat, of_cats
from .trace import TraceColumns, keyed, rank_of_events, ranks_at


@dataclass
class Links:
    """launcher[g]: the runtime call that launched GPU event g (-1 if none).

    launched(r) lists the GPU events of runtime call r (many for a graph launch).
    """

    launcher: np.ndarray
    by_launch: np.ndarray  # GPU event indices sorted by their launcher
    launch_keys: np.ndarray  # launcher of each entry of by_launch
    flows_paired: int = 0
    flows_agree: int = 0
    via_external_id: int = 0

    def launched(self, r: int) -> np.ndarray:
        lo, hi = np.searchsorted(self.launch_keys, [r, r + 1])
        return self.by_launch[lo:hi]


def link(trace: TraceColumns) -> Links:
    """Pair every GPU event with its launching runtime call."""
    x, rank = trace.x, rank_of_events(trace)
    cat = x.cat
    gpu = of_cats(cat, (c for c in GPU_CATS if c != Cat.GPU_ANNOTATION))
    runtime = cat == int(Cat.RUNTIME)
    launcher = _match(keyed(rank, x.corr), runtime, gpu)
    missing = gpu & (launcher < 0)
    by_ext = _match(keyed(rank, x.ext), runtime, missing)
    launcher = np.where(missing, by_ext, launcher)
    missing = gpu & (launcher < 0)
    if missing.any():  # MTIA and others: no correlation args, only ac2g flow arrows
        launcher = np.where(missing, _by_flows(trace, rank, runtime, missing), launcher)
    linked = np.flatnonzero(launcher >= 0)
    order = linked[np.argsort(launcher[linked], kind="stable")]
    launcher = launcher.astype(np.int32)  # event indices fit in 32 bits
    links = Links(launcher, order.astype(np.int32), launcher[order], via_external_id=int((by_ext >= 0).sum()))
    links.flows_paired, links.flows_agree = _flow_agreement(trace, rank, runtime)
    return links


def _match(keys: np.ndarray, source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """For each target event, the first source event with the same key (-1 if none)."""
    out = np.full(len(keys), -1, np.int64)
    src = np.flatnonzero(source & (keys >= 0))
    if not len(src):
        return out
    src = src[np.argsort(keys[src], kind="stable")]
    skeys = keys[src]
    tgt = np.flatnonzero(target & (keys >= 0))
    pos = np.searchsorted(skeys, keys[tgt])
    ok = pos < len(skeys)
    ok[ok] = skeys[pos[ok]] == keys[tgt[ok]]
    out[tgt[ok]] = src[pos[ok]]
    return out


def _by_flows(trace: TraceColumns, rank: np.ndarray, runtime: np.ndarray, target: np.ndarray) -> np.ndarray:
    """For each target event, the runtime call an ac2g flow arrow joins it to (-1 if none).

    An arrow starts on the runtime call's thread at the call's start and ends on the device lane at the
    work's start; its id pairs the two ends.
    """
    out = np.full(trace.n, -1, np.int64)
    f, x = trace.flow, trace.x
    if not len(f.ts) or not f.ac2g.any():
        return out
    t0 = int(min(x.ts.min(), f.ts.min()))
    ev_key = x.track.astype(np.int64) << 44 | (x.ts - t0)
    fl_key = f.track.astype(np.int64) << 44 | (f.ts - t0)
    franks = np.array([t.rank for t in trace.tracks], np.int64)[f.track]
    starts, ends = np.flatnonzero(f.ac2g & f.start), np.flatnonzero(f.ac2g & ~f.start)
    calls = _event_at(ev_key, runtime, fl_key[starts])
    work = _event_at(ev_key, target, fl_key[ends])
    by_id = dict(zip(keyed(franks[starts], f.fid[starts]).tolist(), calls.tolist(), strict=True))
    for w, fid in zip(work.tolist(), keyed(franks[ends], f.fid[ends]).tolist(), strict=True):
        if w >= 0 and by_id.get(fid, -1) >= 0:
            out[w] = by_id[fid]
    return out


def _event_at(keys: np.ndarray, candidates: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """The candidate event with each query's (track, start) key (-1 if none)."""
    src = np.flatnonzero(candidates)
    out = np.full(len(queries), -1, np.int64)
    if not len(src) or not len(queries):
        return out
    src = src[np.argsort(keys[src], kind="stable")]
    pos = np.searchsorted(keys[src], queries)
    ok = pos < len(src)
    ok[ok] = keys[src][pos[ok]] == queries[ok]
    out[ok] = src[pos[ok]]
    return out


def _flow_agreement(trace: TraceColumns, rank: np.ndarray, runtime: np.ndarray) -> tuple[int, int]:
    """How many ac2g flow starts name a runtime call's correlation, at its timestamp."""
    f = trace.flow
    if not len(f.ts):
        return 0, 0
    sel = f.start & f.ac2g
    franks = np.array([t.rank for t in trace.tracks], np.int64)[f.track[sel]]
    fkeys = keyed(franks, f.fid[sel])
    rt = np.flatnonzero(runtime & (trace.x.corr >= 0))
    rkeys = keyed(ranks_at(rank, rt), trace.x.corr[rt])
    order = np.argsort(rkeys)
    pos = np.clip(np.searchsorted(rkeys[order], fkeys), 0, max(len(rt) - 1, 0))
    if not len(rt):
        return int(sel.sum()), 0
    hit = rkeys[order][pos] == fkeys
    same_ts = trace.x.ts[rt[order][pos]] == f.ts[sel]
    return int(sel.sum()), int((hit & same_ts).sum())
