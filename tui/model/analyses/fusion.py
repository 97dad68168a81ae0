"""What fusing a recurring kernel sequence would save on the critical path, by explain's rule for fusion.

explain's fix for memory-bound ops (explain/fixes.py, FUSION_GAIN) asks what their kernels twice as fast would buy:
fused, the intermediates stay on chip. Here each sequence's occurrences in the window explain solves in (the typical
step: savings.window) get that, and as a fused sequence is one kernel launched once, the launch calls of each
occurrence but its first are gone too. Every sequence is solved on one graph of the window (critical/whatif.py, its
`events` form), and worded as explain words a saving: the path before and after, and why it saves next to nothing
where it does (the GPU waits for the CPU, it is off the path, none of it runs in the window).

Only where a fusion is plausible: a whole step, or a sequence of more than FUSIBLE activities (a user annotation
over a thousand kernels), is no one fusion, and gets no saving (STEP, LONG); those rows come after the others.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis import Analysis
from ..sets import distinct
from .critical import WhatIfError, WindowError
from .critical.whatif import Spec, recorded, what_if
from .explain.findings import Saving
from .explain.fixes import FUSION_GAIN
from .explain.savings import JOB, NO_WINDOW, graph_owners, saving_of, window
from .sequences import STEP_NAME, KernelSequence

SPEC = "fuse"  # the saving's spec: no --what-if spec picks one sequence's occurrences, so it is named so
VIEWED = 50  # the sequences the viewer lists (each saving is a solve)
SHORTEST_VIEWED = 3  # HTA's default min_pattern_len
FUSIBLE = 64  # the longest sequence a fusion is offered for: a transformer layer's (Qwen2's decoder layer: 49)
STEP = "step"  # no saving: a whole step is no one fusion
LONG = "long"  # no saving: more than FUSIBLE activities
GRAPH = "graph"  # no saving: repeats within a graph's replay (the what-if does not re-time a replay's kernels alone)
RANKED_AFTER = 2**62  # more device time than any trace has
SORTED = {"device": "device_ns", "count": "count", "mean": "mean_ns", "length": "length"}  # what rows are ranked by


@dataclass
class SequenceRow:
    """A recurring sequence and what fusing it saves on the critical path (why none could be solved: JOB,
    NO_WINDOW)."""

    seq: KernelSequence
    saving: Saving | str
    label: str = ""  # the op as the row is shown: with '#2', '#3' where rows share an op
    launches_ns: int = 0  # of the saving, what the launch calls gone buy: the saving less the kernels' alone
    calls_gone: int = 0  # the launch calls a fusion takes away (each occurrence's but its first), in the window

    def __getattr__(self, name: str):  # the sequence's figures as the row's (sort keys, fields)
        if name in ("seq", "saving", "label", "launches_ns", "calls_gone"):
            raise AttributeError(name)
        return getattr(self.seq, name)

    @property
    def name(self) -> str:  # what a table's filter matches
        return self.seq.op

    @property
    def ranked_device_ns(self) -> int:
        """The device time as rows are ranked by it: those no fusion saving is given for after all the others."""
        return self.seq.device_ns - (RANKED_AFTER if unfusible(self.seq) else 0)

    @property
    def saving_ns(self) -> int | None:
        return self.saving.saving_ns if isinstance(self.saving, Saving) else None

    @property
    def launch_saving_ns(self) -> int | None:
        """Of the saving, what the launch calls gone buy (None where no saving was solved)."""
        return self.launches_ns if self.saving_ns is not None else None


def sequence_rows(a: Analysis, seqs: list[KernelSequence], min_length: int, top: int, sort: str) -> list[SequenceRow]:
    """The sequences of min_length activities or more, ranked by sort (SORTED; the most first, then by device
    time) with those a fusion is plausible for first, the first top of them (0: all) with what fusing each saves."""
    attr = SORTED[sort]
    kept = [s for s in seqs if s.length >= min_length]
    kept.sort(key=lambda s: (unfusible(s) is not None, -getattr(s, attr), -s.device_ns))
    kept = kept[:top] if top > 0 else kept
    fusible = [s for s in kept if unfusible(s) is None]
    solved = dict(zip(map(id, fusible), fusion_savings(a, fusible), strict=True))
    rows = [SequenceRow(s, *solved[id(s)]) if id(s) in solved else SequenceRow(s, unfusible(s) or "") for s in kept]
    return labelled(rows)


def unfusible(s: KernelSequence) -> str | None:
    """Why no fusion saving is given for the sequence (STEP, LONG, GRAPH), or None."""
    if s.op == STEP_NAME:
        return STEP
    if s.graph:
        return GRAPH
    return LONG if s.length > FUSIBLE else None


def labelled(rows: list[SequenceRow]) -> list[SequenceRow]:
    """Each row labelled by its op, numbered in row order where rows share an op ('...ConvolutionBackward0 #2')."""
    total: dict[str, int] = {}
    for r in rows:
        total[r.seq.op] = total.get(r.seq.op, 0) + 1
    seen: dict[str, int] = {}
    for r in rows:
        seen[r.seq.op] = seen.get(r.seq.op, 0) + 1
        r.label = r.seq.op if total[r.seq.op] == 1 else f"{r.seq.op} #{seen[r.seq.op]}"
    return rows


Solved = tuple[Saving | str, str, int, int]  # a SequenceRow's saving, label, launches_ns and calls_gone


def fusion_savings(a: Analysis, seqs: list[KernelSequence]) -> list[Solved]:
    """Per sequence, its saving (or why none could be solved: JOB, NO_WINDOW), and of it what the launch calls gone
    buy, with how many: the saving less that of the kernels alone made faster (a second solve, only where calls go
    and the whole saves something). The launch calls are CPU time, which the table's Total (device time) leaves out:
    on a path that runs through the CPU they can be all of a saving, and it can pass Total."""
    if not seqs:
        return []
    if getattr(a.trace, "job", None):
        return [(JOB, "", 0, 0)] * len(seqs)
    try:
        w = window(a)
        owner = graph_owners(a)
        base = recorded(a, w, owner)
    except WindowError:
        return [(NO_WINDOW, "", 0, 0)] * len(seqs)
    g, before = base
    present = distinct(g.e.owner[g.e.owner >= 0])
    out: list[Solved] = []
    for s in seqs:
        specs = _specs(a, s, present)
        absent = (saving_of(SPEC, before, before, [], "absent"), "", 0, 0)
        if not specs:
            out.append(absent)
            continue
        try:
            found = what_if(a, w, specs, owner, base)
        except WhatIfError:
            out.append(absent)
            continue
        saving = saving_of(SPEC, before, found.after, found.matched[0])
        calls = len(specs[1].events) if len(specs) > 1 else 0
        launches = 0
        if calls and saving.saving_ns > 0:
            kernels = what_if(a, w, specs[:1], owner, base).after.length_ns
            launches = max(saving.saving_ns - (before.length_ns - kernels), 0)
        out.append((saving, "", launches, calls))
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
    calls = distinct(a.links.launcher[np.asarray(s.activities, np.int64)])
    calls = calls[np.argsort(pos[calls], kind="stable")]
    roots = np.asarray(s.occurrences, np.int64)
    firsts = np.searchsorted(pos[calls], pos[roots], "left")
    firsts = firsts[(firsts < len(calls)) & (firsts < np.searchsorted(pos[calls], end[roots], "left"))]
    keep = np.ones(len(calls), bool)
    keep[firsts] = False
    extra = calls[keep]
    return extra[np.isin(extra, present)]
