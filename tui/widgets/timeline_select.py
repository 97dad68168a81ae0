"""The timeline's selection: keys that move it (events, parents, children, launch links), jumps to an event from
elsewhere, the marked range and collapsed lanes, the search's matches, and the critical path marked; the keys that
ask the screen for the path, a what-if or the details."""

from __future__ import annotations

import numpy as np

from ..model.analysis import Analysis
from ..model.sets import distinct
from ..model.view import navigate
from ..model.view.viewport import frame, pan
from .timeline_draw import LaneState, path_rows


class SelectsEvents(LaneState):
    """Selection, search and the path's mark."""

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

    def set_path(self, events: np.ndarray | None) -> None:
        """Mark a critical path (its events highlighted, the rest dimmed), or clear it (None)."""
        self.path_mask, self._path_rows = None, {}
        if events is not None:
            a = self.analysis
            self.path_mask = np.zeros(a.trace.n, bool)
            self.path_mask[events] = True
            self._path_rows = path_rows(a, distinct(events))
        self.refresh_bindings()
        self.refresh()

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
