"""The critical path view: what bounds a step (a bar per class), then the path as a table to walk.

Attributes down: the path (the step b marked on the timeline, else Results.critical: the slowest step,
computed in the background before this view is made).
Messages up: Enter on a row posts Jump with its event; the screen selects it on the timeline.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from ..model.analyses.critical import CriticalPath, PathItem
from ..tables import critical as C
from ..tables.base import Column
from .rows_view import RowsView

BAR = 24  # cells of a whole path's bar


def breakdown_renderable(p: CriticalPath, width: int = BAR) -> Group:
    """The path's length and what bounds it, then a bar per class, as `tracetui critical` prints them."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(no_wrap=True, style="#ff5f87")
    for title, time, share in C.breakdown_rows(p):
        grid.add_row(title, time, f"{share:.0%}", C.bar(share, width))
    said = C.status(p)
    head = Text(said[:1].upper() + said[1:], style="bold #e5c07b")
    hint = Text("b on the timeline marks another step's path", style="dim")
    return Group(head, grid, hint)


class CriticalPathTable(RowsView):
    """The path's items in time order; Enter goes to the item's event on the timeline."""

    HELP_NAME = "Critical path"
    OTHER_COLUMNS_WIDTH = 50

    def __init__(self, path: CriticalPath, **kwargs) -> None:
        self.path = path
        super().__init__(**kwargs)

    def columns(self) -> list[Column]:
        return C.path_columns()

    def context(self) -> CriticalPath:
        return self.path

    def source_rows(self) -> list[PathItem]:
        return self.path.items

    def status(self) -> str:
        return f"{len(self.shown):,} stretches of the path, in time order · Enter: the row's event on the timeline · / filters"

    def action_jump(self) -> None:
        row = self.current()
        if row is None:
            return
        if row.event < 0:
            self.notify(f"{row.name}: no event of the trace to go to", timeout=2)
            return
        self.post_message(CriticalView.Jump(row.event))


class CriticalView(Vertical):
    """The breakdown above, the path's table below."""

    DEFAULT_CSS = """
    CriticalView { height: 1fr; }
    CriticalView > #critical-breakdown { height: auto; padding: 0 1; }
    CriticalView > CriticalPathTable { height: 1fr; }
    """

    class Jump(Message):
        """Go to this event on the timeline."""

        def __init__(self, event: int) -> None:
            super().__init__()
            self.event = event

    def __init__(self, path: CriticalPath, **kwargs) -> None:
        super().__init__(**kwargs)
        self.path = path

    def compose(self) -> ComposeResult:
        yield Static(breakdown_renderable(self.path), id="critical-breakdown")
        yield CriticalPathTable(self.path)

    def set_path(self, path: CriticalPath) -> None:
        """Show another path (the step b marked on the timeline)."""
        self.path = path
        self.query_one("#critical-breakdown", Static).update(breakdown_renderable(path))
        table = self.query_one(CriticalPathTable)
        table.path = path
        table.refill()
