"""The timeline's drawing: a line per lane row (the gutter's names, then the cells), value lanes as sparklines,
the selection, search matches and the critical path painted over the cells, a graph replay bracketed; and what
every part of the timeline shares (LaneState)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from ..model.analyses.results import Results
from ..model.analysis import Analysis
from ..model.tracks import title_forms
from ..model.view import navigate
from ..model.view.lanes import LaneIndex, Line, lane_cells
from ..model.view.series import Series, cell_values, series_label, sparkline, value_at
from ..model.view.viewport import Viewport
from ..text.fmt import fmt_memory, fmt_memory_gutter
from ..text.sanitize import cell_len, crop_cells, ljust_cells, middle_cut, visible
from .paint import paint_row

GUTTER = 24  # lane names; narrower on small terminals, wider on wide ones (see gutter_for)
# From WIDE columns up: a fifth of the width, up to WIDE_GUTTER ("python main thread · tid 2005" whole; a longer
# thread id keeps it whole by the thread's name giving way, see subtitle_text).
WIDE, WIDE_GUTTER = 140, 32
SUBTITLE_INDENT = "  "  # a lane's subtitle under its title


def gutter_for(width: int) -> int:
    """Lane-name column width: 24 from 110 columns up, down to 14 on narrow terminals; from 140 columns up a fifth of
    the width, up to 32 (a fresh-eyes run: "python main thread ·…" cut at 160 columns, the time axis wide enough)."""
    if width >= WIDE:
        return min(WIDE_GUTTER, width // 5)
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


_THREAD_ID = re.compile(r"^(?P<name>.+?)(?: · tid (?P<tid>\S+)| \((?P<own>\d+)\))$")  # `… · tid 19392`, `… (4242)`
NAME_LEAST = 6  # a thread's name cut in its middle keeps this many cells at least (`pt_…_0`), else its id alone shows
FILLER_WORDS = ("python", "thread")  # what a thread's name says of every CPU lane (its title says CPU already)


def subtitle_text(label: str, room: int) -> str:
    """A CPU lane's subtitle within room cells, its thread id whole (it tells the lane's thread apart): the label,
    then its name without `python `, then without the words python and thread (`main · tid 20051`), then that cut
    in its middle (`pt_…ker_3 · tid 20051`), then the id alone (`tid 20051`); a label without an id is cut at its
    end. A fresh-eyes run: "python main thread · tid 200…" at 160 columns, the id's last digits lost."""
    m = _THREAD_ID.match(label)
    if cell_len(label) <= room or m is None:
        return crop_cells(label, room)
    name, tid = m.group("name"), m.group("tid") or m.group("own")
    tail = f" · tid {tid}" if m.group("tid") else f" ({tid})"
    plain = " ".join(w for w in name.split(" ") if w not in FILLER_WORDS) or name
    for form in (name.removeprefix("python "), plain):
        if cell_len(form + tail) <= room:
            return form + tail
    left = room - cell_len(tail)
    if left >= NAME_LEAST:
        return middle_cut(plain, left) + tail
    return crop_cells(f"tid {tid}", room)


def short_label(label: str, cols: int) -> str:
    """Drop what the process header already says when the lane-name column is narrow."""
    if cols >= GUTTER:
        return label
    if label.startswith("GPU ") and " stream " in label:
        return "stream " + label.split(" stream ", 1)[1]
    return label.removeprefix("python ")


if TYPE_CHECKING:
    from textual.scroll_view import ScrollView as _Base
else:
    _Base = object


class LaneState(_Base):
    """What the timeline's parts share: the Timeline (timeline.py) holds it, each part reads and changes it."""

    analysis: Results
    lanes: LaneIndex
    lines: list[Line]
    view: Viewport
    selected: int
    collapsed: frozenset[int]
    series: list[Series]
    focus_rank: int | None
    mark: tuple[int, int] | None
    matches: np.ndarray
    match_pattern: str
    match_mask: np.ndarray | None
    match_pos: int
    path_mask: np.ndarray | None
    _path_rows: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]]
    _line_of_track: dict[int, int]
    _span_key: tuple[int, int] | None
    _span: tuple[int, int, int] | None

    if TYPE_CHECKING:
        SelectionChanged: Any  # the Timeline's messages
        RangeMarked: Any
        SearchRequested: Any
        CriticalRequested: Any
        CriticalCleared: Any
        WhatIfRequested: Any
        DetailsRequested: Any

        @property
        def cells_width(self) -> int: ...
        @property
        def name_cols(self) -> int: ...
        def cursor_time(self) -> int: ...
        def current_rank(self) -> int: ...
        def _changed(self, resized: bool = False) -> None: ...
        def _relayout(self) -> None: ...


class DrawsLanes(LaneState):
    """render_line and what it draws with."""

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
        if s.kind == "memory" and value == value and g < GUTTER:
            terse = fmt_memory_gutter(value, digits=2)  # a digit fewer where it keeps the lane's device in its label
            device = s.label.rpartition(" ")[0]
            if device not in series_label(s, g - len(shown) - 2) and device in series_label(s, g - len(terse) - 2):
                shown = terse
        label = visible(series_label(s, g - len(shown) - 2))
        gutter = (label + " " + shown.rjust(g - 2 - len(label)))[: g - 1] + "│"  # the value whole, right-aligned
        values = cell_values(s, self.view.t0, self.view.bucket, self.cells_width)
        line = sparkline(values, s.low, s.high)
        return [Segment(gutter, self._component("gutter")), Segment(line, self._component(s.kind))]

    @staticmethod
    def format_value(s: Series, value: float, short: bool = False) -> str:
        """A value lane's value at the cursor; short: in a few characters, for a narrow gutter (bytes in KiB, MiB,
        GiB either way, as README says every size is)."""
        if s.kind == "memory":
            return fmt_memory_gutter(value) if short else fmt_memory(int(value))
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
        elif line.depth == 1 and line.label:  # the lane's subtitle: a CPU lane's thread name, its id kept whole
            room = self.name_cols - 1 - len(SUBTITLE_INDENT)
            text = SUBTITLE_INDENT + subtitle_text(visible(line.label), room)
        g = self.name_cols
        text = text if cell_len(text) < g - 1 else crop_cells(text, g - 1)  # cut by cells: the gutter stays in line
        return Segment(ljust_cells(text, g - 1) + "│", self._component("gutter"))

    def _component(self, part: str) -> Style:
        """A part's style from the theme (component classes), so the theme picker restyles the timeline too."""
        return self.get_component_rich_style(f"timeline--{part}", partial=False)

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


def path_rows(a: Analysis, events: np.ndarray) -> dict[tuple[int, int], tuple[np.ndarray, np.ndarray]]:
    """Per (track, nesting row): the starts and ends of the path's events drawn in it."""
    x, row = a.trace.x, a.nesting.row
    out = {}
    for key in {(int(t), int(r)) for t, r in zip(x.track[events], row[events], strict=True)}:
        mine = events[(x.track[events] == key[0]) & (row[events] == key[1])]
        out[key] = (x.ts[mine].astype(np.int64), a.end[mine].astype(np.int64))
    return out
