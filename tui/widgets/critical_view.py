"""The critical path view: what bounds a step (a bar per class), then the path grouped to read.

The groups (critical/groups.py, as `tracetui critical` lists them): the path's stretches by name, kind and class,
the most time first, sortable with the table keys; with frames hidden a frame's time goes to the op it ran
under; what runs before the step's first op and after its last is one bookkeeping row. Enter opens a group's
stretches in time order, Enter again goes to that event on the timeline, Esc comes back to the groups.

Attributes down: the path (the step b marked on the timeline, else Results.critical: the slowest step, computed
in the background before this view is made) and, with frames hidden, the frameless nesting.
Messages up: Jump with an event; the screen selects it on the timeline.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from ..appkit import faults, pace
from ..model.analyses.critical import CriticalPath
from ..model.analyses.critical.groups import PathGroup, path_groups
from ..model.analysis import Analysis
from ..model.trace import TraceColumns
from ..tables import critical as C
from ..tables import critical_path as P
from ..tables.base import Column
from ..text.fmt import plural
from .failures import ReportsFailedWorkers
from .rows_view import RowsView, sort_bindings

BAR = 24  # cells of a whole path's bar
COMPACT_BELOW = 28  # rows of the view under which the breakdown is one line (80x24 keeps 12 rows of groups)


def breakdown_renderable(p: CriticalPath, width: int = BAR, compact: bool = False) -> Group:
    """The path's length and what bounds it, then a bar per class, as `tracetui critical` prints them; compact (a
    short terminal), the classes on one line under it, so the path's groups keep their rows."""
    said = C.status(p)
    head = Text(said[:1].upper() + said[1:], style="bold #e5c07b")
    if compact:
        return Group(head, Text(C.breakdown_line(p), style="#ff5f87", overflow="ellipsis", no_wrap=True))
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(no_wrap=True, style="#ff5f87")
    for title, time, share in C.breakdown_rows(p):
        grid.add_row(title, time, f"{share:.0%}", C.bar(share, width))
    hint = Text("b on the timeline marks another step's path", style="dim")
    return Group(head, grid, hint)


class CriticalPathTable(RowsView):
    """The path's groups (Enter: a group's stretches in time order; Enter again: that event on the timeline)."""

    HELP_NAME = "Critical path"
    SORTS = P.GROUP_SORTS
    DEFAULT_SORT = "time"
    OTHER_COLUMNS_WIDTH = 50
    BINDINGS = [
        Binding("enter", "open_group", "Stretches", tooltip="The group's stretches, in time order", id="path.open"),
        Binding("enter", "jump", "Timeline", tooltip="The stretch's event on the timeline", id="path.jump"),
        Binding("escape", "clear_filter", "Clear the filter", id="path.clear_filter"),
        Binding("escape,backspace", "back", "Back to the groups", id="path.back"),
        *sort_bindings(P.GROUP_SORTS, "path"),
    ]

    def __init__(self, path: CriticalPath, trace: TraceColumns, **kwargs) -> None:
        self.path, self.trace = path, trace
        self.groups: list[PathGroup] | None = None  # None: still being grouped
        self.group: PathGroup | None = None  # the group whose stretches are shown
        self.failed = ""
        self.folded = False  # frames hidden: their stretches went to the ops they ran under
        self._group_sort = self.DEFAULT_SORT
        super().__init__(**kwargs)

    def columns(self) -> list[Column]:
        return P.path_columns(self.trace) if self.group is not None else P.group_columns()

    def context(self) -> CriticalPath:
        return self.path

    def source_rows(self) -> list:
        if self.group is not None:
            return self.group.items
        return self.groups or []

    def set_groups(self, path: CriticalPath, groups: list[PathGroup]) -> None:
        """The path's groups are ready (or another path's: the step b marked)."""
        self.path, self.groups, self.group, self.failed = path, groups, None, ""
        self.sort_key = self._group_sort
        self.refill()

    def set_failed(self, line: str) -> None:
        self.failed = line
        self._status()

    def status(self) -> str:
        if self.failed:
            return f"Could not group the path: {self.failed}"
        if self.groups is None:
            return f"grouping the path's {plural(len(self.path.items), 'stretch', 'stretches')} …"
        if self.group is None:
            frames = " · frames hidden: their time is their op's (p shows them)" if self.folded else ""
            return f"{super().status()}{frames}"
        what = P.group_label(self.group)
        order = "in time order" if not self.sort_key else f"sorted by {self._sort_words()}"
        return f"{what}: {plural(len(self.shown), 'stretch', 'stretches')}, {order} · {P.at_note(self.path)}"

    def rows_said(self) -> str:
        return f"{plural(len(self.shown), 'group')} of {plural(len(self.path.items), 'stretch', 'stretches')}"

    def name_room(self, width: int) -> int:
        """Names that read (a frame's file and function, a step's own time): the kind gives way first."""
        return max(32, width // 3)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "back":
            return self.group is not None and self.pattern is None
        if action in ("open_group", "jump"):  # Enter: a group's stretches, then a stretch's event
            return (self.group is None) == (action == "open_group")
        if action == "sort" and self.group is not None:
            return parameters[0] == "time"  # a group's stretches: time order, or the longest first
        return super().check_action(action, parameters)

    def action_sort(self, key: str) -> None:
        """As every table sorts; in a group's stretches a third press of o gives back their time order (the longest
        first, the shortest first, then time order)."""
        if self.group is not None and key == self.sort_key and self.reversed:
            self.sort_key, self.reversed = "", False
            self.reorder()
            return
        if self.group is None:
            self._group_sort = key
        super().action_sort(key)

    def action_jump(self) -> None:
        row = self.current()
        if row is None:
            return
        if isinstance(row, PathGroup):
            self.open_group(row)
            return
        if row.event < 0:
            self.notify(f"{row.name}: no event of the trace to go to", timeout=2)
            return
        self.post_message(CriticalView.Jump(row.event))

    def action_open_group(self) -> None:
        self.action_jump()

    def open_group(self, group: PathGroup) -> None:
        """Show a group's stretches, in time order."""
        self.group, self.sort_key = group, ""
        self.refill()
        self.refresh_bindings()
        self.table_widget.move_cursor(0)

    def action_back(self) -> None:
        """From a group's stretches back to the groups, the cursor on that group."""
        group, self.group = self.group, None
        self.sort_key = self._group_sort
        self.refill()
        self.refresh_bindings()
        k = next((k for k, g in enumerate(self.shown) if g is group), None)
        if k is not None:
            self.table_widget.move_cursor(k)


class Grouped(Message):
    """A path's groups are ready (posted by the grouping worker); groups None: it failed (error says why)."""

    def __init__(self, path: CriticalPath, groups: list[PathGroup] | None, error: str = "") -> None:
        super().__init__()
        self.path, self.groups, self.error = path, groups, error


class CriticalView(ReportsFailedWorkers, Vertical):
    """The breakdown above, the path's groups below (grouped in a worker: the table says so meanwhile)."""

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

    def __init__(self, path: CriticalPath, trace: TraceColumns, frameless: Analysis | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.path, self.trace, self.frameless = path, trace, frameless

    def compose(self) -> ComposeResult:
        yield Static(breakdown_renderable(self.path), id="critical-breakdown")
        yield CriticalPathTable(self.path, self.trace)

    @property
    def compact(self) -> bool:
        """Too short for a bar per class and the table's rows (80x24): the classes in one line."""
        return 0 < self.size.height < COMPACT_BELOW

    def on_resize(self) -> None:
        self.query_one("#critical-breakdown", Static).update(breakdown_renderable(self.path, compact=self.compact))

    def on_mount(self) -> None:
        self.group_path(self.path)

    def set_path(self, path: CriticalPath) -> None:
        """Show another path (the step b marked on the timeline)."""
        self.path = path
        self.query_one("#critical-breakdown", Static).update(breakdown_renderable(path, compact=self.compact))
        self.group_path(path)

    @work(thread=True, exclusive=True, group="path-groups", description="Grouping the path", exit_on_error=False)
    def group_path(self, path: CriticalPath) -> None:
        try:
            groups = path_groups(self.trace, path, self.frameless)
        except Exception as exc:  # noqa: BLE001 - said in this pane, the app goes on
            faults.record("grouping the critical path", exc)
            pace.post(self, Grouped(path, None, faults.one_line(exc)))
            return
        pace.post(self, Grouped(path, groups))

    def on_grouped(self, message: Grouped) -> None:
        if message.path is not self.path:
            return  # another path was asked for since
        table = self.query_one(CriticalPathTable)
        if message.groups is None:
            table.set_failed(message.error)
        else:
            table.folded = self.frameless is not None
            table.set_groups(message.path, message.groups)
