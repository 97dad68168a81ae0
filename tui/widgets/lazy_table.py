"""A table drawn with the Line API from its source: only the visible rows are ever formatted.

Sorting and filtering hand the table a new order (an index into the source's rows); nothing is
rebuilt. The first column (the name) stays in place while the others scroll sideways.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..text.sanitize import crop_cells, ljust_cells, rjust_cells, visible

SAMPLE_ROWS = 200  # column widths are measured on the header and this many rows of the current order
CACHE_ROWS = 512


class Source(Protocol):
    """What the table shows: headers, how many rows, and the text of one cell."""

    @property
    def headers(self) -> Sequence[str]: ...

    def __len__(self) -> int: ...
    def cell(self, row: int, col: int) -> str: ...
    def numeric(self, col: int) -> bool: ...


class TextColumns:
    """A source over rows that are already text (the compare screen's tables); widths: the columns' widths where
    the maker knows better than the table's measure of its first rows (the help's keys, its sections' names aside)."""

    def __init__(
        self,
        headers: Sequence[str],
        rows: Sequence[Sequence[str]],
        right_from: int = 1,
        widths: Sequence[int] | None = None,
    ) -> None:
        self.headers, self.rows, self.right_from = list(headers), rows, right_from
        self.widths = list(widths) if widths is not None else None

    def __len__(self) -> int:
        return len(self.rows)

    def cell(self, row: int, col: int) -> str:
        return str(self.rows[row][col])

    def numeric(self, col: int) -> bool:
        return col >= self.right_from


def frozen_room(width: int) -> int:
    """The most the name column takes when every column is shown in full: half the width, 20 at least."""
    return max(width // 2, 20)


class LazyTable(ScrollView, can_focus=True):
    """Rows of a Source in a given order, with a cursor; Enter posts RowSelected."""

    HELP_NAME = "Moving in a table"
    COMPONENT_CLASSES = {
        "lazy-table--header",
        "lazy-table--cursor",
        "lazy-table--even",
        "lazy-table--odd",
        "lazy-table--frozen",
    }
    DEFAULT_CSS = """
    LazyTable { height: 1fr; }
    LazyTable > .lazy-table--header { background: $panel; color: $text; text-style: bold; }
    LazyTable > .lazy-table--cursor { background: $accent; color: $text; }
    LazyTable > .lazy-table--even { background: $surface; }
    LazyTable > .lazy-table--odd { background: $surface-lighten-1; }
    LazyTable > .lazy-table--frozen { text-style: bold; }
    """
    DEFERS = ("enter",)  # Enter posts the row; the help tells what the view around it does with it
    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False, id="lazy_table.up"),
        Binding("down", "move(1)", "Down", show=False, id="lazy_table.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="lazy_table.page_up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="lazy_table.page_down"),
        Binding("home", "edge(0)", "First row", show=False, id="lazy_table.first"),
        Binding("end", "edge(1)", "Last row", show=False, id="lazy_table.last"),
        Binding("left", "side(-1)", "Scroll left", show=False, id="lazy_table.left"),
        Binding("right", "side(1)", "Scroll right", show=False, id="lazy_table.right"),
        Binding("enter", "select", "Select row", show=False, id="lazy_table.select"),
    ]

    class RowSelected(Message):
        def __init__(self, table: LazyTable, position: int) -> None:
            super().__init__()
            self.table, self.position = table, position

        @property
        def control(self) -> LazyTable:
            return self.table

    class CursorMoved(Message):
        def __init__(self, table: LazyTable, position: int) -> None:
            super().__init__()
            self.table, self.position = table, position

    def __init__(self, source: Source, order: Sequence[int] | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.cursor_row = 0
        self.set_source(source, order)

    # ---- data down -------------------------------------------------------------------------

    def set_source(self, source: Source, order: Sequence[int] | None = None) -> None:
        """Show another source (other columns, another name width), in this order."""
        self.source = source
        self._cells: dict[tuple[int, int], str] = {}
        self.set_order(range(len(source)) if order is None else order)

    def set_order(self, order: Sequence[int]) -> None:
        """Show the source's rows in this order (a sort or a filter): an index, nothing else is rebuilt."""
        self.order = list(order)
        self.cursor_row = min(self.cursor_row, max(len(self.order) - 1, 0))
        self.widths = self._measure()
        self.sep = getattr(self.source, "sep", 2)
        self.virtual_size = Size(sum(self.widths) + self.sep * max(len(self.widths) - 1, 0), len(self.order) + 1)
        if self.scroll_offset.x > self._max_side():
            self.scroll_to(x=self._max_side(), animate=False)
        self.refresh()

    @property
    def row_count(self) -> int:
        return len(self.order)

    def _text(self, row: int, col: int) -> str:
        key = (row, col)
        text = self._cells.get(key)
        if text is None:
            if len(self._cells) > CACHE_ROWS * max(len(self.source.headers), 1):
                self._cells.clear()
            text = self._cells[key] = visible(self.source.cell(row, col))  # a name is data: widths are of this
        return text

    def _measure(self) -> list[int]:
        """Each column as wide as the source says (a fitted table knows), else its header or the widest of the
        first rows shown."""
        known = getattr(self.source, "widths", None)
        if known is not None:
            return list(known)
        heads = self.source.headers
        widths = [cell_len(visible(h)) for h in heads]
        for row in self.order[:SAMPLE_ROWS]:
            for c in range(len(heads)):
                widths[c] = max(widths[c], cell_len(self._text(row, c)))
        return widths

    # ---- drawing ---------------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(name, partial=True)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if y == 0:
            return self._line([visible(h) for h in self.source.headers], self._style("lazy-table--header"), width)
        pos = self.scroll_offset.y + y - 1
        if pos >= len(self.order):
            return Strip.blank(width, self.rich_style)
        row = self.order[pos]
        cells = [self._text(row, c) for c in range(len(self.source.headers))]
        if pos == self.cursor_row:
            base = self._style("lazy-table--cursor")
        else:
            base = self._style("lazy-table--even" if pos % 2 == 0 else "lazy-table--odd")
        return self._line(cells, base, width)

    def _line(self, cells: list[str], base: Style, width: int) -> Strip:
        if not cells:
            return Strip.blank(width, base)
        widths = [self._frozen_width(width), *self.widths[1:]]
        texts = [self._pad(t, w, self.source.numeric(c)) for c, (t, w) in enumerate(zip(cells, widths, strict=True))]
        gap = " " * self.sep
        frozen = Segment(texts[0] + gap, base + self._style("lazy-table--frozen"))
        rest = Strip([Segment(gap.join(texts[1:]), base)])
        room = max(width - frozen.cell_length, 0)
        x = min(self.scroll_offset.x, self._max_side())
        moved = rest.crop(x, x + room)
        pad = room - moved.cell_length
        segments = [frozen, *moved] + ([Segment(" " * pad, base)] if pad > 0 else [])
        return Strip(segments).crop(0, width)

    @staticmethod
    def _pad(text: str, width: int, right: bool) -> str:
        if cell_len(text) > width:
            return ljust_cells(crop_cells(text, width), width)  # cut by cells: a wide name keeps the columns in line
        return rjust_cells(text, width) if right else ljust_cells(text, width)

    # ---- the cursor --------------------------------------------------------------------------

    def move_cursor(self, position: int) -> None:
        if not self.order:
            return
        self.cursor_row = max(0, min(position, len(self.order) - 1))
        body = max(self.scrollable_content_region.height - 1, 1)
        top = self.scroll_offset.y
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + body:
            self.scroll_to(y=self.cursor_row - body + 1, animate=False)
        self.refresh()
        self.post_message(self.CursorMoved(self, self.cursor_row))

    def action_move(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step)

    def action_page(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step * max(self.scrollable_content_region.height - 2, 1))

    def action_edge(self, end: int) -> None:
        self.move_cursor(len(self.order) - 1 if end else 0)

    def _frozen_width(self, width: int) -> int:
        """The name column, kept in place: at most half the width when every column is shown in full."""
        return min(self.widths[0], frozen_room(width)) if self.widths else 0

    def _max_side(self) -> int:
        """How far the columns after the name can scroll: only as far as there is more to see."""
        width = self.scrollable_content_region.width
        rest = sum(self.widths[1:]) + self.sep * max(len(self.widths) - 2, 0)
        return max(rest - (width - self._frozen_width(width) - self.sep), 0)

    def action_side(self, step: int) -> None:
        self.scroll_to(x=min(max(self.scroll_offset.x + 8 * step, 0), self._max_side()), animate=False)

    def action_select(self) -> None:
        if self.order:
            self.post_message(self.RowSelected(self, self.cursor_row))

    def on_click(self, event: events.Click) -> None:
        if event.y >= 1:
            self.move_cursor(self.scroll_offset.y + event.y - 1)
            if event.chain >= 2:
                self.action_select()
