"""The active-memory timeline of a snapshot: live allocations stacked over time, coloured by the frame that made
them, zoomed and panned with the timeline's keys; a cursor column, and the allocation selected under it.

The cells of a window are computed in a worker (model/snapshot/timeline.py); until they are, the widget says
"computing…" (or keeps the last window's cells, marked stale). The UI thread only paints.
"""

from __future__ import annotations

import numpy as np
from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from textual import events, work
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from ..model.snapshot.frames import BEFORE_HISTORY, Namer
from ..model.snapshot.report import DeviceMemory, label_of
from ..model.snapshot.timeline import EMPTY, Grid, Span, allocation_at, grid, span_cells
from ..model.view.viewport import Viewport, fit, pan, resize, zoom
from ..text.fmt import fmt_dur, fmt_memory, fmt_memory_gutter
from .failures import ReportsFailedWorkers
from .paint import MATCH, SELECTED, color_of, style, text_on

GUTTER = 8  # the bytes scale: a size as fmt_memory_gutter writes it (7 characters at most), then the axis
LOWER = " ▁▂▃▄▅▆▇█"
BEFORE = Color.parse("#6b7280")  # allocations from before the history (no frames)
BACKGROUND = Color.parse("#1c1f24")
CURSOR = Color.parse("#3a4150")
RULER = Style(color="#9aa3ad")
SPAN = Style(color="#e6e6e6", bgcolor="#4b4f5a")
MOVE, ZOOM, PAN = Binding.Group("move"), Binding.Group("zoom"), Binding.Group("pan")
JUMP = Binding.Group("alloc⇄free")


class SnapshotTimeline(ReportsFailedWorkers, Widget, can_focus=True):
    """Attributes down (the device's memory, the namer); messages up (the selection, the cursor's entry)."""

    HELP_NAME = "Active memory timeline"
    DEFAULT_CSS = "SnapshotTimeline { height: 1fr; }"
    BINDINGS = [
        Binding("left,h", "cursor(-1)", "Cursor left", id="snapshot.left", group=MOVE),
        Binding("right,l", "cursor(1)", "Cursor right", id="snapshot.right", group=MOVE),
        Binding("up,k", "band(1)", "Allocation above", id="snapshot.above", group=MOVE),
        Binding("down,j", "band(-1)", "Allocation below", id="snapshot.below", group=MOVE),
        Binding("w", "zoom(-1)", "Zoom in", id="snapshot.zoom_in", group=ZOOM),
        Binding("s", "zoom(1)", "Zoom out", id="snapshot.zoom_out", group=ZOOM),
        Binding("a", "pan(-1)", "Pan left", id="snapshot.pan_left", group=PAN),
        Binding("d", "pan(1)", "Pan right", id="snapshot.pan_right", group=PAN),
        Binding("f", "fit", "Fit the allocation", id="snapshot.fit"),
        Binding("[", "jump(False)", "To its alloc", id="snapshot.to_alloc", group=JUMP),
        Binding("]", "jump(True)", "To its free", id="snapshot.to_free", group=JUMP),
        Binding("P", "peak", "Go to the peak", id="snapshot.peak"),
        Binding("o", "oom", "Next OOM", id="snapshot.oom"),
        Binding("0,z", "reset", "Reset view", id="snapshot.reset"),
        Binding("x", "clear", "Clear the frame in gold", show=False, id="snapshot.clear"),
        Binding("A", "pan(-4)", "Pan left (big)", show=False, id="snapshot.pan_left_big"),
        Binding("D", "pan(4)", "Pan right (big)", show=False, id="snapshot.pan_right_big"),
    ]
    PAN_CELLS = 8

    class Selected(Message):
        """An allocation was selected (EMPTY: none)."""

        def __init__(self, alloc: int) -> None:
            super().__init__()
            self.alloc = alloc

    class CursorMoved(Message):
        """The cursor shows the memory after this entry (-2: the end, when the snapshot was taken)."""

        def __init__(self, entry: int) -> None:
            super().__init__()
            self.entry = entry

    def __init__(
        self, mem: DeviceMemory, times: np.ndarray, namer: Namer, ooms: list[int], timed: bool = True, **kwargs
    ) -> None:
        super().__init__(**kwargs)
        self.mem, self.times, self.namer, self.ooms = mem, times, namer, ooms
        self.timed = timed  # the entries carry times; else the axis counts entries
        self.spans: list[Span] = []  # the program's annotations (Optimizer.step, ...), a line above the ruler
        self.view: Viewport | None = None
        self.cells: Grid | None = None
        self.cells_for: tuple | None = None  # the (view, height) the cells were made for
        self.cursor = 0  # the cursor's column
        self.selected = EMPTY
        self.highlight: str | None = None  # a frame whose allocations are drawn in gold (from the frames table)
        self._colors: dict[str, Color] = {}

    # ---- geometry --------------------------------------------------------------------------------

    @property
    def chart_width(self) -> int:
        return max(self.size.width - GUTTER, 1)

    @property
    def chart_height(self) -> int:
        return max(self.size.height - 3 - bool(self.spans), 1)  # a status line above, the spans and the ruler below

    @property
    def t_first(self) -> int:
        return int(self.times[0]) if len(self.times) else 0

    @property
    def t_last(self) -> int:
        return int(self.times[-1]) if len(self.times) else 1

    def on_resize(self, event: events.Resize) -> None:
        if not event.size.width or not event.size.height:  # hidden (another tab): keep the view as it was
            return
        if self.view is None:  # the first paint: the whole history, the cursor on its peak
            self.action_reset()
            self.action_peak()
        else:
            self.view = resize(self.view, self.chart_width)
            self._changed()

    # ---- the cells, in a worker ------------------------------------------------------------------------

    def _changed(self) -> None:
        self.cursor = min(max(self.cursor, 0), self.chart_width - 1)
        key = (self.view, self.chart_height)
        if self.view is not None and key != self.cells_for and self.mem.curves is not None and self.size.height:
            self.compute(self.view, self.chart_height)
        self.refresh()
        self.post_message(self.CursorMoved(self.cursor_entry()))

    @work(thread=True, exclusive=True, group="snapshot-cells", description="Drawing the memory", exit_on_error=False)
    def compute(self, view: Viewport, height: int) -> None:
        assert self.mem.curves is not None
        cells = grid(self.mem.allocs, self.mem.curves, self.times, view.t0, view.bucket, view.width, height)
        self.app.call_from_thread(self._show, (view, height), cells)

    def _show(self, key: tuple, cells: Grid) -> None:
        if self.cells is not None and key[0] != self.view:  # overtaken: the cells of a newer window are coming
            return
        self.cells, self.cells_for = cells, key
        self.refresh()
        self.post_message(self.CursorMoved(self.cursor_entry()))

    @property
    def stale(self) -> bool:
        """The cells shown were made for another window (a new height only redraws them finer or coarser)."""
        return self.cells_for is None or self.cells_for[0] != self.view

    def cursor_entry(self) -> int:
        """The entry the cursor column shows (-2: past the last entry, the end; -1: before the first)."""
        if self.view is None or not len(self.times):
            return -2
        if self.cells is not None and not self.stale:
            e = int(self.cells.entry[self.cursor])
            if e >= 0:
                return e
        t = self.view.time_at(self.cursor + 0.5)
        return -2 if t > self.t_last else int(np.searchsorted(self.times, t, side="right")) - 1

    # ---- drawing -------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if self.mem.curves is None:
            text = " No history in this snapshot: the segment view (2) and the frames (3) show its state."
            return Strip([Segment(text[:width].ljust(width) if y == 0 else " " * width)], width)
        if y == 0:
            return Strip([Segment(self.status()[:width].ljust(width), RULER)], width)
        h = self.chart_height
        if y <= h:
            return Strip(self._row(h - y), width)
        if self.spans and y == h + 1:
            return Strip(self._spans_line(), width)
        below = y - h - 1 - bool(self.spans)
        return Strip([Segment(self._ruler(below)[:width].ljust(width), RULER)], width)

    def _spans_line(self) -> list[Segment]:
        """The annotated stretches under the chart, each a bar with its name."""
        out = [Segment("marks".rjust(GUTTER - 1) + "│", RULER)]
        v = self.view
        if v is None:
            return out
        cells = span_cells(self.spans, v.t0, v.bucket, v.width).tolist()
        k = 0
        while k < len(cells):
            run = k
            while run < len(cells) and cells[run] == cells[k]:
                run += 1
            n = run - k
            if cells[k] < 0:
                out.append(Segment(" " * n, style(None, BACKGROUND)))
            else:
                name = self.spans[cells[k]].name
                text = name[:n] if len(name) <= n else (name[: n - 1] + "…" if n > 1 else " ")
                out.append(Segment(text.ljust(n), SPAN))
            k = run
        return out

    def status(self) -> str:
        """The cursor's moment in words (and whether the cells are still being made)."""
        if self.cells is None:
            return " computing…"
        e = self.cursor_entry()
        c = self.mem.curves
        assert c is not None
        if e == -2:
            what = "the end: when the snapshot was taken"
            live, count = int(c.live[-1]), int(c.count[-1])
        elif e < 0:
            what = "before the history"
            live, count = c.live_before, c.count_before
        else:
            what = f"{fmt_dur(self.times[e] - self.t_first)} (entry {e + 1:,})" if self.timed else f"entry {e + 1:,}"
            live, count = int(c.live[e]), int(c.count[e])
        stale = " · computing…" if self.stale else ""
        return f" {what} · {fmt_memory(live)} live in {count:,} allocations{stale}"

    def _label_color(self, row: int) -> Color:
        label = label_of(self.mem.allocs, row, self.namer)
        color = self._colors.get(label)
        if color is None:
            color = self._colors[label] = frame_color(label)
        return color

    def _fill(self, row: int) -> Color:
        if row == self.selected:
            return SELECTED
        if self.highlight is not None and label_of(self.mem.allocs, row, self.namer) == self.highlight:
            return MATCH
        return self._label_color(row)

    def _row(self, r: int) -> list[Segment]:
        """One row of the chart (r from the bottom): the scale in the gutter, then a cell per column."""
        g = self.cells
        gutter = self._scale_label(r).rjust(GUTTER - 1) + "│"
        out = [Segment(gutter, RULER)]
        if g is None or r >= g.cells.shape[0]:  # no cells yet, or made for a lower window (a resize): blank till new
            return out + [Segment(" " * self.chart_width, style(None, BACKGROUND))]
        parts: list[tuple[str, Style]] = []
        for c in range(min(g.width, self.chart_width)):
            bg = CURSOR if c == self.cursor else BACKGROUND
            if r == g.top_row[c] and g.top_fill[c] > 0 and g.top[c] != EMPTY:
                level = max(int(round(g.top_fill[c] * 8)), 1)
                parts.append((LOWER[level], style(self._fill(int(g.top[c])), bg)))
                continue
            a = int(g.cells[r, c])
            if a == EMPTY:
                parts.append(("│" if c == self.cursor else " ", style(CURSOR, bg)))
            else:
                fill = self._fill(a)
                parts.append((" ", style(text_on(fill), fill)))
        return out + _merged(parts)

    def _scale_label(self, r: int) -> str:
        g, h = self.cells, self.chart_height
        if g is None:
            return ""
        if r == h - 1:
            return fmt_memory_gutter(g.scale)
        if r == 0:
            return fmt_memory_gutter(0)
        if r == h // 2 and h >= 6:
            return fmt_memory_gutter(g.scale * (r + 0.5) / h)
        return ""

    def _ruler(self, k: int) -> str:
        """Two lines: labels from the history's start, and tick marks with the cursor."""
        from .ruler import tick_step

        v = self.view
        if v is None:
            return ""
        if k == 0:
            return " " * GUTTER + _labels(v, self.t_first, tick_step(v.bucket), self.timed)
        marks = ["─"] * v.width
        if 0 <= self.cursor < v.width:
            marks[self.cursor] = "▲"
        span = fmt_dur(v.t1 - v.t0) if self.timed else f"{v.t1 - v.t0:,}"
        return span[: GUTTER - 1].rjust(GUTTER - 1) + "┴" + "".join(marks)

    # ---- actions ----------------------------------------------------------------------------------

    def action_reset(self) -> None:
        span = max(self.t_last - self.t_first, 1)
        self.view = fit(self.t_first, self.t_first + span, self.chart_width, margin=0.01)
        self._changed()

    def action_zoom(self, factor: int) -> None:
        if self.view is None:
            return
        at = self.view.time_at(self.cursor + 0.5)
        self.view = zoom(self.view, at, factor, self.cursor + 0.5)  # the cursor's column stays where it is
        self.cursor = min(int(self.view.col_of(at)), self.chart_width - 1)
        self._changed()

    def action_pan(self, steps: int) -> None:
        if self.view is not None:
            self.view = pan(self.view, steps * max(self.view.width // self.PAN_CELLS, 1))
            self._changed()

    def action_cursor(self, step: int) -> None:
        if self.view is None:
            return
        col = self.cursor + step
        if not 0 <= col < self.chart_width:  # past an edge: the view follows
            self.view = pan(self.view, step)
            col = self.cursor
        self.cursor = col
        self._changed()

    def action_band(self, step: int) -> None:
        """Select the allocation drawn above (or below) the selected one in the cursor's column."""
        g = self.cells
        if g is None or self.stale:
            return
        col = self.cursor
        rows = [r for r in range(g.height) if allocation_at(g, col, r) != EMPTY]
        if not rows:
            return
        mine = [r for r in rows if allocation_at(g, col, r) == self.selected]
        if not mine:
            target = rows[0] if step > 0 else rows[-1]
        else:
            beyond = [r for r in rows if (r > max(mine) if step > 0 else r < min(mine))]
            target = (beyond[0] if step > 0 else beyond[-1]) if beyond else (max(mine) if step > 0 else min(mine))
        self.select(allocation_at(g, col, target))

    def select(self, alloc: int) -> None:
        self.selected = int(alloc)
        self.refresh()
        self.post_message(self.Selected(self.selected))

    def _cursor_to(self, t: int) -> None:
        """Put the cursor on time t, panning the view to it when it is out of sight."""
        assert self.view is not None
        if not self.view.t0 <= t < self.view.t1:
            self.view = pan(self.view, int(self.view.col_of(t)) - self.view.width // 2)
        self.cursor = int(self.view.col_of(t))
        self._changed()

    def action_fit(self) -> None:
        a = self.mem.allocs
        if self.selected == EMPTY:
            return
        start, end = int(a.start_ns[self.selected]), int(a.end_ns[self.selected])
        end = min(end, self.t_last)
        self.view = fit(start, max(end, start + 1), self.chart_width)
        self.cursor = int(self.view.col_of((start + end) // 2))
        self._changed()

    def action_jump(self, to_free: bool) -> None:
        a = self.mem.allocs
        if self.selected == EMPTY or self.view is None:
            return
        t = int(a.end_ns[self.selected]) if to_free else int(a.start_ns[self.selected])
        self._cursor_to(min(t, self.t_last))

    def action_peak(self) -> None:
        c = self.mem.curves
        if c is None or self.view is None:
            return
        self._cursor_to(int(self.times[int(np.argmax(c.live))]))

    def action_oom(self) -> None:
        if not self.ooms or self.view is None:
            return
        now = self.view.time_at(self.cursor + 0.5)
        later = [e for e in self.ooms if self.times[e] > now + self.view.bucket]
        self._cursor_to(int(self.times[(later or self.ooms)[0]]))

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "oom":
            return bool(self.ooms)
        if action in ("fit", "jump"):
            return self.selected != EMPTY
        if action == "clear":
            return self.highlight is not None
        return True

    def on_click(self, event: events.Click) -> None:
        col, r = event.x - GUTTER, self.chart_height - event.y
        if self.view is None or not 0 <= col < self.chart_width or not 0 <= r < self.chart_height:
            return
        self.cursor = col
        if self.cells is not None and not self.stale:
            self.select(allocation_at(self.cells, col, r))
        self._changed()

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._wheel(event, -1)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._wheel(event, 1)

    def _wheel(self, event, factor: int) -> None:
        if self.view is not None and event.x >= GUTTER:
            event.stop()
            self.cursor = min(max(event.x - GUTTER, 0), self.chart_width - 1)
            self.action_zoom(factor)

    def action_clear(self) -> None:
        self.highlight = None
        self.refresh()

    def keybar_state(self) -> list[tuple[str, str]]:
        return [("x", f"gold: {self.highlight}")] if self.highlight else []


def frame_color(frame: str) -> Color:
    """The colour of a frame's allocations, stable across runs (grey: allocated before the history)."""
    return BEFORE if frame == BEFORE_HISTORY else color_of(frame)


def _labels(v: Viewport, origin: int, step: int, timed: bool = True) -> str:
    """Tick labels, relative to origin, at multiples of step (entry numbers on an axis of entries)."""
    from ..text.fmt import fmt_tick

    out = [" "] * v.width
    t = ((v.t0 - origin) // step + 1) * step + origin
    while t < v.t1:
        col = int(v.col_of(t))
        label = fmt_tick(t - origin, step) if timed else f"#{t - origin + 1:,}"
        if 0 <= col and col + len(label) < v.width and all(ch == " " for ch in out[col : col + len(label) + 1]):
            out[col : col + len(label)] = list(label)
        t += step
    return "".join(out)


def _merged(parts: list[tuple[str, Style]]) -> list[Segment]:
    out: list[Segment] = []
    text: list[str] = []
    current: Style | None = None
    for ch, st in parts:
        if st is not current and text:
            out.append(Segment("".join(text), current))
            text = []
        current = st
        text.append(ch)
    if text:
        out.append(Segment("".join(text), current))
    return out
