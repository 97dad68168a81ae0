"""The snapshot screen (`tracetui open SNAPSHOT`): it loads the snapshot in a worker with a progress bar, then shows
the active-memory timeline (1), the segments at the timeline's cursor (2) and the frames (3), with a details panel
for the selected allocation or segment."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Center, Horizontal, Middle, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Label, ProgressBar, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from ..appkit.messages import LoadFailed
from ..appkit.palette import ListedCommands
from ..model.snapshot.frames import Namer
from ..model.snapshot.timeline import EMPTY, annotation_spans
from ..tables.snapshot_view import allocation_lines, frame_lines, segment_lines
from ..text.fmt import fmt_dur, fmt_memory, fmt_memory_gutter
from ..text.sanitize import cell_len, visible, visible_lines
from ..widgets.failures import ReportsFailedWorkers
from ..widgets.keybar import KeyBar
from ..widgets.snapshot_frames import FrameTable, SnapshotFrames
from ..widgets.snapshot_segments import SnapshotSegments
from ..widgets.snapshot_timeline import SnapshotTimeline
from .help import HelpScreen, help_sections

NO_TIMES = np.zeros(0, np.int64)
PROGRESS_EVERY_S = 0.1
WIDE = 120  # from this many columns the details sit beside the views, else under them
VIEWS = (("timeline", "1 Timeline"), ("segments", "2 Segments"), ("frames", "3 Frames"))
VIEW_ABOUT = {
    "timeline": "the live allocations stacked over time, coloured by the frame that made them",
    "segments": "the segments at the cursor's moment, as bars of their used and free blocks",
    "frames": "by frame at the peak, never freed, and what the figures mean",
}
LEGEND = (
    "The timeline stacks the allocations alive at each moment, the oldest at the bottom, each as tall as its bytes; "
    "its colour stands for the frame that allocated it (grey: allocated before the history). A column shows the "
    "moment of its time with the most bytes live, so a short peak never disappears. The segment view draws each "
    "segment the allocator holds as its blocks: colour for a used block, · for a free one. White is the selected "
    "allocation, gold the allocations of a frame picked in the Frames view (3)."
)


class SnapshotHelp(HelpScreen):
    """The help, with the snapshot's legend instead of the trace's."""

    def legend(self) -> str | None:
        return LEGEND


class Loaded:
    """What the worker made: the snapshot, each device's memory, the report, the namer."""

    def __init__(self, snap, memories, report, seconds: float) -> None:
        self.snap, self.memories, self.report, self.seconds = snap, memories, report, seconds
        self.namer = Namer(snap.stacks)


class SnapshotCommands(ListedCommands):
    """The command palette on a snapshot: its views, and the next GPU."""

    def _commands(self):
        screen = next((s for s in reversed(self.app.screen_stack) if isinstance(s, SnapshotScreen)), None)
        if screen is None or screen.loaded is None:
            return
        for name, title in VIEWS:
            key, words = title.split(" ", 1)
            yield f"Show the {words.lower()} ({key})", lambda n=name: screen.action_tab(n), VIEW_ABOUT[name]
        if len(screen.loaded.snap.devices) > 1:
            yield "Show the next GPU (g)", screen.action_device, "the snapshot's next device"


class SnapshotScreen(ReportsFailedWorkers, Screen):
    HELP_NAME = "Snapshot"
    COMMANDS = {SnapshotCommands}
    DEFAULT_CSS = """
    SnapshotScreen #snap-loading { height: 1fr; }
    SnapshotScreen #snap-head { height: auto; color: $text-muted; padding: 0 1; }
    SnapshotScreen #snap-body { height: 1fr; }
    SnapshotScreen #snap-details { width: 46; border-left: solid $panel-lighten-2; padding: 0 1; }
    SnapshotScreen.narrow #snap-body { layout: vertical; }
    SnapshotScreen.narrow #snap-details { width: 1fr; height: 7; border-left: none; border-top: solid $panel-lighten-2; }
    SnapshotScreen.big-details #snap-details { width: 2fr; }
    SnapshotScreen.narrow.big-details #snap-details { width: 1fr; height: 2fr; }
    SnapshotScreen TabbedContent { height: 1fr; width: 1fr; }
    SnapshotScreen TabPane { padding: 0; }
    """
    BINDINGS = [
        Binding("1", "tab('timeline')", "Timeline", id="snapshot_screen.timeline"),
        Binding("2", "tab('segments')", "Segments", id="snapshot_screen.segments"),
        Binding("3", "tab('frames')", "Frames", id="snapshot_screen.frames"),
        Binding(
            "c", "cpp", "C++ frames", tooltip="Show or hide the C++ frames in the details", id="snapshot_screen.cpp"
        ),
        Binding(
            "enter",
            "details",
            "More details",
            tooltip="Widen (or heighten) the details panel, or back",
            id="snapshot_screen.details",
        ),
        Binding("g", "device", "Next GPU", id="snapshot_screen.device"),
        Binding("question_mark", "help", "Help: keys and legend", key_display="?", id="snapshot_screen.help"),
    ]

    class Ready(Message):
        def __init__(self, loaded: Loaded) -> None:
            super().__init__()
            self.loaded = loaded

    class Progress(Message):
        def __init__(self, fraction: float) -> None:
            super().__init__()
            self.fraction = fraction

    def __init__(self, path: str, use_cache: bool = True) -> None:
        super().__init__()
        self.path, self.use_cache = path, use_cache
        self.loaded: Loaded | None = None
        self.device_index = 0
        self.cpp = False
        self.shown: tuple = ()  # what the details panel shows: ("alloc", row) or ("segment", state, k)

    # ---- loading ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        if self.loaded is None:
            with Middle(id="snap-loading"), Center():
                yield Label(f"Loading the snapshot {Path(self.path).name} …", id="snap-label")
                yield ProgressBar(total=100, show_eta=False, id="snap-progress")
            return
        yield Static(self._head(), id="snap-head", markup=False)
        with Horizontal(id="snap-body"):
            with TabbedContent(initial="timeline", id="snap-views"):
                yield from self._panes()
            with VerticalScroll(id="snap-details"):
                yield Static("Select an allocation (↑ ↓ on the timeline) or a segment.", id="snap-text", markup=False)
        yield KeyBar()

    def _panes(self):
        assert self.loaded is not None
        ld, d = self.loaded, self.device
        mem = ld.memories[d]
        history = ld.snap.histories.get(d)
        times = history.time_ns if history is not None else None
        report = self.report
        ooms = [r.entry for r in report.ooms]
        with TabPane(VIEWS[0][1], id="timeline"):
            timeline = SnapshotTimeline(mem, times if times is not None else NO_TIMES, ld.namer, ooms, ld.snap.timed)
            timeline.spans = annotation_spans(ld.snap.annotations, d) if ld.snap.timed else []
            yield timeline
        with TabPane(VIEWS[1][1], id="segments"):
            yield SnapshotSegments(ld.snap, mem, ld.namer)
        with TabPane(VIEWS[2][1], id="frames"):
            yield SnapshotFrames(report)

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="snapshot-load", description="Loading the snapshot", exit_on_error=False)
    def load(self) -> None:
        from ..model.snapshot import open_snapshot
        from ..model.snapshot.report import device_memory, report

        worker, last = get_current_worker(), [0.0]
        start = time.perf_counter()

        def progress(fraction: float) -> None:
            now = time.perf_counter()
            if worker.is_cancelled:
                raise _Cancelled
            if now - last[0] >= PROGRESS_EVERY_S or fraction >= 1:
                last[0] = now
                self.post_message(self.Progress(fraction))

        try:
            snap = open_snapshot(self.path, progress, cache=self.use_cache)
            memories = {d: device_memory(snap, d) for d in snap.devices}
            loaded = Loaded(snap, memories, report(snap, memories), time.perf_counter() - start)
        except _Cancelled:
            return
        except Exception as exc:  # noqa: BLE001 - said in one line by the command line, as a trace's would be
            self.app.post_message(LoadFailed(exc))
            return
        self.post_message(self.Ready(loaded))

    def on_snapshot_screen_progress(self, message: Progress) -> None:
        bars = self.query(ProgressBar)
        if bars:
            bars.first().update(progress=round(100 * message.fraction, 1))

    async def on_snapshot_screen_ready(self, message: Ready) -> None:
        self.loaded = message.loaded
        if not self.loaded.snap.devices:
            self.app.post_message(LoadFailed(ValueError(f"{self.path}: the snapshot holds no device")))
            return
        await self.recompose()
        self._fit(self.size.width)
        self.query_one(SnapshotTimeline).focus()
        self.app.sub_title = visible(f"{self.path} · loaded in {message.loaded.seconds:.2f}s")  # a file name: data
        if not self.loaded.snap.has_history:
            self.notify(
                "No history in this snapshot: segments only. Record one with "
                "torch.cuda.memory._record_memory_history() before the run.",
                title="note",
                timeout=12,
            )
            self.action_tab("segments")

    # ---- the device and the head -------------------------------------------------------------------

    @property
    def device(self) -> int:
        assert self.loaded is not None
        return self.loaded.snap.devices[self.device_index]

    @property
    def report(self):
        assert self.loaded is not None
        return next(d for d in self.loaded.report.devices if d.device == self.device)

    def _head(self, width: int = WIDE) -> str:
        """Two lines: the file and its history, then the device's figures (shorter on a narrow terminal)."""
        assert self.loaded is not None
        d, r = self.report, self.loaded.report
        history = f"{d.entries:,} entries" + (f" over {fmt_dur(d.span_ns)}" if d.timed else " (no times)")
        history = history if d.entries else "no history"
        first = f"{Path(self.path).name} · {d.name}" + (f" of {len(r.devices)}" if len(r.devices) > 1 else "")
        room = width - 2  # the padding
        shapes = ((fmt_memory, True), (fmt_memory_gutter, True), (fmt_memory_gutter, False))
        lines = [self._figures(d, mem, largest) for mem, largest in shapes]
        figures = next((line for line in lines if cell_len(line) <= room), lines[-1])
        return visible_lines(f"{first} · {history}\n{figures}")  # the file's and device's names: data

    @staticmethod
    def _figures(d, mem, largest: bool) -> str:
        """The device's figures with its sizes written by mem; largest: with the largest free block (it goes first
        where the line would not fit: the segments view says it too)."""
        figures = f"reserved {mem(d.reserved_bytes)} · allocated {mem(d.allocated_bytes)}"
        figures += f" · free {mem(d.segments.free_bytes)}"
        if largest:
            figures += f" (largest {mem(d.segments.largest_free_bytes)})"
        if d.peak:
            figures += f" · peak {mem(d.peak.requested_bytes)} at {fmt_dur(d.peak.time_ns) if d.timed else f'entry {d.peak.entry + 1:,}'}"
        if d.ooms:
            figures += f" · {len(d.ooms)} OOM (o)"
        return figures

    def on_resize(self, event) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        self.set_class(width < WIDE, "narrow")
        heads = self.query("#snap-head")
        if heads and self.loaded is not None:
            heads.first(Static).update(self._head(width))

    # ---- messages up, attributes down --------------------------------------------------------------

    def on_snapshot_timeline_selected(self, message: SnapshotTimeline.Selected) -> None:
        for seg in self.query(SnapshotSegments):
            seg.selected = message.alloc
            seg.refresh()
        self._details(("alloc", message.alloc) if message.alloc != EMPTY else ())

    def on_snapshot_timeline_cursor_moved(self, message: SnapshotTimeline.CursorMoved) -> None:
        for seg in self.query(SnapshotSegments):
            seg.show_at(message.entry)

    def on_snapshot_segments_picked(self, message: SnapshotSegments.Picked) -> None:
        if self.query_one(TabbedContent).active == "segments":
            self._details(("segment", message.state, message.segment))

    def on_snapshot_frames_shown(self, message: SnapshotFrames.Shown) -> None:
        if self.query_one(TabbedContent).active == "frames":
            self._details(("frame", message.row, message.kept))

    def on_snapshot_frames_picked(self, message: SnapshotFrames.Picked) -> None:
        timeline = self.query_one(SnapshotTimeline)
        timeline.highlight = message.frame
        timeline.refresh()
        self.action_tab("timeline")
        self.notify(f"{message.frame}: its allocations are gold (x clears)", timeout=5)

    def _details(self, what: tuple) -> None:
        self.shown = what
        if self.loaded is None:
            return
        mem = self.loaded.memories[self.device]
        history = self.loaded.snap.histories.get(self.device)
        t0 = int(history.time_ns[0]) if history is not None and len(history) else 0
        if not what:
            lines = ["Select an allocation (↑ ↓ on the timeline) or a segment."]
        elif what[0] == "alloc":
            entry = int(mem.allocs.alloc_entry[what[1]])
            extra = int(history.extra[entry]) if history is not None and entry >= 0 else -1
            note = self.loaded.snap.texts[extra] if extra >= 0 else ""
            lines = allocation_lines(mem.allocs, what[1], self.loaded.namer, t0, self.cpp, note)
        elif what[0] == "frame":
            lines = frame_lines(what[1], what[2], self.loaded.namer, self.loaded.snap.timed, self.cpp)
        else:
            lines = segment_lines(what[1], what[2], mem.allocs, self.loaded.namer)
        self.query_one("#snap-text", Static).update(visible_lines("\n".join(lines)))  # frames' names: data

    # ---- actions ----------------------------------------------------------------------------------

    def action_tab(self, name: str) -> None:  # not action_view: the app's palette offers a trace's views there
        if self.loaded is None:
            return
        self.query_one(TabbedContent).active = name
        if name == "frames":
            tables = self.query_one(SnapshotFrames).query(FrameTable)
            if tables:
                tables.first().focus()
        elif name == "segments":
            self.query_one(SnapshotSegments).focus()
        else:
            self.query_one(SnapshotTimeline).focus()

    def action_help(self) -> None:
        self.app.push_screen(SnapshotHelp(help_sections(self, getattr(self.app, "keymap_overrides", {}))))

    def action_details(self) -> None:
        self.toggle_class("big-details")

    def action_cpp(self) -> None:
        self.cpp = not self.cpp
        self._details(self.shown)

    async def action_device(self) -> None:
        if self.loaded is None or len(self.loaded.snap.devices) < 2:
            return
        self.device_index = (self.device_index + 1) % len(self.loaded.snap.devices)
        self.shown = ()
        await self.recompose()
        self.query_one(SnapshotTimeline).focus()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if self.loaded is None:
            return action not in ("tab", "cpp", "device")
        if action == "device":
            return len(self.loaded.snap.devices) > 1
        return True

    def keybar_state(self) -> list[tuple[str, str]]:
        return [("c", "hide C++ frames")] if self.cpp else []  # what c does, as p's "hide frames"


class _Cancelled(Exception):
    """The screen went away while the snapshot was loading."""
