"""A filterable, sortable table over model rows, laid out by a tui.tables definition; it only displays.

The rows are drawn lazily (LazyTable): a sort or a filter re-orders an index, and only the rows on
screen are formatted until the table is fitted to its width. Fitting (tui.tables.base.fit: the
columns that fit by priority, names cut in the middle so rows stay apart) runs in a worker on the
first show and on each resize; what it left out is said above the table, and e shows every column.
"""

from __future__ import annotations

from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static

from ..appkit import pace
from ..model.pattern import BadPattern, Matcher, compile_name_pattern
from ..tables.base import SORT_LETTERS, Column, Fitted, SortKey, fit, fit_readable
from ..text.fmt import plural
from ..text.sanitize import cell_len, visible_lines
from .failures import ReportsFailedWorkers
from .lazy_table import LazyTable, frozen_room

FIT_HERE_ROWS = 300  # fitting a table this small takes a few ms on the UI thread; larger ones fit in a worker


def fitted_table(
    rows: list, columns: list[Column], context: Any, width: int, sort: str = "", every: int = 0, room: int = 0
) -> Fitted:
    """The table fitted to width as the text reports fit it (tables.base.fit_readable). width 0: every column in
    full, the names cut in the middle (rows told apart) to every cells, the room the table keeps for them (0: whole).
    """
    if width <= 0:
        return fit(columns, rows, context, 0, name_width=every)
    return fit_readable(columns, rows, context, width, sort, room)


SORT = Binding.Group("sort")


def sort_bindings(sorts: dict[str, SortKey], prefix: str) -> list[Binding | tuple[str, str] | tuple[str, str, str]]:
    """A table's sort keys, each with the letter and words its meaning has in every table (SORT_LETTERS), in the
    vocabulary's order; the binding ids (`ops.sort_self_cpu`) are what a keymap file remaps."""
    order = list(SORT_LETTERS)
    keyed = sorted(((k, s) for k, s in sorts.items() if s.means), key=lambda ks: order.index(ks[1].means))
    return [
        Binding(
            SORT_LETTERS[s.means].letter,
            f"sort('{k}')",
            f"Sort by {SORT_LETTERS[s.means].words}",
            id=f"{prefix}.sort_{k}",
            group=SORT,
        )
        for k, s in keyed
    ]


KEYS_IN_STATUS = 120  # the sort keys are spelled out in the status from this width (the key bar lists their letters)


class FittedSource:
    """The cells of a table fitted to a width: computed once in a worker, drawn by position."""

    def __init__(self, fitted: Fitted) -> None:
        self.fitted, self.headers = fitted, fitted.headers
        self.lefts, self.sep = fitted.lefts, fitted.sep
        self.widths = [
            max([cell_len(h)] + [cell_len(row[k]) for row in fitted.cells]) for k, h in enumerate(self.headers)
        ]

    def __len__(self) -> int:
        return len(self.fitted.cells)

    def cell(self, row: int, col: int) -> str:
        return self.fitted.cells[row][col]

    def numeric(self, col: int) -> bool:
        return not self.lefts[col]


class TableFitted(Message):
    """A table's layout for a width is ready (posted by the fitting worker)."""

    def __init__(self, fitted: Fitted, width: tuple, rows: list) -> None:
        super().__init__()
        self.fitted, self.width, self.rows = fitted, width, rows  # width: the layout's key (RowsView._refit)


class RowSource:
    """The cells of model rows through a table's columns, at a name width."""

    def __init__(self, rows: list, columns: list[Column], context: Any, name_width: int) -> None:
        self.rows, self.columns, self.context, self.name_width = rows, columns, context, name_width
        self.headers = [c.header for c in columns]

    def __len__(self) -> int:
        return len(self.rows)

    def cell(self, row: int, col: int) -> str:
        return self.columns[col].text(self.rows[row], self.context, self.name_width)

    def numeric(self, col: int) -> bool:
        return col > 0


def sorted_order(rows: list, sorts: dict[str, SortKey], key: str, flip: bool = False) -> list[int]:
    """Positions of rows ordered by a sort key (descending unless the key says not; flip: the other way round); rows
    without a value last either way."""
    if not key:
        return list(range(len(rows)))[:: -1 if flip else 1]
    spec = sorts[key]

    def order(k: int):
        value = spec.value(rows[k])
        if value is None:
            return (True, 0)
        return (False, -value if spec.reverse and not isinstance(value, str) else value)

    ranked = sorted(range(len(rows)), key=order)
    if not flip:
        return ranked
    valued = [k for k in ranked if spec.value(rows[k]) is not None]
    return valued[::-1] + [k for k in ranked if spec.value(rows[k]) is None]


class RowsView(ReportsFailedWorkers, Vertical):
    """Subclasses set SORTS and BINDINGS (one sort key per column) and give columns(), context(), source_rows()."""

    HELP_NAME = "Tables"

    SORTS: dict[str, SortKey] = {}
    DEFAULT_SORT = ""
    NAME_MAX = 55
    FRAMES = False  # the rows are Python frames
    OTHER_COLUMNS_WIDTH = 60  # room kept for the numbers before the name is shortened
    BINDINGS = [
        Binding("enter", "jump", "Timeline", tooltip="Show the row's calls on the timeline", id="table.jump"),
        Binding("/", "filter", "Filter", tooltip="Filter the rows by name (a regular expression)", id="table.filter"),
        Binding("escape", "clear_filter", "Clear the filter", id="table.clear_filter"),
        Binding(
            "e",
            "every_column",
            "Every column",
            tooltip="Every column, in full (← → scroll) / fit the width",
            id="table.every_column",
        ),
    ]

    class Jump(Message):
        """The user asked to see the occurrences of a row's name."""

        def __init__(self, name: str, frame: bool = False, shapes: str | None = None) -> None:
            super().__init__()
            self.name, self.frame = name, frame  # frame: a Python frame's calls (shown only with frames)
            self.shapes = shapes  # a row of one op at these input shapes: only those calls

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.name_width = 55
        self.sort_key = self.DEFAULT_SORT
        self.reversed = False  # the sort key pressed again: the other way round
        self.pattern: Matcher | None = None
        self.rows: list = []
        self.shown: list = []
        self.every_column = False
        self.fitted: Fitted | None = None
        self._fit_width: tuple = ()  # (width, sort key, name room with every column) of the layout asked for

    def compose(self) -> ComposeResult:
        yield Static("", classes="table-status", markup=False)
        yield Input(placeholder="filter by name (regular expression), Enter to apply", classes="filter")
        self.rows = self.source_rows()
        yield LazyTable(self._source(), self._order())

    def on_mount(self) -> None:
        self.query_one(Input).display = False
        self.shown = [self.rows[k] for k in self.table_widget.order]
        self._status()

    @property
    def table_widget(self) -> LazyTable:
        return self.query_one(LazyTable)

    def source_rows(self) -> list:
        raise NotImplementedError

    def columns(self) -> list[Column]:
        raise NotImplementedError

    def context(self) -> Any:
        """What the columns need besides their row (the table, for totals)."""
        return None

    def _source(self) -> RowSource:
        return RowSource(self.rows, self.columns(), self.context(), self.name_width)

    def _order(self) -> list[int]:
        order = sorted_order(self.rows, self.SORTS, self.sort_key, self.reversed)
        if self.pattern is not None:
            order = [k for k in order if self.pattern.search(self.rows[k].name)]
        return order

    def on_resize(self, event) -> None:
        self.name_width = max(20, min(self.NAME_MAX, event.size.width - self.OTHER_COLUMNS_WIDTH))
        self._refit()

    def _refit(self) -> None:
        fitted = max(self.size.width - 2, 20)  # the cursor's margin and the scrollbar
        every = frozen_room(self.size.width - 2) if self.every_column else 0
        key = (0 if self.every_column else fitted, self.sort_key, every, self.name_room(fitted))
        if key != self._fit_width and self.is_mounted:
            self._fit_width = key
            if len(self.rows) <= FIT_HERE_ROWS:  # a few ms: no worker, the table is fitted before it is drawn
                try:
                    table = fitted_table(self.rows, self.columns(), self.context(), *key)
                except Exception as exc:  # as a failed fitting worker would: one line, the app goes on
                    self.report_failure("fitting the table to the width", exc)
                    return
                self.on_table_fitted(TableFitted(table, key, self.rows))
            else:
                self.fit_table(self.rows, self.columns(), self.context(), key)

    @work(thread=True, exclusive=True, group="fit", description="Fitting the table to the width", exit_on_error=False)
    def fit_table(self, rows: list, columns: list[Column], context: Any, key: tuple) -> None:
        pace.post(self, TableFitted(fitted_table(rows, columns, context, *key), key, rows))

    def on_table_fitted(self, message: TableFitted) -> None:
        message.stop()
        if message.rows is not self.rows or message.width != self._fit_width:
            return  # the rows or the width changed since: a newer layout is on its way
        self.fitted = message.fitted
        self.table_widget.set_source(FittedSource(message.fitted), self.table_widget.order)
        self._status()

    def name_room(self, width: int) -> int:
        """The narrowest the name column gets before other columns give way (0: a third of the width)."""
        return 0

    def action_every_column(self) -> None:
        self.every_column = not self.every_column
        self.refresh_bindings()
        self._refit()

    def keybar_state(self) -> list[tuple[str, str]]:
        """The filter and the every-column mode, for the key bar."""
        out = [("/", f"filter /{self.pattern.pattern}/")] if self.pattern is not None else []
        return out + ([("e", "every column")] if self.every_column else [])

    def status(self) -> str:
        filt = f" · filter /{self.pattern.pattern}/ (Esc clears)" if self.pattern else ""
        left = ""
        if self.fitted is not None and self.fitted.constant:
            left += " · the same on every row: " + "; ".join(f"{h} {v or 'none'}" for h, v in self.fitted.constant)
        if self.fitted is not None and self.fitted.dropped:
            dropped = self.fitted.dropped[::-1]  # the last left out first: calls or a total, where a sort pins one
            named = ", ".join(dropped) if len(dropped) <= 4 else f"{', '.join(dropped[:3])} and {len(dropped) - 3} more"
            left += f" · not shown to fit: {named} (e shows every column)"
        elif self.every_column:
            left = " · every column (← → scroll; e fits the width)"
        keys = (
            f" · keys: {self._sort_keys()}" if self.size.width >= KEYS_IN_STATUS else ""
        )  # narrower: the key bar has the letters
        return f"{self.rows_said()} · sorted by {self._sort_words()}{filt}{keys}{left}"

    def rows_said(self) -> str:
        """How many rows are shown, in words (a table may say what its rows are)."""
        return plural(len(self.shown), "row")

    def _sort_keys(self) -> str:
        """The sort keys this table offers, each with its words ("c calls, s self CPU, ...")."""
        return ", ".join(
            f"{b.key} {b.description.removeprefix('Sort by ')}"
            for b, params in self._sort_bindings()
            if self.check_action("sort", params) is not False
        )

    def _sort_words(self) -> str:
        """The sort key as its key's words say it ("CUDA total", not device_total)."""
        for b, params in self._sort_bindings():
            if params == (self.sort_key,):
                return b.description.removeprefix("Sort by ") + (", reversed" if self.reversed else "")
        return (self.sort_key or "trace order") + (", reversed" if self.reversed else "")

    def _sort_bindings(self) -> list[tuple[Binding, tuple]]:
        """This table's sort keys: each binding of the sort action, with its parameters."""
        from textual.actions import parse

        out = []
        for b in self.BINDINGS:
            if isinstance(b, Binding):
                _, action, params = parse(b.action)
                if action == "sort":
                    out.append((b, params))
        return out

    def _status(self) -> None:
        self.query_one(".table-status", Static).update(visible_lines(self.status()))  # names: data; our lines kept

    def refill(self) -> None:
        """The rows changed (another table, frames shown or hidden): a new source, in the current order."""
        self.rows = self.source_rows()
        self.fitted, self._fit_width = None, ()
        self.reorder(new_source=True)
        self._refit()

    def reorder(self, new_source: bool = False) -> None:
        """Sort and filter: hand the table a new order (and, when the rows changed, a new source)."""
        order = self._order()
        table = self.table_widget
        if new_source:
            table.set_source(self._source(), order)
        else:
            table.set_order(order)
        self.shown = [self.rows[k] for k in order]
        self._status()

    def action_sort(self, key: str) -> None:
        """Sort by key; the same key again turns the order round (the status line says so)."""
        self.reversed = key == self.sort_key and not self.reversed
        self.sort_key = key
        self.reorder()
        self._refit()  # the sorted column is one the fitting keeps

    def action_filter(self) -> None:
        box = self.query_one(Input)
        box.display = True
        self.screen.set_focus(box)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "sort" and parameters and parameters[0] not in self.SORTS:
            return False  # a key this table has no column for here (the roofline's, on a trace without one)
        if action == "clear_filter":
            return self.pattern is not None or self.query_one(Input).display
        return True

    def action_clear_filter(self) -> None:
        self.pattern = None
        box = self.query_one(Input)
        box.value, box.display = "", False
        self.reorder()
        self.refresh_bindings()
        self.screen.set_focus(self.table_widget)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            self.pattern = compile_name_pattern(event.value) if event.value else None
        except BadPattern as exc:
            self.notify(f"bad regular expression: {exc}", severity="error")
            return
        self.query_one(Input).display = bool(event.value)
        self.reorder()
        self.refresh_bindings()
        self.screen.set_focus(self.table_widget)

    def current(self):
        table = self.table_widget
        if not self.shown or table.cursor_row >= len(self.shown):
            return None
        return self.shown[table.cursor_row]

    def on_lazy_table_row_selected(self, event: LazyTable.RowSelected) -> None:
        event.stop()
        self.action_jump()

    def action_jump(self) -> None:
        row = self.current()
        if row is not None:
            self.post_message(self.Jump(row.name, self.FRAMES))
