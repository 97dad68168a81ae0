"""What fusing a recurring kernel sequence would save on the critical path, by explain's rule for fusion.

explain's fix for memory-bound ops (explain/fixes.py, FUSION_GAIN) asks what their kernels twice as fast would buy:
fused, the intermediates stay on chip. Here each sequence's occurrences in the window explain solves in (the typical
step: savings.window) get that, and as a fused sequence is one kernel launched once, the launch calls of each
occurrence but its first are gone too. Every sequence is solved on one graph of the window (critical/whatif.py, its
`events` form), and worded as explain words a saving: the path before and after, and why it saves next to nothing
where it does (the GPU waits for the CPU, it is off the path, none of it runs in the window).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis import Analysis
from .critical import WhatIfError, WindowError
from .critical.whatif import Spec, recorded, what_if
from .explain.findings import Saving
from .explain.fixes import FUSION_GAIN
from .explain.savings import JOB, NO_WINDOW, graph_owners, saving_of, window
from .sequences import KernelSequence

SPEC = "fuse"  # the saving's spec: no --what-if spec picks one sequence's occurrences, so it is named so
VIEWED = 50  # the sequences the viewer lists (each saving is a solve)
SHORTEST_VIEWED = 3  # HTA's default min_pattern_len
SORTED = {"device": "device_ns", "count": "count", "mean": "mean_ns", "length": "length"}  # what rows are ranked by


@dataclass
class SequenceRow:
    """A recurring sequence and what fusing it saves on the critical path (why none could be solved: JOB,
    NO_WINDOW)."""

    seq: KernelSequence
    saving: Saving | str

    def __getattr__(self, name: str):  # the sequence's figures as the row's (sort keys, fields)
        if name in ("seq", "saving"):
            raise AttributeError(name)
        return getattr(self.seq, name)

    @property
    def name(self) -> str:  # what a table's filter matches
        return self.seq.op

    @property
    def saving_ns(self) -> int | None:
        return self.saving.saving_ns if isinstance(self.saving, Saving) else None


def sequence_rows(a: Analysis, seqs: list[KernelSequence], min_length: int, top: int, sort: str) -> list[SequenceRow]:
    """The sequences of min_length activities or more, ranked by sort (SORTED; the most first, then by device
    time), the first top of them (0: all) with what fusing each saves."""
    attr = SORTED[sort]
    kept = [s for s in seqs if s.length >= min_length]
    kept.sort(key=lambda s: (-getattr(s, attr), -s.device_ns))
    kept = kept[:top] if top > 0 else kept
    return [SequenceRow(s, v) for s, v in zip(kept, fusion_savings(a, kept), strict=True)]


def fusion_savings(a: Analysis, seqs: list[KernelSequence]) -> list[Saving | str]:
    """Per sequence, its saving, or why none could be solved (JOB, NO_WINDOW)."""
    if not seqs:
        return []
    if getattr(a.trace, "job", None):
        return [JOB] * len(seqs)
    try:
        w = window(a)
        owner = graph_owners(a)
        base = recorded(a, w, owner)
    except WindowError:
        return [NO_WINDOW] * len(seqs)
    g, before = base
    present = np.unique(g.e.owner[g.e.owner >= 0])
    out: list[Saving | str] = []
    for s in seqs:
        specs = _specs(a, s, present)
        if not specs:
            out.append(saving_of(SPEC, before, before, [], "absent"))
            continue
        try:
            found = what_if(a, w, specs, owner, base)
        except WhatIfError:
            out.append(saving_of(SPEC, before, before, [], "absent"))
            continue
        out.append(saving_of(SPEC, before, found.after, found.matched[0]))
    return out


def _specs(a: Analysis, s: KernelSequence, present: np.ndarray) -> list[Spec]:
    """The sequence's activities FUSION_GAIN times faster, and its launch calls but each occurrence's first gone
    (only those in the window's graph: a spec that matches nothing is an error)."""
    acts = np.asarray(s.activities, np.int64)
    acts = acts[np.isin(acts, present)]
    if not len(acts):
        return []
    out = [Spec(SPEC, "events", factor=FUSION_GAIN, events=tuple(acts.tolist()))]
    extra = _extra_calls(a, s, present)
    if len(extra):
        out.append(Spec(SPEC, "events", factor=0.0, events=tuple(extra.tolist())))
    return out


def _extra_calls(a: Analysis, s: KernelSequence, present: np.ndarray) -> np.ndarray:
    """The launch calls of the occurrences but each one's first: an occurrence's calls are a run of positions of its
    thread's nesting, from its root's."""
    pos, end = a.nesting.pos, a.nesting.span_end
    calls = np.unique(a.links.launcher[np.asarray(s.activities, np.int64)])
    calls = calls[np.argsort(pos[calls], kind="stable")]
    roots = np.asarray(s.occurrences, np.int64)
    firsts = np.searchsorted(pos[calls], pos[roots], "left")
    firsts = firsts[(firsts < len(calls)) & (firsts < np.searchsorted(pos[calls], end[roots], "left"))]
    keep = np.ones(len(calls), bool)
    keep[firsts] = False
    extra = calls[keep]
    return extra[np.isin(extra, present)]
