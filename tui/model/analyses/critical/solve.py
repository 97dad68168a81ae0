"""The longest path through the graph with changed weights: one pass over the nodes in time order.

A node's time is the latest over its incoming edges of (the edge's source time + its weight); nodes at or
before the window's start keep their recorded times. The nodes are visited by time, and nodes at one
instant in the order their zero-length edges impose, so every edge is relaxed before its node is read.
"""

from __future__ import annotations

import numpy as np

from .graph import Graph


def topological(g: Graph) -> np.ndarray:
    """The nodes by time, and at one instant by how many zero-length edges lead to them."""
    ts, src, dst = g.ts, g.e.src, g.e.dst
    eq = ts[src] == ts[dst]
    s, d = src[eq], dst[eq]
    rank = np.zeros(len(ts), np.int64)
    for _ in range(len(s) + 1):
        nxt = rank.copy()
        np.maximum.at(nxt, d, rank[s] + 1)
        if np.array_equal(nxt, rank):
            break
        rank = nxt
    return np.lexsort((rank, ts))


def solve(g: Graph, weight: np.ndarray, alive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per node: its time with these edge weights (edges not alive left out), and the edge that sets it."""
    keep = np.flatnonzero(alive)
    order = keep[np.lexsort((-g.e.rule[keep].astype(np.int64), g.e.dst[keep]))]  # on a tie the higher rule wins
    ptr = np.searchsorted(g.e.dst[order], np.arange(len(g.ts) + 1)).tolist()
    src, w, idx = g.e.src[order].tolist(), weight[order].tolist(), order.tolist()
    rel = g.ts - g.start  # ns from the window's start: exact in a float, where raw clock ns are not
    bind = np.full(len(g.ts), -1, np.int64)
    t, b, ts = rel.astype(np.float64).tolist(), bind.tolist(), rel.tolist()
    for v in topological(g).tolist():
        lo, hi = ptr[v], ptr[v + 1]
        if ts[v] <= 0 or lo == hi:
            continue
        best, arg = t[src[lo]] + w[lo], lo
        for j in range(lo + 1, hi):
            c = t[src[j]] + w[j]
            if c > best:
                best, arg = c, j
        t[v], b[v] = best, idx[arg]
    return np.round(np.array(t)).astype(np.int64) + g.start, np.array(b, np.int64)
