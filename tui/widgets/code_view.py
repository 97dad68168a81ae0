"""The code view: time per function at its def line (and nn.Module), GPU time included, as a table and an icicle."""

from __future__ import annotations

import textwrap

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from ..appkit import pace
from ..model.analyses.code import CodeTable
from ..model.analyses.results import Results
from ..model.view.icicle import Icicle
from ..tables import code as C
from ..tables.base import Column
from .failures import ReportsFailedWorkers
from .icicle import IcicleView
from .rows_view import RowsView, sort_bindings

TABLE_ROWS = 8  # the table's rows never fewer than this: the icicle below gives way
STATUS_LINES = 5  # the status line's most rows (app.tcss .table-status)
ICICLE_ROWS = 12


def _rows(text: str, width: int) -> int:
    """How many rows text takes wrapped at width (as the status line wraps it, at words)."""
    return sum(len(textwrap.wrap(part, width)) or 1 for part in text.split("\n"))


class FramesTable(RowsView):
    """The rows of a CodeTable; Enter shows the frame's calls on the timeline."""

    HELP_NAME = "Code table"
    SORTS = C.SORTS
    DEFAULT_SORT = C.DEFAULT_SORT
    NAME_MAX = 90
    FRAMES = True
    BINDINGS = sort_bindings(C.SORTS, "code")

    def __init__(self, table: CodeTable, **kwargs) -> None:
        self.code = table
        self.DEFAULT_SORT = C.default_sort(table)  # a CPU-only capture: by CPU time
        super().__init__(**kwargs)

    def columns(self) -> list[Column]:
        return C.columns(self.code)

    def context(self) -> CodeTable:
        return self.code

    def source_rows(self) -> list:
        return self.code.rows

    def status(self) -> str:
        """Keys first, as in ops; then the footers that fit the status's lines whole, the figures before what a row
        is (an 80-column terminal has room for the figures; `?` and the README say the rest)."""
        head = super().status()
        width = max(self.size.width - 2, 20)
        lines = C.footers(self.code, unfold="a")
        kept: list[str] = []
        for line in lines[1:] + lines[:1]:
            if _rows(head, width) + _rows(" · ".join([*kept, line]), width) <= STATUS_LINES:
                kept.append(line)
        return head + ("\n" + " · ".join(kept) if kept else "")

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "sort" and not C.has_device(self.code):  # a CPU-only capture: no device sorts offered
            return C.SORTS[parameters[0]].means not in C.DEVICE_MEANS
        return super().check_action(action, parameters)


class CodeView(ReportsFailedWorkers, Vertical):
    """The table above, the icicle below; a folds or unfolds library frames."""

    HELP_NAME = "Code view"
    BINDINGS = [
        Binding("a", "toggle_fold", "Library frames: fold/show", id="code.fold"),
        Binding("i", "focus_icicle", "Icicle", id="code.icicle"),
        Binding("v", "icicle_width", "Icicle width: device/CPU time", id="code.icicle_width"),
    ]

    class Folded(Message):
        def __init__(self, table: CodeTable) -> None:
            super().__init__()
            self.table = table

    def __init__(self, analysis: Results, **kwargs) -> None:
        super().__init__(**kwargs)
        self.analysis = analysis
        self.table = analysis.code

    def compose(self) -> ComposeResult:
        if not self.table.frames:
            yield Static(C.NO_FRAMES + ".", classes="computing", markup=False)
            return
        yield FramesTable(self.table, id="frames")
        yield Static("", id="icicle-status", markup=False)
        yield IcicleView(Icicle(self.table.tree), by="device" if C.has_device(self.table) else "cpu", id="icicle")

    def on_resize(self) -> None:
        """The table keeps TABLE_ROWS rows at least; the icicle takes what is left, up to ICICLE_ROWS (none below 3)."""
        if not self.table.frames:
            return
        width = max(self.size.width - 2, 20)  # the status line's padding
        lines = self.query_one(FramesTable).status().split("\n")
        status_rows = min(sum(-(-max(len(line), 1) // width) for line in lines), 5)  # wrapped, at most 5 (app.tcss)
        rows = self.size.height - status_rows - 1 - TABLE_ROWS - 1  # the table's header, the icicle's status line
        icicle = self.query_one(IcicleView)
        shown = rows >= 3
        icicle.display = self.query_one("#icicle-status").display = shown
        if shown:
            icicle.styles.height = min(rows, ICICLE_ROWS)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "icicle_width":  # a CPU-only capture has no device time to switch to
            return C.has_device(self.table)
        return True

    def on_icicle_view_selected(self, message: IcicleView.Selected) -> None:
        status = self.query_one("#icicle-status", Static)
        status.update(message.fitted(status.size.width or self.size.width or 80))

    def action_focus_icicle(self) -> None:
        if self.query(IcicleView):
            self.screen.set_focus(self.query_one(IcicleView))

    def action_icicle_width(self) -> None:
        if self.query(IcicleView):
            self.query_one(IcicleView).action_toggle_width()

    def action_toggle_fold(self) -> None:
        if self.table.frames:
            self.notify("folding library frames" if not self.table.folded else "showing every frame …", timeout=2)
            self.refold(not self.table.folded)

    @work(thread=True, exclusive=True, group="code", description="Time per frame", exit_on_error=False)
    def refold(self, fold: bool) -> None:
        pace.post(self, self.Folded(self.analysis.code if fold else self.analysis.code_all))

    def on_code_view_folded(self, message: Folded) -> None:
        self.table = message.table
        frames = self.query_one(FramesTable)
        frames.code = message.table
        frames.refill()
        self.query_one(IcicleView).set_tree(Icicle(message.table.tree))
