"""The recurring kernel sequences table: per sequence, how often and how long, and what fusing it would save; Enter
marks its occurrences (their ops and kernels) on the timeline, as a search marks its matches."""

from __future__ import annotations

import numpy as np
from textual.message import Message

from ..model.analyses.fusion import SequenceRow
from ..model.analyses.results import Results
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
        """Mark these events on the timeline (a sequence's occurrences: the ops and their device activities)."""

        def __init__(self, events: np.ndarray, label: str) -> None:
            super().__init__()
            self.events, self.label = events, label

    def __init__(self, analysis: Results, **kwargs) -> None:
        self.analysis = analysis
        super().__init__(**kwargs)

    def columns(self) -> list[Column]:
        return S.columns()

    def context(self) -> dict[str, str]:
        return S.cut_names(self.rows)

    def source_rows(self) -> list:
        return self.analysis.fused_sequences  # computed in the background before this view is made (its needs)

    def rows_said(self) -> str:
        return f"{len(self.shown)} recurring sequences of {S.DEFAULT_MIN_LENGTH} kernels or more (Enter marks one)"

    def action_jump(self) -> None:
        row: SequenceRow | None = self.current()
        if row is None:
            return
        x = self.analysis.trace.x
        events = np.asarray(row.occurrences + row.activities, np.int64)
        events = events[np.argsort(x.ts[events], kind="stable")]
        self.post_message(self.Mark(events, f"sequence {row.op} ×{row.count}"))
