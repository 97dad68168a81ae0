"""The compare screen: two traces side by side, in the views of the registry's COMPARE list."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static, TabbedContent

from ..appkit import faults
from ..model.analyses.diff import Diff
from ..tables import diff as D
from ..text.sanitize import visible_lines
from ..views.registry import COMPARE, key_bindings
from ..views.showing import ShowsViews
from ..widgets.failures import ReportsFailedWorkers
from ..widgets.keybar import KeyBar
from ..widgets.view_pane import ViewPane


class CompareScreen(ShowsViews, ReportsFailedWorkers, Screen):
    HELP_NAME = "Comparing two traces"
    BINDINGS = [
        *key_bindings(COMPARE, "compare.view"),
        Binding("escape", "back", "Back to the trace", id="compare.back"),
    ]

    def __init__(self, d: Diff, labels: tuple[str, str], pushed: bool = False) -> None:
        super().__init__()
        self.diff, self.labels, self.pushed = d, labels, pushed
        self.failures: dict[str, tuple[str, object]] = {}
        self.analysis = self.structure = None  # the compare views read the diff, not an analysis
        self.view_name = COMPARE[0].name  # the view shown, and where the focus goes (showing.py)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        return self.pushed if action == "back" else True

    def action_back(self) -> None:
        self.app.pop_screen()

    def record_failure(self, what: str, exc: BaseException) -> object:
        return faults.record(what, exc)

    def compose(self) -> ComposeResult:
        d = self.diff
        yield Static(
            visible_lines("\n".join([*D.head_lines(d, self.labels), D.MATCH_RULE])),  # the files' names: data
            id="compare-head",
            markup=False,
        )
        with TabbedContent(initial=self.view_name):
            for spec in COMPARE:
                yield ViewPane(spec, self)
        yield KeyBar()

    async def on_mount(self) -> None:
        for pane in self.query(ViewPane):
            pane.ensure()  # the diff is computed: every view can be made at once
        await self.settle_view(take_focus=True)
