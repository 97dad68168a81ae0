"""Links from runtime launches to GPU activity, by correlation with an External id fallback."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cats import GPU_CATS, Cat
from .trace import Trace, keyed, rank_of_events


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


def link(trace: Trace) -> Links:
    """Pair every GPU event with its launching runtime call."""
    x, rank = trace.x, rank_of_events(trace)
    cat = x.cat
    gpu = np.isin(cat, [int(c) for c in GPU_CATS if c != Cat.GPU_ANNOTATION])
    runtime = cat == int(Cat.RUNTIME)
    launcher = _match(keyed(rank, x.corr), runtime, gpu)
    missing = gpu & (launcher < 0)
    by_ext = _match(keyed(rank, x.ext), runtime, missing)
    launcher = np.where(missing, by_ext, launcher)
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


def _flow_agreement(trace: Trace, rank: np.ndarray, runtime: np.ndarray) -> tuple[int, int]:
    """How many ac2g flow starts name a runtime call's correlation, at its timestamp."""
    f = trace.flow
    if not len(f.ts):
        return 0, 0
    sel = f.start & f.ac2g
    franks = np.array([t.rank for t in trace.tracks], np.int64)[f.track[sel]]
    fkeys = keyed(franks, f.fid[sel])
    rt = np.flatnonzero(runtime & (trace.x.corr >= 0))
    rkeys = keyed(rank[rt], trace.x.corr[rt])
    order = np.argsort(rkeys)
    pos = np.clip(np.searchsorted(rkeys[order], fkeys), 0, max(len(rt) - 1, 0))
    if not len(rt):
        return int(sel.sum()), 0
    hit = rkeys[order][pos] == fkeys
    same_ts = trace.x.ts[rt[order][pos]] == f.ts[sel]
    return int(sel.sum()), int((hit & same_ts).sum())
