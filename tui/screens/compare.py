"""The compare screen: two traces side by side (summary, steps, ops, kernels)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane

from ..fmt import fmt_time
from ..model.analyses.diff import Diff
from ..tables import diff as D

TABS = ("summary", "steps", "ops", "kernels")


def _table(heads: list[str], rows: list[list[str]]) -> DataTable:
    table: DataTable = DataTable(cursor_type="row", zebra_stripes=True)
    table.add_columns(*heads)
    for row in rows:
        table.add_row(*(Text(c) for c in row))
    return table


class CompareScreen(Screen):
    BINDINGS = [
        *(Binding(str(k), f"tab('{name}')", f"{name.title()}", id=f"compare.{name}") for k, name in enumerate(TABS, 1)),
        Binding("escape", "back", "Back", id="compare.back"),
    ]

    def __init__(self, d: Diff, labels: tuple[str, str], pushed: bool = False) -> None:
        super().__init__()
        self.diff, self.labels, self.pushed = d, labels, pushed

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        return self.pushed if action == "back" else True

    def action_back(self) -> None:
        self.app.pop_screen()

    def compose(self) -> ComposeResult:
        d = self.diff
        yield Static(
            f"A: {self.labels[0]}\nB: {self.labels[1]}\ntypical step: A {fmt_time(d.step_time_a)}, "
            f"B {fmt_time(d.step_time_b)} ({d.slower_pct:+.1f}%) · {D.MATCH_RULE}",
            id="compare-head",
        )
        with TabbedContent():  # the first pane (summary) is shown first
            with TabPane("1 Summary", id="summary"):
                yield _table(["", "A", "B", "Change"], D.summary_rows(d.summary_a, d.summary_b))
            with TabPane("2 Steps", id="steps"):
                yield _table(D.STEP_HEADS, D.step_rows(d.steps_a, d.steps_b))
            with TabPane("3 Ops", id="ops"):
                yield _table(D.ROW_HEADS, [D.row_cells(r) for r in d.ops])
            with TabPane("4 Kernels", id="kernels"):
                yield _table(D.ROW_HEADS, [D.row_cells(r) for r in d.kernels])
        yield Footer()

    def action_tab(self, name: str) -> None:
        self.query_one(TabbedContent).active = name
        self.query_one(f"TabPane#{name} DataTable").focus()
