"""The snapshot's tables in the viewer (those of `tracetui memory SNAPSHOT`): by frame at the peak, never freed,
the streams and the OOMs. Enter on a frame's row draws its allocations in gold on the timeline."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.message import Message
from textual.widgets import DataTable, Static

from ..model.snapshot.report import DeviceReport, FrameRow
from ..tables import snapshot as S
from ..tables.base import Column
from .rows_view import fitted_table
from .snapshot_timeline import frame_color

MOST_ROWS = 500  # fitted on the UI thread when the width changes: a few ms
SWATCH = 4  # the colour column: two cells and its padding
CELL_PAD = 1  # DataTable's padding on each side of a cell
SCROLLBAR = 2  # room kept for the table's vertical scrollbar


class FrameTable(DataTable):
    """One table of frames; Enter (or a click) picks a row's frame."""

    HELP_NAME = "Frames"
    BINDINGS = [Binding("enter", "select_cursor", "Show in gold on the timeline", id="frames.show")]

    def __init__(self, rows: list[FrameRow], columns: list[Column], device: DeviceReport, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.frame_rows = rows[:MOST_ROWS]
        self.columns_def = columns
        self.device = device
        self.filled_width = 0

    def on_mount(self) -> None:
        self._fill(self.size.width or self.app.size.width)

    def on_resize(self) -> None:
        if self.size.width and self.size.width != self.filled_width:
            self._fill(self.size.width)

    def _fill(self, width: int) -> None:
        """The columns that fit this width (the Frame cut in the middle, the Op left out first), numbers to the
        right; rebuilt when the width changes, the cursor kept on its row."""
        self.filled_width = width
        # fit() counts a gap of 2 or 3 between n columns, the table 2 * CELL_PAD around each: room for the gaps
        # of 2 (a squeezed table) leaves every column on screen
        room = max(width - SWATCH - SCROLLBAR - 2 * CELL_PAD, 24)
        fitted = fitted_table(self.frame_rows, self.columns_def, self.device, room)
        row = self.cursor_row
        self.clear(columns=True)
        self.add_column("", key="colour")
        for header, left in zip(fitted.headers, fitted.lefts, strict=True):
            self.add_column(Text(header, justify="left" if left else "right"), key=header)
        for r, cells in zip(self.frame_rows, fitted.cells, strict=True):
            swatch = Text("██", style=Style(color=frame_color(r.frame)))  # the frame's colour on the timeline
            texts = [Text(c, justify="left" if left else "right") for c, left in zip(cells, fitted.lefts, strict=True)]
            self.add_row(swatch, *texts)
        if self.row_count:
            self.move_cursor(row=min(row, self.row_count - 1))
        self.post_message(self.Fitted(self, fitted.dropped))

    class Fitted(Message):
        """The table was fitted to its width, leaving out these columns."""

        def __init__(self, table: FrameTable, dropped: list[str]) -> None:
            super().__init__()
            self.table, self.dropped = table, dropped


class SnapshotFrames(VerticalScroll):
    """The tables of one device; attributes down (its report), messages up (a frame picked)."""

    DEFAULT_CSS = """
    SnapshotFrames { height: 1fr; }
    SnapshotFrames > .frames-title { color: $text-muted; padding: 1 0 0 1; }
    SnapshotFrames > FrameTable { height: auto; max-height: 20; }
    SnapshotFrames > .frames-left-out { color: $text-muted; padding: 0 0 0 1; display: none; }
    """

    class Shown(Message):
        """A frame's row has the cursor (kept: in the never-freed table)."""

        def __init__(self, row: FrameRow, kept: bool) -> None:
            super().__init__()
            self.row, self.kept = row, kept

    class Picked(Message):
        def __init__(self, frame: str) -> None:
            super().__init__()
            self.frame = frame

    def __init__(self, d: DeviceReport, **kwargs) -> None:
        super().__init__(**kwargs)
        self.device = d

    def compose(self) -> ComposeResult:
        d = self.device
        at = f"at the peak ({S.when(d.peak.time_ns, d.timed)})" if d.peak else "now (no history)"
        yield Static(f"Alive {at}, by the frame that allocated them", classes="frames-title", markup=False)
        yield FrameTable(d.by_frame, S.FRAME_COLUMNS, d, id="frames-peak")
        yield Static("", id="frames-peak-left-out", classes="frames-left-out", markup=False)
        if d.never_freed:
            yield Static("Allocated in the history and never freed (leak candidates)", classes="frames-title")
            yield FrameTable(d.never_freed, S.KEPT_COLUMNS, d, id="frames-kept")
            yield Static("", id="frames-kept-left-out", classes="frames-left-out", markup=False)
        for line in S.device_reading(d):
            yield Static(line, classes="frames-title", markup=False)

    def on_frame_table_fitted(self, event: FrameTable.Fitted) -> None:
        event.stop()
        note = self.query_one(f"#{event.table.id}-left-out", Static)
        them = "it" if len(event.dropped) == 1 else "them"
        note.update(f"Left out to fit: {', '.join(event.dropped)} (a wider terminal shows {them})")
        note.display = bool(event.dropped)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Keep the cursor's row on screen: the tables are as tall as their rows, so this pane scrolls, not them."""
        table = event.data_table
        if not isinstance(table, FrameTable):
            return
        top = table.virtual_region.y
        row = top + table.header_height + event.cursor_row - round(table.scroll_y)
        start = max(top - 2, 0) if event.cursor_row == 0 else row  # the first row shows its title and header
        self.scroll_to_region(Region(0, start, max(self.size.width, 1), row - start + 1), animate=False)
        self._shown(table)

    def on_descendant_focus(self, event) -> None:
        if isinstance(event.widget, FrameTable):
            self._shown(event.widget)

    def _shown(self, table: FrameTable) -> None:
        if 0 <= table.cursor_row < len(table.frame_rows):
            self.post_message(self.Shown(table.frame_rows[table.cursor_row], table.id == "frames-kept"))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        table = event.data_table
        if isinstance(table, FrameTable) and event.cursor_row < len(table.frame_rows):
            event.stop()
            self.post_message(self.Picked(table.frame_rows[event.cursor_row].frame))
