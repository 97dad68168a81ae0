"""Growing a graph: nodes (instants of one lane) and edges (stretches with a rule, class, kind and owner)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .classes import Bound, Edge, Kind


@dataclass
class EdgeList:
    """Edges in columns: src and dst node, rule, class, kind, and the event the stretch is attributed to."""

    src: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    dst: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    rule: np.ndarray = field(default_factory=lambda: np.empty(0, np.int8))
    bound: np.ndarray = field(default_factory=lambda: np.empty(0, np.int8))
    kind: np.ndarray = field(default_factory=lambda: np.empty(0, np.int8))
    owner: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))

    def __len__(self) -> int:
        return len(self.src)


def edges(
    src: np.ndarray,
    dst: np.ndarray,
    rule: Edge,
    bound: Bound | np.ndarray,
    kind: Kind | np.ndarray,
    owner: np.ndarray,
) -> EdgeList:
    """Edges of one rule (class and kind per edge, or one for all)."""
    n = len(src)
    return EdgeList(
        np.asarray(src, np.int64),
        np.asarray(dst, np.int64),
        np.full(n, int(rule), np.int8),
        np.broadcast_to(np.asarray(bound, np.int8), (n,)).copy(),
        np.broadcast_to(np.asarray(kind, np.int8), (n,)).copy(),
        np.asarray(owner, np.int64),
    )


def concat(parts: list[EdgeList]) -> EdgeList:
    return EdgeList(
        *(np.concatenate([getattr(p, k) for p in parts]) for k in ("src", "dst", "rule", "bound", "kind", "owner"))
    )


def lookup(keys: np.ndarray, values: np.ndarray, query: np.ndarray) -> np.ndarray:
    """values[k] for the k with keys[k] == q, for each query (-1 where a query is not a key); keys sorted."""
    if not len(keys):
        return np.full(len(query), -1, np.int64)
    pos = np.clip(np.searchsorted(keys, query), 0, len(keys) - 1)
    return np.where(keys[pos] == query, values[pos], -1)
