"""One place that computes each analysis of a trace once, on first use."""

from __future__ import annotations

from functools import cached_property

import numpy as np

from .kernels import KernelRow, kernel_rows
from .links import Links, link
from .nesting import Nesting, nest, python_parents
from .ops import OpsTable, ops_table
from .schema import Cat
from .summary import Summary, summarize
from .trace import Trace


class Analysis:
    """Lazily computed, cached views of one Trace (pure data, no formatting)."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    @cached_property
    def end(self) -> np.ndarray:
        return self.trace.x["ts"] + self.trace.x["dur"]

    @cached_property
    def nesting(self) -> Nesting:
        """Display nesting: time containment, then Python frames re-hung by their Python ids."""
        x = self.trace.x
        kinds = np.array([t.kind for t in self.trace.tracks] or ["cpu"])
        shown = (kinds[x["track"]] != "meta") & (x["cat"] != int(Cat.OVERHEAD)) if self.trace.n else None
        nesting = nest(x["ts"], self.end, x["track"], shown)
        python_parents(self.trace, nesting.parent)
        return nesting

    @cached_property
    def _children_csr(self) -> tuple[np.ndarray, np.ndarray]:
        parent = self.nesting.parent
        kids = np.flatnonzero(parent >= 0)
        kids = kids[np.lexsort((self.trace.x["ts"][kids], parent[kids]))]
        starts = np.searchsorted(parent[kids], np.arange(self.trace.n + 1))
        return kids, starts

    def children(self, i: int) -> np.ndarray:
        """Direct children of event i in the display nesting, in time order."""
        kids, starts = self._children_csr
        return kids[starts[i] : starts[i + 1]]

    def descendants(self, i: int, limit: int = 100_000):
        """Events under i, depth first in time order (at most limit of them)."""
        stack = list(self.children(i)[::-1])
        seen = 0
        while stack and seen < limit:
            j = int(stack.pop())
            seen += 1
            yield j
            stack.extend(self.children(j)[::-1].tolist())

    @cached_property
    def self_ns(self) -> np.ndarray:
        """Each event's duration less its children's, in the display nesting."""
        from .nesting import children_total

        dur = self.trace.x["dur"]
        return dur - children_total(self.nesting.parent, dur)

    @cached_property
    def links(self) -> Links:
        return link(self.trace)

    @cached_property
    def ops(self) -> OpsTable:
        return ops_table(self.trace, launcher=self.links.launcher)

    @cached_property
    def ops_by_shape(self) -> OpsTable:
        return ops_table(self.trace, group_by_shape=True, launcher=self.links.launcher)

    @cached_property
    def kernels(self) -> list[KernelRow]:
        return kernel_rows(self.trace, self.links)

    @cached_property
    def summary(self) -> Summary:
        return summarize(self.trace, self.ops)

    @cached_property
    def findings(self) -> list:
        """What the explain rules say about this trace (see explain.py)."""
        from .explain import explain

        return explain(self)

    @cached_property
    def notes(self) -> dict[int, list[str]]:
        from .explain import notes_by_event

        return notes_by_event(self.findings)
