"""The main screen: five views in tabs, the details panel, and the wiring between them."""

from __future__ import annotations

import re

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, TabbedContent, TabPane

from ..model.analyses.calltree import CallTree
from ..model.analyses.details import describe
from ..model.analyses.rangeagg import aggregate_range
from ..model.analyses.results import Results
from ..model.view import navigate
from ..model.view.lanes import LaneIndex
from ..widgets.details import DetailsPanel
from ..widgets.kernels_view import KernelsView
from ..widgets.ops_view import OpsView
from ..widgets.overview import OverviewView
from ..widgets.range_panel import RangePanel
from ..widgets.rows_view import RowsView
from ..widgets.ruler import Ruler
from ..widgets.timeline import Timeline
from ..widgets.tree_view import CallTreeView

VIEWS = ("timeline", "tree", "ops", "kernels", "overview")


class MainScreen(Screen):
    """Attributes down to the widgets, messages up from them."""

    def __init__(self, analysis: Results, lanes: LaneIndex, title: str) -> None:
        super().__init__()
        self.analysis, self.lanes, self.title_text = analysis, lanes, title
        self.selected = -1

    def compose(self) -> ComposeResult:
        with TabbedContent(initial="timeline"):
            with TabPane("1 Timeline", id="timeline"), Vertical():
                yield Ruler(self.lanes.t_min if self.lanes.rows else 0)
                yield Timeline(self.analysis, self.lanes, id="lanes")
                yield Input(
                    placeholder="search event names (regular expression); Enter to search, Esc to cancel", id="search"
                )
                yield RangePanel(id="range")
            for k, name in enumerate(VIEWS[1:], 2):
                yield TabPane(f"{k} {name.title()}", id=name)  # filled on first visit
        yield DetailsPanel(id="details")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = self.title_text
        self.query_one("#search", Input).display = False
        self.query_one(RangePanel).display = False
        self.query_one(DetailsPanel).show(None)
        self.query_one(Timeline).focus()

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    # ---- views -------------------------------------------------------------------------------

    def _build(self, name: str):
        """The widget of a view, made on its first visit so the timeline paints first."""
        return {
            "tree": lambda: CallTreeView(CallTree(self.analysis), id="calltree"),
            "ops": lambda: OpsView(self.analysis, id="opsview"),
            "kernels": lambda: KernelsView(self.analysis, id="kernelsview"),
            "overview": lambda: OverviewView(self.analysis),
        }[name]()

    def ensure_view(self, name: str) -> None:
        pane = self.query_one(f"TabPane#{name}", TabPane)
        if name != "timeline" and not pane.children:
            pane.mount(self._build(name))

    def show_view(self, name: str) -> None:
        self.ensure_view(name)
        tabs = self.query_one(TabbedContent)
        tabs.active = name
        self.call_after_refresh(self._focus_view, name)

    def _focus_view(self, name: str) -> None:
        if name == "tree" and self.selected >= 0:
            self.query_one(CallTreeView).reveal(self.selected)
        target = {
            "timeline": "Timeline",
            "tree": "CallTreeView",
            "ops": "OpsView DataTable",
            "kernels": "KernelsView DataTable",
        }.get(name)
        if target:
            self.query_one(target).focus()

    @property
    def active_view(self) -> str:
        return self.query_one(TabbedContent).active

    # ---- messages up -------------------------------------------------------------------------

    def on_timeline_selection_changed(self, message: Timeline.SelectionChanged) -> None:
        self.selected = message.event
        panel = self.query_one(DetailsPanel)
        if message.event < 0:
            panel.show(None)
            return
        notes = self.analysis.notes.get(message.event, [])
        panel.show(describe(self.analysis, message.event, self.lanes.t_min), notes)

    def on_timeline_details_requested(self, message: Timeline.DetailsRequested) -> None:
        panel = self.query_one(DetailsPanel)
        panel.display = not panel.display

    def on_timeline_view_changed(self, message: Timeline.ViewChanged) -> None:
        self.query_one(Ruler).show(message.view, message.mark, message.name_cols)

    def on_timeline_range_marked(self, message: Timeline.RangeMarked) -> None:
        panel = self.query_one(RangePanel)
        panel.display = message.span is not None
        if message.span is not None:
            panel.show(aggregate_range(self.analysis, *message.span), message.span)

    def on_timeline_search_requested(self, _message: Timeline.SearchRequested) -> None:
        box = self.query_one("#search", Input)
        box.display = True
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "search":
            return
        event.stop()
        self.search(event.value)

    def search(self, pattern: str) -> int:
        """Highlight the events matching pattern on the timeline; returns the match count."""
        box = self.query_one("#search", Input)
        try:
            matches = navigate.search(self.analysis, pattern) if pattern else navigate.search(self.analysis, "(?!)")
        except re.error as exc:
            self.notify(f"bad regular expression: {exc}", severity="error")
            return 0
        box.display = False
        self.timeline.focus()
        self.timeline.set_matches(matches)
        self.notify(f"{len(matches):,} match(es) for /{pattern}/; n and N move between them", timeout=3)
        return len(matches)

    def on_key(self, event) -> None:
        box = self.query_one("#search", Input)
        if event.key == "escape" and box.has_focus:
            box.display = False
            self.timeline.focus()
            event.stop()

    def on_rows_view_jump(self, message: RowsView.Jump) -> None:
        self.show_view("timeline")
        self.search("^" + re.escape(message.name) + "$")

    def on_call_tree_view_show(self, message: CallTreeView.Show) -> None:
        self.show_view("timeline")
        self.timeline.select(message.event)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        name = event.pane.id or ""
        self.ensure_view(name)
        self.query_one(DetailsPanel).display = name in ("timeline", "tree")
