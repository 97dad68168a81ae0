"""The marked range: the time each name holds inside it, self time on the CPU and on the GPU apart.

The table (tui/tables/rangeagg.py) is fitted to the panel's width: the numbers stay, the names are cut
in the middle first, so an 80-column terminal still reads the counts and times.
"""

from __future__ import annotations

from ..model.analyses.rangeagg import RangeRow
from ..tables.base import fit
from ..tables.rangeagg import COLUMNS
from ..text.fmt import fmt_dur
from .lazy_table import LazyTable, TextColumns
from .rows_view import FittedSource

MAX_ROWS = 500


def range_title(rows: list[RangeRow], span: tuple[int, int] | None) -> str:
    """What the range is and what its rows add up to (self times: CPU over its threads, GPU over its streams), each
    time the part inside the range (an op or a kernel cut by its edge counts what it spent inside)."""
    if not span:
        return ""
    cpu, gpu = sum(r.cpu_self_ns for r in rows), sum(r.gpu_self_ns for r in rows)
    parts = [f"Marked range: {fmt_dur(span[1] - span[0])}", f"CPU self {fmt_dur(cpu)}"]
    if gpu:
        parts.append(f"GPU self {fmt_dur(gpu)}")
    over = "threads and streams" if gpu else "threads"  # the figures first: a narrow border cuts the words
    return " · ".join(parts) + f" (times inside it, summed over {over})"


def range_cells(r: RangeRow) -> tuple[str, ...]:
    """A row's cells in full: name, count, self CPU and self GPU inside the range, and its whole time inside it."""
    return tuple(c.text(r, None, 0) for c in COLUMNS)


class RangePanel(LazyTable):
    """count, self CPU and self GPU time in the range, and the total in the range, by name (attributes: show)."""

    DEFAULT_CSS = "RangePanel { height: 10; }"

    def __init__(self, **kwargs) -> None:
        super().__init__(TextColumns([c.header for c in COLUMNS], []), **kwargs)
        self.rows: list[RangeRow] = []

    def computing(self, span: tuple[int, int]) -> None:
        self.rows = []
        self._refit()
        self.border_title = f"Marked range: {fmt_dur(span[1] - span[0])} · computing …"

    def show(self, rows: list[RangeRow], span: tuple[int, int] | None) -> None:
        self.rows = rows[:MAX_ROWS]
        self.border_title = range_title(rows, span)
        self.cursor_row = 0
        self._refit()

    def on_resize(self) -> None:
        self._refit()

    def _refit(self) -> None:
        width = self.scrollable_content_region.width - 1  # the last gap: the scrollbar's room is kept, shown or not
        if width < 20 or not self.rows:
            self.set_source(TextColumns([c.header for c in COLUMNS], [range_cells(r) for r in self.rows]))
            return
        self.set_source(FittedSource(fit(COLUMNS, self.rows, None, width)))

    def cells(self) -> list[list[str]]:
        """The rows as shown, in order (for tests and a screen reader's sake)."""
        return [[self.source.cell(k, c) for c in range(len(self.source.headers))] for k in self.order]
