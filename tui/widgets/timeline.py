"""The timeline: CPU thread and GPU stream lanes drawn with the Line API from lane summaries."""

from __future__ import annotations

from functools import cached_property

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..model.analyses.critical.queue import queue_series
from ..model.analyses.results import Results
from ..model.analysis import Analysis
from ..model.tracks import title_forms
from ..model.view import navigate
from ..model.view.lanes import LaneIndex, Line, lane_cells, layout_lines
from ..model.view.series import (
    Series,
    cell_values,
    counter_series,
    memory_series,
    queue_lanes,
    series_label,
    sparkline,
    value_at,
)
from ..model.view.viewport import Viewport, fit, frame, pan, resize, span_view, zoom
from ..text.fmt import fmt_dur, fmt_memory, fmt_memory_short
from ..text.sanitize import cell_len, crop_cells, ljust_cells, visible
from .paint import paint_row

GUTTER = 24  # lane names; narrower on small terminals (see gutter_for)


def gutter_for(width: int) -> int:
    """Lane-name column width: 24 from 110 columns up, down to 14 on narrow terminals."""
    return GUTTER if width >= 110 else max(14, min(GUTTER, width // 5))


SERIES_TITLES = {  # each value lane group's legend, then shorter ones that say the same for a narrower terminal
    "memory": (
        "Memory: bytes at the cursor; each lane from its lowest (▁) to its highest (█), a cell its highest",
        "Memory: bytes at the cursor; ▁ a lane's lowest, █ its highest (a cell: its highest)",
        "Memory: bytes at the cursor; ▁ lowest to █ highest",
        "Memory (bytes)",
    ),
    "counter": (
        "Counters: the value at the cursor; each lane from its lowest (▁) to its highest (█)",
        "Counters: the value at the cursor; ▁ a lane's lowest, █ its highest",
        "Counters: the value at the cursor",
        "Counters",
    ),
    "queue": (
        "Launch queues: launches not yet started per stream, at the cursor; each lane from 0 (▁) to its most, at least 8 (█)",
        "Launch queues: launches not yet started; ▁ none, █ the lane's most (at least 8)",
        "Launch queues: launches waiting; ▁ none, █ most",
        "Launch queues",
    ),
}
SERIES_TITLE = {kind: titles[0] for kind, titles in SERIES_TITLES.items()}
_SHORTER = {titles[0]: titles for titles in SERIES_TITLES.values()}


def header_text(label: str, width: int) -> str:
    """A header line within width: a legend's shorter wording that fits, else the label cut with `…`, never mid-word
    silently."""
    for text in _SHORTER.get(label, (label,)):
        if len(text) <= width:
            return text
    return label[: max(width - 1, 0)] + "…" if width > 0 else ""


BRACKET = Style(bold=True, color="#ffd866", bgcolor="#15181c")  # a graph replay's extent on its GPU lane


def short_label(label: str, cols: int) -> str:
    """Drop what the process header already says when the lane-name column is narrow."""
    if cols >= GUTTER:
        return label
    if label.startswith("GPU ") and " stream " in label:
        return "stream " + label.split(" stream ", 1)[1]
    return label.removeprefix("python ")


MOVE, ZOOM, PAN = Binding.Group("move"), Binding.Group("zoom"), Binding.Group("pan")
FLOW, RANK = Binding.Group("launch⇄kernel"), Binding.Group("rank")


class Timeline(ScrollView, can_focus=True):
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
        self._whole: Viewport | None = None  # the view that shows the whole trace, at the last fit
        self._wanted: tuple[int, int] | None = None  # the span the user last chose: a resize keeps it
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

    @property
    def name_cols(self) -> int:
        return gutter_for(self.scrollable_content_region.width)

    def on_resize(self, event: events.Resize) -> None:
        """A new width shows the same span of time: the whole trace if it was shown whole, else the same window."""
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.lines))
        width = self.cells_width
        if not self._fitted and self.lanes.rows:
            self._fitted = True
            self._fit_all()
        elif width != self.view.width:
            whole = self.view == self._whole
            span = self._wanted or (self.view.t0, self.view.t1)
            self.view = span_view(*span, width) if self.lanes.rows else resize(self.view, width)
            if whole:
                self._fit_all()
            self._changed(resized=True)
            return
        self._changed()

    def _fit_all(self) -> None:
        self.view = self._whole = fit(self.lanes.t_min, self.lanes.t_max, self.cells_width, margin=0.01)

    # ---- drawing ---------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index = self.scroll_offset.y + y
        if index >= len(self.lines):
            return Strip.blank(width)
        line = self.lines[index]
        if line.kind == "process":
            text = crop_cells(" " + header_text(visible(line.label), width - 1), width)
            return Strip([Segment(ljust_cells(text, width), self._component("header"))], width)
        if line.kind == "series":
            return Strip(self._series_line(self.series[line.track]), width)
        return Strip([self._gutter(line), *self._cells(line)], width)

    def _series_line(self, s: Series) -> list[Segment]:
        """The label and the value at the cursor in the gutter, then the sparkline (scaled to the series' top)."""
        g = self.name_cols
        value, _ = value_at(s, self.cursor_time())
        shown = "–" if value != value else self.format_value(s, value, short=g < GUTTER)  # – before a sample
        label = visible(series_label(s, g - len(shown) - 2))
        gutter = (label + " " + shown.rjust(g - 2 - len(label)))[: g - 1] + "│"  # the value whole, right-aligned
        values = cell_values(s, self.view.t0, self.view.bucket, self.cells_width)
        line = sparkline(values, s.low, s.high)
        return [Segment(gutter, self._component("gutter")), Segment(line, self._component(s.kind))]

    @staticmethod
    def format_value(s: Series, value: float, short: bool = False) -> str:
        """A value lane's value at the cursor; short: in five characters, for a narrow gutter."""
        if s.kind == "memory":
            return fmt_memory_short(value) if short else fmt_memory(int(value))
        if s.kind == "queue":
            return f"{int(value):,}"
        return f"{value:.3g}"

    def _gutter(self, line: Line) -> Segment:
        text = ""
        if line.depth == 0:
            arrow = "▸ " if line.track in self.collapsed else "▾ "
            label = short_label(visible(line.label), self.name_cols)  # a thread's or process's name: data
            room = self.name_cols - 2 - len(arrow)
            text = arrow + next((form for form in title_forms(label) if len(form) <= room), label)
        elif line.depth == 1 and line.label:  # the lane's subtitle: a CPU lane's thread name
            text = "  " + visible(line.label)
        g = self.name_cols
        text = text if cell_len(text) < g - 1 else crop_cells(text, g - 1)  # cut by cells: the gutter stays in line
        return Segment(ljust_cells(text, g - 1) + "│", self._component("gutter"))

    def _component(self, part: str) -> Style:
        """A part's style from the theme (component classes), so the theme picker restyles the timeline too."""
        return self.get_component_rich_style(f"timeline--{part}", partial=False)

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._theme_changed, init=True)

    def _theme_changed(self, _theme: str) -> None:
        self.call_after_refresh(self._component_styles_changed)  # once the new theme's CSS is applied

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self.is_mounted:  # the component styles exist once mounted
            self._component_styles_changed()

    def _component_styles_changed(self) -> None:
        from .paint import LaneColors, use_theme

        def bg(part: str):
            return self._component(part).bgcolor

        busy = self._component("busy").color
        if bg("lane") is not None and bg("gpu-lane") is not None and busy is not None:
            use_theme(LaneColors(bg("lane"), bg("gpu-lane"), busy))
        self.refresh()

    def _cells(self, line: Line) -> list[Segment]:
        row = self.lanes.row(line.track, line.depth)
        track = self.analysis.trace.tracks[line.track]
        if row is None:
            return [Segment(" " * self.cells_width)]
        cells = lane_cells(row, self.view.t0, self.view.bucket, self.view.width)
        mark_col = -1
        if (
            self.selected >= 0
            and self.analysis.trace.x.track[self.selected] == line.track
            and self.analysis.nesting.row[self.selected] == line.depth
        ):
            mark_col = int(self.view.col_of(int(self.analysis.trace.x.ts[self.selected])))
        path, hot = self.path_mask, self._hot(line) if self.path_mask is not None else None
        segments = paint_row(cells, self._event_name, self.selected, self.match_mask, track.is_gpu, mark_col, path, hot)
        return self._bracketed(segments, line) if track.is_gpu else segments

    def _hot(self, line: Line) -> np.ndarray | None:
        """The cells of this row that a critical path event covers (merged cells show the path through them)."""
        found = self._path_rows.get((line.track, line.depth))
        if found is None:
            return None
        starts, ends = found
        width, v = self.view.width, self.view
        hot = np.zeros(width + 1, np.int64)
        seen = (ends >= v.t0) & (starts <= v.t1)
        first = np.clip((starts[seen] - v.t0) // v.bucket, 0, width)
        last = np.clip((ends[seen] - v.t0) // v.bucket + 1, 0, width)
        np.add.at(hot, first, 1)
        np.add.at(hot, last, -1)
        return np.cumsum(hot)[:width] > 0

    def set_path(self, events: np.ndarray | None) -> None:
        """Mark a critical path (its events highlighted, the rest dimmed), or clear it (None)."""
        self.path_mask, self._path_rows = None, {}
        if events is not None:
            a = self.analysis
            self.path_mask = np.zeros(a.trace.n, bool)
            self.path_mask[events] = True
            self._path_rows = path_rows(a, np.unique(events))
        self.refresh_bindings()
        self.refresh()

    def _bracketed(self, segments: list[Segment], line: Line) -> list[Segment]:
        """A [ ] on the GPU lane around the selected graph launch's replay (its first start to its last end)."""
        span = self._replay_span()
        if span is None or span[0] != line.track or line.depth != 0:
            return segments
        cols = [int(self.view.col_of(t)) for t in (span[1], span[2])]
        strip = Strip(segments)
        for col, mark in zip(cols, "[]", strict=True):
            if 0 <= col < self.cells_width:
                strip = Strip.join([strip.crop(0, col), Strip([Segment(mark, BRACKET)]), strip.crop(col + 1)])
        return list(strip)

    def _replay_span(self) -> tuple[int, int, int] | None:
        """The selected launch's replay extent, once per selection (links ready: never computed here)."""
        key = (self.selected, id(self.analysis))
        if self._span_key != key:
            a = self.analysis
            ok = self.selected >= 0 and a.ready(Analysis.links) and a.ready(Analysis.child_index)
            self._span_key, self._span = key, navigate.replay_span(a, self.selected) if ok else None
        return self._span

    def _event_name(self, i: int) -> str:
        return self.analysis.trace.names[int(self.analysis.trace.x.name[i])]

    def _changed(self, resized: bool = False) -> None:
        """The view moved: redrawn, the ruler told; unless by a resize, its span is the one a resize keeps."""
        if not resized:
            self._wanted = (self.view.t0, self.view.t1)
        self.refresh()
        self.post_message(self.ViewChanged(self.view, self.mark, self.name_cols))

    # ---- view actions ------------------------------------------------------------------------

    def cursor_time(self) -> int:
        if self.selected >= 0:
            start = int(self.analysis.trace.x.ts[self.selected])
            end = int(self.analysis.end[self.selected])
            if self.view.visible(start, end):
                return (max(start, self.view.t0) + min(end, self.view.t1)) // 2
        return (self.view.t0 + self.view.t1) // 2

    def action_zoom(self, factor: int) -> None:
        self.view = zoom(self.view, self.cursor_time(), factor)
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

    # ---- selection actions -------------------------------------------------------------------

    def select(self, event: int, reveal: bool = True, jump: bool = False) -> None:
        """Select an event (attribute down from the screen, or from a key here).

        jump: from afar (a search match, the tree, a table), so zoomed to when too narrow or too wide to see.
        """
        self.selected = int(event)
        if reveal and event >= 0:
            self._reveal(event, jump)
        self.refresh()
        self.post_message(self.SelectionChanged(self.selected))

    def _reveal(self, event: int, jump: bool = False) -> None:
        x = self.analysis.trace.x
        start, end = int(x.ts[event]), int(self.analysis.end[event])
        if jump:
            self.view = frame(self.view, start, end)
        elif not self.view.visible(start, end):
            self.view = pan(self.view, int(self.view.col_of((start + end) // 2) - self.view.width // 2))
        track = int(x.track[event])
        if track in self.collapsed:
            self.collapsed = self.collapsed - {track}
            self._relayout()
        line = self._line_of_track.get(track, 0) + int(self.analysis.nesting.row[event])
        if not (self.scroll_offset.y <= line < self.scroll_offset.y + self.scrollable_content_region.height):
            self.scroll_to(y=max(line - self.scrollable_content_region.height // 2, 0), animate=False)
        self._changed()

    def _first_visible_event(self) -> int:
        for line in self.lines[self.scroll_offset.y :]:
            if line.kind != "row":
                continue
            row = self.lanes.row(line.track, line.depth)
            if row is None:
                continue
            k = int(np.searchsorted(row.ends, self.view.t0, side="left"))
            if k < len(row.events) and row.starts[k] <= self.view.t1:
                return int(row.events[k])
        return -1

    def _move(self, target) -> None:
        if self.selected < 0:
            self.select(self._first_visible_event())
            return
        self.select(target(self.selected))

    def action_step(self, step: int) -> None:
        self._move(lambda i: navigate.neighbour(self.lanes, i, step))

    def action_parent(self) -> None:
        self._move(lambda i: navigate.parent(self.analysis, i))

    def _ready(self, *results) -> bool:
        """Whether the results a key needs are ready; if not, say so rather than wait for them."""
        if all(self.analysis.ready(r) for r in results):
            return True
        self.notify("still linking launches to GPU work and nesting children …", timeout=2)
        return False

    def action_child(self) -> None:
        if self._ready(Analysis.child_index):
            self._move(lambda i: navigate.first_child(self.analysis, i))

    def action_flow(self, forward: bool) -> None:
        if self.selected >= 0 and self._ready(Analysis.links, Analysis.child_index):
            self.select(navigate.follow_flow(self.analysis, self.selected, forward))

    def action_critical(self) -> None:
        if self.path_mask is not None:
            self.set_path(None)
            self.post_message(self.CriticalCleared())
            return
        at = self.cursor_time()
        if self.selected >= 0:  # a kernel is in the step it was launched from
            a = self.analysis
            launcher = int(a.links.launcher[self.selected]) if a.ready(Analysis.links) else -1
            at = int(a.trace.x.ts[launcher if launcher >= 0 else self.selected])
        self.post_message(self.CriticalRequested(at, self.current_rank()))

    def action_what_if(self, graph: bool = False) -> None:
        what = "g what one CUDA graph replay of it would save" if graph else "x what 2× faster would save"
        if self.selected < 0:
            self.notify(f"select an event first (← → or a click), then {what}", timeout=3)
            return
        self.post_message(self.WhatIfRequested(self.selected, graph))

    def action_details(self) -> None:
        if self.selected >= 0:
            self.post_message(self.DetailsRequested(self.selected))

    def action_mark(self) -> None:
        if self.mark is not None:
            self.mark = None
        elif self.selected >= 0:
            self.mark = (int(self.analysis.trace.x.ts[self.selected]), int(self.analysis.end[self.selected]))
        else:
            self.mark = (self.view.t0, self.view.t1)
        self.post_message(self.RangeMarked(self.mark))
        self.refresh_bindings()
        self._changed()

    def action_collapse(self) -> None:
        line = self.lines[min(self.scroll_offset.y, len(self.lines) - 1)] if self.lines else None
        track = int(self.analysis.trace.x.track[self.selected]) if self.selected >= 0 else (line.track if line else -1)
        if track < 0:
            return
        self.collapsed = self.collapsed ^ {track}
        self._relayout()

    # ---- ranks of a job ------------------------------------------------------------------------

    @cached_property
    def ranks(self) -> list[int]:
        """The ranks of the trace (asked by check_action on every refresh of the keys: once, not per lane each time)."""
        return sorted({t.rank for t in self.analysis.trace.tracks})

    @cached_property
    def _has_device(self) -> bool:
        return any(t.is_gpu for t in self.analysis.trace.tracks)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in ("rank", "only_rank"):
            return len(self.ranks) > 1
        if action in ("flow", "no_flow"):  # ] and [ offered where there are links, else they say why not
            return (self.no_links() is None) == (action == "flow")
        return True

    def no_links(self) -> str | None:
        """Why ] and [ have nothing to follow in this trace, or None when they have (or may have: still linking)."""
        a = self.analysis
        if not self._has_device:
            return "it has no device records"
        if a.ready(Analysis.links) and not (a.links.launcher >= 0).any():
            return "its device records have no launch correlations"
        return None

    def action_no_flow(self) -> None:
        self.notify(f"no launch or kernel links in this trace: {self.no_links()}", timeout=3)

    def current_rank(self) -> int:
        """The rank of the selection, else of the first lane in view."""
        tracks = self.analysis.trace.tracks
        if self.selected >= 0:
            return tracks[int(self.analysis.trace.x.track[self.selected])].rank
        if self.focus_rank is not None:
            return self.focus_rank
        first = next((line for line in self.lines[self.scroll_offset.y :] if line.kind == "row"), None)
        return tracks[first.track].rank if first is not None else self.ranks[0]

    def action_rank(self, step: int) -> None:
        ranks = self.ranks
        self.go_to_rank(ranks[(ranks.index(self.current_rank()) + step) % len(ranks)])

    def go_to_rank(self, rank: int) -> None:
        """Scroll the rank's first lane to the top (opened, if only another rank was shown) and select nothing."""
        tracks = self.analysis.trace.tracks
        if any(tracks[t].rank == rank for t in self.collapsed):
            self.collapsed = frozenset(t for t in self.collapsed if tracks[t].rank != rank)
            self._relayout()
        first = next(
            (k for k, line in enumerate(self.lines) if line.kind == "row" and tracks[line.track].rank == rank), 0
        )
        self.selected, self.focus_rank = -1, rank
        self.scroll_to(y=max(first - 1, 0), animate=False)
        self.post_message(self.SelectionChanged(-1))
        self.notify(f"rank {rank}", timeout=1.5)
        self._changed()

    def action_only_rank(self) -> None:
        """Collapse every rank's lanes but this one's to one row each (again: open them all)."""
        rank, tracks = self.current_rank(), self.analysis.trace.tracks
        others = frozenset(t.id for t in tracks if t.rank != rank and t.id in self.lanes.depths)
        self.collapsed = frozenset() if self.collapsed == others else others
        self._relayout()
        self.go_to_rank(rank)

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

    # ---- search ------------------------------------------------------------------------------

    def action_search(self) -> None:
        self.post_message(self.SearchRequested())

    def set_matches(self, matches: np.ndarray, pattern: str = "") -> None:
        """Highlight the matches of a search (the key bar says how many, or that there is none)."""
        self.matches, self.match_pattern = matches, pattern
        self.match_mask = None
        if len(matches):
            self.match_mask = np.zeros(self.analysis.trace.n, bool)
            self.match_mask[matches] = True
        self.match_pos = -1
        if len(matches):
            self.action_next_match(1)
        self.refresh_bindings()
        self.refresh()

    def action_next_match(self, step: int) -> None:
        if not len(self.matches):
            return
        self.match_pos = (self.match_pos + step) % len(self.matches)
        self.select(int(self.matches[self.match_pos]), jump=True)
        self.refresh_bindings()

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
        if event.x >= self.name_cols and not event.shift:
            event.stop()
            event.prevent_default()
            self.view = zoom(self.view, self.view.time_at(event.x - self.name_cols), factor)
            self._changed()

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


def path_rows(a: Analysis, events: np.ndarray) -> dict[tuple[int, int], tuple[np.ndarray, np.ndarray]]:
    """Per (track, nesting row): the starts and ends of the path's events drawn in it."""
    x, row = a.trace.x, a.nesting.row
    out = {}
    for key in {(int(t), int(r)) for t, r in zip(x.track[events], row[events], strict=True)}:
        mine = events[(x.track[events] == key[0]) & (row[events] == key[1])]
        out[key] = (x.ts[mine].astype(np.int64), a.end[mine].astype(np.int64))
    return out
