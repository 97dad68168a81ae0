"""The details panel beside the timeline and the tree, and the line that names the selection when it is closed.

Mixed into the main screen. The panel shows everything about the selected event (all of it once the
launch links are ready, its basics before), from its top whenever the event changes. Its rows are shared
with the lanes by room.share: the lanes keep six rows at least; with too little room the panel is a line
naming the selection, and Enter opens the details over the lanes (DetailsOverlay).

The panel is the view's that opened it (details_open: the views it is open in), never carried to another: the
timeline's is open from the start (the legend, the load's notes, then the selection), the tree's once Enter
asks for it there; Esc closes the panel of the view shown. Shown again, a view's panel is about its own
selection (the timeline's event, the tree's node). A fresh-eyes run at 80x24: the panel opened on the timeline
stayed over the tree, about the timeline's event, until Esc.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.screen import Screen
from textual.widgets import Input

from ..model.analyses.details import brief, describe
from ..model.analyses.memory import memory_at
from ..model.analyses.results import Results
from ..model.analyses.roofline.achieved import roofline_at
from ..views.planner import DETAILS
from ..views.room import share
from ..widgets.phases import PhaseBars
from ..widgets.selection_line import NOTHING, NOTHING_IN_TREE, SelectionLine
from ..widgets.timeline import Timeline

if TYPE_CHECKING:
    from ..model.analysis import Analysis
    from ..model.view.lanes import LaneIndex
    from ..widgets.details import DetailsPanel, Merged
    from ..widgets.tree_view import CallTreeView
    from ..widgets.view_pane import ViewPane

    _Screen = Screen
else:
    _Screen = object


class ShowsDetails(_Screen):
    """The main screen's details panel and selection line (it sets details_open, shown_details, details_event)."""

    details_open: set[str]
    shown_details: tuple
    details_event: int
    details_merged: Merged | None
    analysis: Results
    origin: int
    lanes: LaneIndex
    view_name: str
    selected: int

    if TYPE_CHECKING:

        @property
        def structure(self) -> Analysis: ...
        @property
        def details(self) -> DetailsPanel: ...
        @property
        def range_panel(self) -> Any: ...
        @property
        def timeline(self) -> Timeline: ...
        def pane(self, name: str) -> ViewPane: ...
        def _close_search(self) -> None: ...
        def focus_view(self) -> None: ...

    def _show_details(self, event: int, merged: Merged | None = None) -> None:
        """The event in the details panel (from its top when it is another event) and in the selection line.
        merged: the tree row the event is the first of, when the row stands for more than one (the panel says so)."""
        self.shown_details = self._details_of(event, merged)
        self.details.show(*self.shown_details)
        if (event, merged) != (self.details_event, self.details_merged):
            self.details_event, self.details_merged = event, merged
            self.details.scroll_home(animate=False)
        self._say_selection(event)

    def _say_selection(self, event: int) -> None:
        """The selection line names the event, or says how the view shown picks one."""
        nothing = NOTHING_IN_TREE if self.view_name == "tree" else NOTHING
        self.query_one(SelectionLine).show(self.structure, event, self.origin, self.lanes.titles, nothing)

    def _details_of(self, event: int, merged: Merged | None = None) -> tuple:
        """What the details panel shows of an event (DetailsPanel.show's arguments): all of it once the links are
        ready, its basics before."""
        a = self.structure
        if event < 0:
            return (None,)
        if not (all(a.ready(r) for r in DETAILS) and self.analysis.ready(Results.links)):
            return (brief(a, event, self.origin), None, None, None, merged)
        notes = self.analysis.peek(Results.notes)
        full = self.analysis if self.analysis.ready(Results.nesting) else None  # the code stack: frames nested
        details = describe(a, event, self.origin, frames=full)
        curves = self.analysis.peek(Results.memory_curves)
        memory = memory_at(self.analysis, curves, int(a.trace.x.ts[event])) if curves else None
        roof = self.analysis.peek(Results.roofline)  # two binary searches: cheap on the UI thread
        at = roofline_at(roof, event) if roof is not None else None
        return (details, notes.notes(event) if notes is not None else None, memory, at, merged)

    def fit_panels(self) -> None:
        """Share the rows (room.py): the timeline keeps six lane rows; the details panel, or one line, below."""
        if not self.is_mounted:
            return
        pane = self.pane(self.view_name)
        bars = self.query_one("#background", PhaseBars)
        rows = share(
            self.size.height,
            2 if bars.display else 0,
            pane.id == "timeline",
            bool(self.range_panel.display),
            bool(self.query_one("#search", Input).display),
            self._status_rows(),
            len(self.timeline.lines) if pane.id == "timeline" and self.query(Timeline) else 0,
        )
        if rows.range:
            self.range_panel.styles.height = rows.range
        panel = self.details
        panel.display = pane.spec.details and pane.id in self.details_open and rows.details > 0
        if panel.display:
            panel.styles.max_height = rows.details
        self.query_one(SelectionLine).display = pane.spec.details and not panel.display
        self.refresh_bindings()  # Esc closes the panel, or goes back: the key bar says which

    def _status_rows(self) -> int:
        """The critical path's line under the lanes: two rows at most while it shows."""
        from ..widgets.critical_line import CriticalLine

        lines = self.query(CriticalLine)
        return 2 if lines and lines.first().display else 0

    def on_resize(self) -> None:
        self.fit_panels()

    def on_timeline_lines_changed(self, _message: Timeline.LinesChanged) -> None:
        """More or fewer lane rows (value lanes computed, a lane collapsed, frames shown): the details' room changed."""
        self.fit_panels()

    def on_timeline_details_requested(self, message: Timeline.DetailsRequested) -> None:
        self._details_requested("timeline")

    def on_call_tree_view_details_requested(self, message: CallTreeView.DetailsRequested) -> None:
        message.stop()
        self._details_requested("tree")

    def _details_requested(self, view: str) -> None:
        """Enter in a view: open its details panel at its top (over the view when there is no room below it), or
        (open already) move into it to scroll."""
        panel = self.details
        if panel.display:
            self.set_focus(panel)
            return
        self.details_open.add(view)
        self.fit_panels()
        panel.scroll_home(animate=False)
        if not panel.display:
            from .details_overlay import DetailsOverlay

            self.app.push_screen(DetailsOverlay(self.shown_details))

    def show_views_details(self, pane: ViewPane, revealing: bool = False) -> None:
        """A view shown: the details panel, and the selection line, about that view's own selection (the
        timeline's event, the tree's node), not the one another view showed last. revealing: the tree is moving
        to the timeline's selection (its node is said once it is there)."""
        if not pane.spec.details:
            return
        event, merged = self.selected, None  # the timeline's
        if pane.id == "tree" and not revealing:
            from ..widgets.tree_view import CallTreeView

            trees = pane.query(CallTreeView) if pane.showing else None
            tree = trees.first() if trees else None
            data = tree.cursor_node.data if tree is not None and tree.cursor_node is not None else None
            event = -1
            if tree is not None and data is not None and len(data.events):
                event, merged = tree.first_event(data), tree.merged(data)
        if (event, merged) != (self.details_event, self.details_merged):
            self._show_details(event, merged)
        else:
            self._say_selection(event)  # its words for nothing selected are the view's

    def action_close_details(self) -> None:
        if self.query_one("#search", Input).has_focus:
            self._close_search()
            return
        self.details_open.discard(self.view_name)
        self.fit_panels()
        self.focus_view()

    def _closable(self) -> bool:
        return bool(self.details.display) or self.query_one("#search", Input).has_focus
