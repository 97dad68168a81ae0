"""The timeline: CPU thread and GPU stream lanes drawn with the Line API from lane summaries.

In parts, as the main screen is: this class holds the state, the keys and messages, the view (layout, zoom,
pan, resize) and the mouse; timeline_draw.py draws, timeline_select.py moves the selection (and search, the
marked range and path), timeline_ranks.py goes to ranks and says which keys apply.
"""

from __future__ import annotations

import numpy as np
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView

from ..model.analyses.critical.queue import queue_series
from ..model.analyses.results import Results
from ..model.view.lanes import LaneIndex, Line, lane_cells, layout_lines
from ..model.view.series import (
    Series,
    counter_series,
    memory_series,
    queue_lanes,
)
from ..model.view.viewport import Viewport, fit, fit_whole, inside, pan, resize, span_view, zoom_within
from ..text.fmt import fmt_dur
from .timeline_draw import (  # noqa: F401 - the lane-name and legend helpers are the timeline's (ruler, tests)
    GUTTER,
    SERIES_TITLE,
    SERIES_TITLES,
    DrawsLanes,
    gutter_for,
    header_text,
    path_rows,
    short_label,
)
from .timeline_ranks import GoesToRanks
from .timeline_select import SelectsEvents

MOVE, ZOOM, PAN = Binding.Group("move"), Binding.Group("zoom"), Binding.Group("pan")
FLOW, RANK = Binding.Group("launch⇄kernel"), Binding.Group("rank")


class Timeline(DrawsLanes, SelectsEvents, GoesToRanks, ScrollView, can_focus=True):
    """Lanes of one trace; owns its view, selection, search matches and marked range."""

    HELP_NAME = "Timeline"
    COMPONENT_CLASSES = {
        "timeline--header",
        "timeline--gutter",
        "timeline--lane",
        "timeline--gpu-lane",
        "timeline--busy",
        "timeline--memory",
        "timeline--counter",
        "timeline--queue",
    }
    DEFAULT_CSS = """
    Timeline > .timeline--header { background: $panel-lighten-2; color: $text; text-style: bold; }
    Timeline > .timeline--gutter { background: $panel; color: $text-muted; }
    Timeline > .timeline--lane { background: $surface; }
    Timeline > .timeline--gpu-lane { background: $background; }
    Timeline > .timeline--busy { color: $text-muted; }
    Timeline > .timeline--memory { color: $secondary; background: $surface; }
    Timeline > .timeline--counter { color: $success; background: $surface; }
    Timeline > .timeline--queue { color: $warning; background: $surface; }
    """

    BINDINGS = [  # most useful first: the key bar shows as many as fit, in this order
        Binding("enter", "details", "Details", id="timeline.details"),
        Binding("left,h", "step(-1)", "Previous event", id="timeline.prev", group=MOVE),
        Binding("right,l", "step(1)", "Next event", id="timeline.next", group=MOVE),
        Binding("up,k", "parent", "Parent", id="timeline.parent", group=MOVE),
        Binding("down,j", "child", "Child", id="timeline.child", group=MOVE),
        Binding("w", "zoom(-1)", "Zoom in", id="timeline.zoom_in", group=ZOOM),
        Binding("s", "zoom(1)", "Zoom out", id="timeline.zoom_out", group=ZOOM),
        Binding("a", "pan(-1)", "Pan left", id="timeline.pan_left", group=PAN),
        Binding("d", "pan(1)", "Pan right", id="timeline.pan_right", group=PAN),
        Binding("]", "flow(True)", "Launch → kernel", id="timeline.flow_forward", group=FLOW),
        Binding("[", "flow(False)", "Kernel → launch", id="timeline.flow_back", group=FLOW),
        Binding("],[", "no_flow", "Launch ⇄ kernel: none here", show=False, id="timeline.no_flow"),
        Binding("/", "search", "Search", id="timeline.search"),
        Binding(
            "b", "critical", "Critical path", tooltip="Mark the critical path of the step here", id="timeline.critical"
        ),
        Binding("m", "mark", "Mark range", id="timeline.mark"),
        Binding("f", "fit", "Fit selection", id="timeline.fit"),
        Binding(
            "x",
            "what_if",
            "If 2× faster",
            tooltip="What the step saves if this event ran 2× faster",
            id="timeline.what_if",
        ),
        Binding(
            "g",
            "what_if(True)",
            "As a CUDA graph",
            tooltip="What the step saves if this op or module ran as one CUDA graph replay",
            id="timeline.what_if_graph",
        ),
        Binding("0,z", "reset", "Reset view", id="timeline.reset"),
        Binding("c", "collapse", "Collapse lane", id="timeline.collapse"),
        Binding("r", "rank(1)", "Next rank", id="timeline.next_rank", group=RANK),
        Binding("R", "rank(-1)", "Previous rank", id="timeline.prev_rank", group=RANK),
        Binding("o", "only_rank", "Only this rank", id="timeline.only_rank"),
        Binding("A", "pan(-4)", "Pan left (big)", show=False, id="timeline.pan_left_big"),
        Binding("D", "pan(4)", "Pan right (big)", show=False, id="timeline.pan_right_big"),
        Binding("n", "next_match(1)", "Next match", show=False, id="timeline.next_match"),
        Binding("N", "next_match(-1)", "Previous match", show=False, id="timeline.prev_match"),
    ]
    PAN_CELLS = 8  # one press pans width / PAN_CELLS

    class SelectionChanged(Message):
        def __init__(self, event: int) -> None:
            super().__init__()
            self.event = event

    class ViewChanged(Message):
        def __init__(self, view: Viewport, mark: tuple[int, int] | None, name_cols: int) -> None:
            super().__init__()
            self.view, self.mark, self.name_cols = view, mark, name_cols

    class RangeMarked(Message):
        def __init__(self, span: tuple[int, int] | None) -> None:
            super().__init__()
            self.span = span

    class SearchRequested(Message):
        pass

    class LinesChanged(Message):
        """The lanes take more or fewer rows: the details panel below has the rows they leave."""

    class CriticalRequested(Message):
        """b: the critical path of the step under the cursor (the selection's, else the view's middle), on a rank."""

        def __init__(self, at: int, rank: int) -> None:
            super().__init__()
            self.at, self.rank = at, rank

    class CriticalCleared(Message):
        """b again: the critical path is no longer marked."""

    class WhatIfRequested(Message):
        """x: what the step saves if the selected event ran twice as fast; g: if it ran as one CUDA graph replay."""

        def __init__(self, event: int, graph: bool = False) -> None:
            super().__init__()
            self.event, self.graph = event, graph

    class DetailsRequested(Message):
        def __init__(self, event: int) -> None:
            super().__init__()
            self.event = event

    def __init__(self, analysis: Results, lanes: LaneIndex, **kwargs) -> None:
        super().__init__(**kwargs)
        self.analysis, self.lanes = analysis, lanes
        self.collapsed: frozenset[int] = frozenset()
        self.series: list[Series] = []  # value lanes (memory, counters) under the tracks, set when computed
        self.focus_rank: int | None = None  # the rank r/R last went to (until a selection says otherwise)
        self.lines: list[Line] = layout_lines(lanes)
        self.view = Viewport(lanes.t_min if lanes.rows else 0, 1, 1)
        self.selected = -1
        self.matches = np.empty(0, np.int64)
        self.match_pattern = ""  # the last search (the key bar says when it matched nothing)
        self.match_mask: np.ndarray | None = None  # every match highlighted, however many
        self.match_pos = -1
        self.mark: tuple[int, int] | None = None
        self._fitted = False
        self._wanted: tuple[int, int] | None = None  # the span the user last chose: a resize keeps it
        self._zoomed: tuple[Viewport, int, float, int] | None = None  # last zoom's view, time, column, selection
        self._line_of_track: dict[int, int] = {}
        self._span_key: tuple[int, int] | None = None  # the selection whose graph replay _span brackets
        self._span: tuple[int, int, int] | None = None
        self.path_mask: np.ndarray | None = None  # the critical path marked (b): a mask over every event
        self._path_rows: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}  # (track, row) -> starts, ends
        self._reindex()

    def set_structure(self, analysis, lanes: LaneIndex) -> None:
        """Show another nesting of the same trace (Python frames shown or hidden), keeping the time window.

        The selection stays if the new nesting shows it, else it moves to its nearest shown ancestor.
        """
        keep, parent = self.selected, self.analysis.nesting.parent
        self.analysis, self.lanes = analysis, lanes
        self.lines = self._layout()
        self._reindex()
        if self.path_mask is not None:  # the path's events sit in other rows of this nesting
            self._path_rows = path_rows(analysis, np.flatnonzero(self.path_mask))
        pos = analysis.nesting.pos
        while keep >= 0 and pos[keep] < 0:
            keep = int(parent[keep])
        self.selected = keep
        if keep >= 0:  # its row moves with the frames' rows above it: keep it on screen (a fresh-eyes run)
            self.call_after_refresh(self._reveal, keep)
        self.refresh()
        self.post_message(self.SelectionChanged(self.selected))

    def keybar_state(self) -> list[tuple[str, str]]:
        """What is on, for the key bar: the marked range, the search matches."""
        out = []
        if self.mark is not None:
            out.append(("m", f"mark {fmt_dur(self.mark[1] - self.mark[0])}"))
        if len(self.matches):
            out.append(("n", f"match {self.match_pos + 1}/{len(self.matches):,}"))
        elif self.match_pattern:
            out.append(("/", f"no match /{self.match_pattern}/"))
        if self.path_mask is not None:
            out.append(("b", "critical path"))
        return out

    # ---- geometry --------------------------------------------------------------------------

    @property
    def cells_width(self) -> int:
        return max(self.scrollable_content_region.width - self.name_cols, 1)

    def _reindex(self) -> None:
        self._line_of_track = {}
        for k, line in enumerate(self.lines):
            if line.kind == "row" and line.depth == 0:
                self._line_of_track[line.track] = k
        self.virtual_size = Size(self.scrollable_content_region.width or 80, len(self.lines))
        if self.is_attached:
            self.post_message(self.LinesChanged())

    @property
    def name_cols(self) -> int:
        """The lane names' width, by the widget's whole width: a scrollbar that comes with more lanes (or with the
        first open's legend under them) does not narrow the names and cut a memory lane's device from its label."""
        return gutter_for(self.outer_size.width)

    def on_resize(self, event: events.Resize) -> None:
        """A new width shows the same span of time: the whole trace if it was shown whole, else the same window."""
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.lines))
        width = self.cells_width
        if not self._fitted and self.lanes.rows:
            self._fitted = True
            self._fit_all()
        elif width != self.view.width:
            whole = self.view == self.whole_view(self.view.width)
            span = self._wanted or (self.view.t0, self.view.t1)
            self.view = span_view(*span, width) if self.lanes.rows else resize(self.view, width)
            if whole:
                self._fit_all()
            self._changed(resized=True)
            return
        self._changed()

    def _fit_all(self) -> None:
        self.view = self.whole_view(self.cells_width)

    def whole_view(self, width: int) -> Viewport:
        """The view of the whole trace at width cells: the furthest out the timeline zooms or pans."""
        return fit_whole(self.lanes.t_min, self.lanes.t_max, width)

    # ---- theme -----------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._theme_changed, init=True)

    def _theme_changed(self, _theme: str) -> None:
        self.call_after_refresh(self._component_styles_changed)  # once the new theme's CSS is applied

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self.is_mounted:  # the component styles exist once mounted
            self._component_styles_changed()

    def _changed(self, resized: bool = False) -> None:
        """The view moved: redrawn, the ruler told; unless by a resize, its span is the one a resize keeps.

        Moved by a key, a jump or the wheel, it stays within the whole trace's view: no time before or after the
        trace shows unless the whole trace does."""
        if not resized:
            if self.lanes.rows:
                self.view = inside(self.view, self.whole_view(self.view.width))
            self._wanted = (self.view.t0, self.view.t1)
        self.refresh()
        self.post_message(self.ViewChanged(self.view, self.mark, self.name_cols))

    # ---- the view: layout, zoom, pan ------------------------------------------------------------------------

    def cursor_time(self) -> int:
        """The time the keys zoom around and the value lanes read at: the selection's middle where it shows, else
        the middle of the part of it that shows, else the view's middle."""
        if self.selected >= 0:
            start = int(self.analysis.trace.x.ts[self.selected])
            end = int(self.analysis.end[self.selected])
            if self.view.t0 <= (start + end) // 2 <= self.view.t1:
                return (start + end) // 2
            if self.view.visible(start, end):
                return (max(start, self.view.t0) + min(end, self.view.t1)) // 2
        return (self.view.t0 + self.view.t1) // 2

    def action_zoom(self, factor: int) -> None:
        """w and s: the cursor's time kept at its column, the one the first of a run of presses found (each press
        rounds the view to whole cells; finding the column again every press let the rounding add up). The time too:
        a view held inside the trace has another middle, and s then went back to another view than the one before w."""
        last = self._zoomed
        if last is not None and (last[0], last[3]) == (self.view, self.selected):
            at, col = last[1], last[2]
        else:
            at = self.cursor_time()
            col = self.view.col_of(at)
        self._zoom(at, col, factor)

    def _zoom(self, at: int, col: float, factor: int) -> None:
        self.view = zoom_within(self.view, self.whole_view(self.view.width), at, factor, col)
        self._zoomed = (self.view, at, col, self.selected)
        self._changed()

    def action_pan(self, steps: int) -> None:
        self.view = pan(self.view, steps * max(self.view.width // self.PAN_CELLS, 1))
        self._changed()

    def action_reset(self) -> None:
        if self.lanes.rows:
            self._fit_all()
        self._changed()

    def action_fit(self) -> None:
        if self.selected >= 0:
            start = int(self.analysis.trace.x.ts[self.selected])
            self.view = fit(start, int(self.analysis.end[self.selected]), self.cells_width)
            self._changed()

    def set_series(self, series: list[Series]) -> None:
        """Show value lanes (memory per device, counters) below the tracks."""
        self.series = series
        self._relayout()

    def _layout(self) -> list[Line]:
        lines = layout_lines(self.lanes, self.collapsed)
        kind = ""
        for k, s in enumerate(self.series):
            if s.kind != kind:
                kind = s.kind
                lines.append(Line("process", SERIES_TITLE[kind]))
            lines.append(Line("series", s.label, k))
        return lines

    def _relayout(self) -> None:
        self.lines = self._layout()
        self._reindex()
        self.refresh()

    # ---- mouse -------------------------------------------------------------------------------

    def event_at(self, x: int, y: int) -> int:
        index = self.scroll_offset.y + y
        if x < self.name_cols or index >= len(self.lines) or self.lines[index].kind != "row":
            return -1
        line = self.lines[index]
        row = self.lanes.row(line.track, line.depth)
        if row is None:
            return -1
        cells = lane_cells(row, self.view.t0, self.view.bucket, self.view.width)
        col = x - self.name_cols
        if 0 <= col < len(cells.event) and cells.event[col] >= 0:
            return int(cells.event[col])
        return self.lanes.find(line.track, line.depth, self.view.time_at(col + 0.5))

    def on_click(self, event: events.Click) -> None:
        hit = self.event_at(event.x, event.y)
        if hit >= 0:
            self.select(hit, reveal=False)
        elif event.x < self.name_cols:
            index = self.scroll_offset.y + event.y
            if index < len(self.lines) and self.lines[index].kind == "row":
                self.collapsed = self.collapsed ^ {self.lines[index].track}
                self._relayout()

    def _wheel_zoom(self, event, factor: int) -> None:
        """The wheel zooms around the time under the pointer, as w and s do around the cursor's."""
        if event.x >= self.name_cols and not event.shift:
            event.stop()
            event.prevent_default()
            col, last = event.x - self.name_cols + 0.5, self._zoomed  # the middle of the pointer's cell
            at = last[1] if last is not None and (last[0], last[2]) == (self.view, col) else self.view.time_at(col)
            self._zoom(at, col, factor)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._wheel_zoom(event, -1)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._wheel_zoom(event, 1)


def value_lanes(a: Results) -> list[Series]:
    """Memory (allocated and reserved per device) and counter lanes of a trace; computed in a worker."""
    return memory_series(a.memory_curves) + counter_series(a.trace)


def launch_queue_lanes(a: Results) -> list[Series]:
    """A lane per stream of its launch queue's length (launches not yet started); computed in a worker."""
    return queue_lanes(a.trace, queue_series(a.trace, a.links.launcher))
