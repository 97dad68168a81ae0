"""A filterable, sortable table over model rows, laid out by a tui.tables definition; it only displays."""

from __future__ import annotations

import re
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from ..tables.base import Column, SortKey, sort_rows


class RowsView(Vertical):
    """Subclasses set SORTS and BINDINGS (one sort key per column) and give columns(), context(), source_rows()."""

    SORTS: dict[str, SortKey] = {}
    DEFAULT_SORT = ""
    NAME_MAX = 55
    FRAMES = False  # the rows are Python frames
    OTHER_COLUMNS_WIDTH = 60  # room kept for the numbers before the name is shortened
    BINDINGS = [
        Binding("/", "filter", "Filter", id="table.filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="table.clear_filter"),
        Binding("enter", "jump", "Show on timeline", id="table.jump"),
    ]

    class Jump(Message):
        """The user asked to see the occurrences of a row's name."""

        def __init__(self, name: str, frame: bool = False) -> None:
            super().__init__()
            self.name, self.frame = name, frame  # frame: a Python frame's calls (shown only with frames)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.name_width = 55
        self.sort_key = self.DEFAULT_SORT
        self.pattern: re.Pattern | None = None
        self.shown: list = []
        self.filled = False  # filled on the first resize, once the name column's width is known

    def compose(self) -> ComposeResult:
        yield Static("", classes="table-status")
        yield Input(placeholder="filter by name (regular expression), Enter to apply", classes="filter")
        yield DataTable(cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one(Input).display = False

    def source_rows(self) -> list:
        raise NotImplementedError

    def columns(self) -> list[Column]:
        raise NotImplementedError

    def context(self) -> Any:
        """What the columns need besides their row (the table, for totals)."""
        return None

    def on_resize(self, event) -> None:
        width = max(20, min(self.NAME_MAX, event.size.width - self.OTHER_COLUMNS_WIDTH))
        if width != self.name_width or not self.filled:
            self.name_width = width
            if self.is_mounted and self.query(DataTable):
                self.refill()

    def status(self) -> str:
        keys = ", ".join(
            f"{b.key} {b.description.removeprefix('Sort by ')}"
            for b in self.BINDINGS
            if isinstance(b, Binding) and b.action.startswith("sort(")
        )
        filt = f" · filter /{self.pattern.pattern}/" if self.pattern else ""
        return f"{len(self.shown)} rows · sorted by {self.sort_key}{filt} · sort keys: {keys}"

    def refill(self) -> None:
        rows = self.source_rows()
        if self.pattern is not None:
            rows = [r for r in rows if self.pattern.search(r.name)]
        self.shown = sort_rows(rows, self.SORTS, self.sort_key) if self.sort_key else rows
        table = self.query_one(DataTable)
        table.clear(columns=True)  # column widths follow the current name width
        columns, context = self.columns(), self.context()
        for col in columns:
            table.add_column(col.header, key=col.header)
        for r in self.shown:
            table.add_row(*(Text(col.text(r, context, self.name_width)) for col in columns))  # "[memory]" is no markup
        self.query_one(".table-status", Static).update(self.status())
        self.filled = True

    def action_sort(self, key: str) -> None:
        self.sort_key = key
        self.refill()

    def action_filter(self) -> None:
        box = self.query_one(Input)
        box.display = True
        box.focus()

    def action_clear_filter(self) -> None:
        self.pattern = None
        box = self.query_one(Input)
        box.value, box.display = "", False
        self.refill()
        self.query_one(DataTable).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            self.pattern = re.compile(event.value, re.IGNORECASE) if event.value else None
        except re.error as exc:
            self.notify(f"bad regular expression: {exc}", severity="error")
            return
        self.query_one(Input).display = bool(event.value)
        self.refill()
        self.query_one(DataTable).focus()

    def current(self):
        table = self.query_one(DataTable)
        if not self.shown or table.cursor_row is None or table.cursor_row >= len(self.shown):
            return None
        return self.shown[table.cursor_row]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_jump()

    def action_jump(self) -> None:
        row = self.current()
        if row is not None:
            self.post_message(self.Jump(row.name, self.FRAMES))
