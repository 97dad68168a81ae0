"""The marked range: events inside it aggregated by name."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from ..fmt import fmt_dur
from ..model.analyses.rangeagg import RangeRow


class RangePanel(DataTable):
    """count, total, self and average by name for the marked range."""

    DEFAULT_CSS = "RangePanel { height: 10; }"

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.add_columns("Name", "Count", "Total", "Self", "Average")

    def computing(self, span: tuple[int, int]) -> None:
        self.clear()
        self.border_title = f"Marked range: {fmt_dur(span[1] - span[0])} · computing …"

    def show(self, rows: list[RangeRow], span: tuple[int, int] | None) -> None:
        self.clear()
        self.border_title = f"Marked range: {fmt_dur(span[1] - span[0])}" if span else ""
        for r in rows[:500]:
            cells = (r.name[:80], str(r.count), fmt_dur(r.total_ns), fmt_dur(r.self_ns), fmt_dur(r.avg_ns))
            self.add_row(*(Text(c) for c in cells))
