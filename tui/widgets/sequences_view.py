"""The recurring kernel sequences table: per sequence, how often and how long, and what fusing it would save; Enter
marks its occurrences (their ops and kernels) on the timeline, as a search marks its matches."""

from __future__ import annotations

import numpy as np
from textual.message import Message

from ..model.analyses.fusion import SequenceRow
from ..model.analyses.results import Results
from ..model.analyses.sequences import replayed
from ..tables import sequences as S
from ..tables.base import Column
from .rows_view import RowsView, sort_bindings


class SequencesView(RowsView):
    HELP_NAME = "Sequences table"
    SORTS = S.SORTS
    DEFAULT_SORT = "device"
    NAME_MAX = 70
    BINDINGS = sort_bindings(S.SORTS, "sequences")

    class Mark(Message):
        """Mark a sequence's occurrences on the timeline: stops are the ops n and N walk (one per occurrence, in
        time order), marked those and every device activity they launched (all highlighted)."""

        def __init__(self, stops: np.ndarray, marked: np.ndarray, label: str) -> None:
            super().__init__()
            self.stops, self.marked, self.label = stops, marked, label

    def __init__(self, analysis: Results, **kwargs) -> None:
        self.analysis = analysis
        super().__init__(**kwargs)

    def columns(self) -> list[Column]:
        return S.columns()

    def context(self) -> S.Cut:
        return S.cut_names(self.rows, 0 if self.every_column else max(self.size.width - 2, 20))

    def source_rows(self) -> list:
        return self.analysis.fused_sequences  # computed in the background before this view is made (its needs)

    def rows_said(self) -> str:
        replays = replayed(self.analysis.graph_owner)  # computed in the background before this view is made
        if not self.rows:
            return S.none_recur(S.DEFAULT_MIN_LENGTH, replays)
        said = f"{len(self.shown)} recurring sequence{'' if len(self.shown) == 1 else 's'} of {S.DEFAULT_MIN_LENGTH} kernels or more (Enter marks one)"
        return " ".join([said, *S.replays_note(self.rows, replays)])

    def action_jump(self) -> None:
        row: SequenceRow | None = self.current()
        if row is None:
            return
        x = self.analysis.trace.x
        stops = np.asarray(row.occurrences, np.int64)
        stops = stops[np.argsort(x.ts[stops], kind="stable")]
        marked = np.concatenate([stops, np.asarray(row.activities, np.int64)])
        self.post_message(self.Mark(stops, marked, f"sequence {row.label or row.op} ×{row.count}"))
