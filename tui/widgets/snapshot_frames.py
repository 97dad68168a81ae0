"""The snapshot's tables in the viewer (those of `tracetui memory SNAPSHOT`): by frame at the peak, never freed,
the streams and the OOMs. Enter on a frame's row draws its allocations in gold on the timeline."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from ..model.snapshot.report import DeviceReport, FrameRow
from ..tables import snapshot as S
from ..tables.base import Column
from .snapshot_timeline import frame_color

MOST_ROWS = 500


class FrameTable(DataTable):
    """One table of frames; Enter (or a click) picks a row's frame."""

    HELP_NAME = "Frames"
    BINDINGS = [Binding("enter", "select_cursor", "Show in gold on the timeline", id="frames.show")]

    def __init__(self, rows: list[FrameRow], columns: list[Column], device: DeviceReport, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.frame_rows = rows[:MOST_ROWS]
        self.columns_def = columns
        self.device = device

    def on_mount(self) -> None:
        self.add_column("", key="colour")
        for c in self.columns_def:
            self.add_column(c.header, key=c.header)
        for r in self.frame_rows:
            swatch = Text("██", style=Style(color=frame_color(r.frame)))  # the frame's colour on the timeline
            self.add_row(swatch, *[c.text(r, self.device, 200) for c in self.columns_def])


class SnapshotFrames(VerticalScroll):
    """The tables of one device; attributes down (its report), messages up (a frame picked)."""

    DEFAULT_CSS = """
    SnapshotFrames { height: 1fr; }
    SnapshotFrames > .frames-title { color: $text-muted; padding: 1 0 0 1; }
    SnapshotFrames > FrameTable { height: auto; max-height: 20; }
    """

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
        if d.never_freed:
            yield Static("Allocated in the history and never freed (leak candidates)", classes="frames-title")
            yield FrameTable(d.never_freed, S.KEPT_COLUMNS, d, id="frames-kept")
        for line in S.device_reading(d):
            yield Static(line, classes="frames-title", markup=False)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        table = event.data_table
        if isinstance(table, FrameTable) and event.cursor_row < len(table.frame_rows):
            event.stop()
            self.post_message(self.Picked(table.frame_rows[event.cursor_row].frame))
