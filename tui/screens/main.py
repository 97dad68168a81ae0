"""The main screen: the views in tabs, the details panel, and the wiring between them.

The timeline paints as soon as the events are nested. Everything else (launch links, tables,
summary, notes) is computed by a background worker; a view that needs what is not ready yet says
"computing …" and appears when it is. The UI thread only reads what is ready.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Input, TabbedContent, TabPane
from textual.worker import get_current_worker

from ..messages import AnalysisReady, LoadProgress
from ..model.analyses.calltree import CallTree
from ..model.analyses.details import brief, describe
from ..model.analyses.rangeagg import RangeRow, aggregate_range
from ..model.analyses.results import Results
from ..model.view import navigate
from ..model.view.lanes import LaneIndex
from ..widgets.details import DetailsPanel
from ..widgets.phases import PhaseBars
from ..widgets.range_panel import RangePanel
from ..widgets.ruler import Ruler
from ..widgets.timeline import Timeline
from ..widgets.view_pane import ViewPane

if TYPE_CHECKING:
    from ..widgets.rows_view import RowsView
    from ..widgets.tree_view import CallTreeView

VIEWS = ("timeline", "tree", "ops", "kernels", "overview")
# What the background worker computes, phase by phase, in the order the views want it.
BACKGROUND = (
    ("link", ("links", "_children_csr", "self_ns", "launches_below", "gpu_below")),
    ("aggregate", ("ops", "kernels", "kernel_footprints", "summary", "findings", "notes", "ops_by_shape")),
)
DETAILS_NEED = ("links", "_children_csr", "self_ns", "launches_below")
FOCUS = {"timeline": "Timeline", "tree": "CallTreeView", "ops": "OpsView DataTable", "kernels": "KernelsView DataTable"}


class SearchDone(Message):
    def __init__(self, pattern: str, matches) -> None:
        super().__init__()
        self.pattern, self.matches = pattern, matches


class RangeDone(Message):
    def __init__(self, span: tuple[int, int], rows: list[RangeRow]) -> None:
        super().__init__()
        self.span, self.rows = span, rows


class MainScreen(Screen):
    """Attributes down to the widgets, messages up from them."""

    def __init__(self, analysis: Results, lanes: LaneIndex, title: str) -> None:
        super().__init__()
        self.analysis, self.lanes, self.title_text = analysis, lanes, title
        self.selected = -1

    def _panes(self) -> list[ViewPane]:
        """The other views, imported and made on their first visit: the first paint waits for none of them."""
        from ..widgets.kernels_view import KernelsView
        from ..widgets.ops_view import OpsView
        from ..widgets.overview import OverviewView
        from ..widgets.tree_view import CallTreeView

        a = self.analysis
        return [
            ViewPane(
                "2 Tree",
                ("_children_csr", "self_ns", "gpu_below"),
                lambda: CallTreeView(CallTree(a), id="calltree"),
                id="tree",
            ),
            ViewPane("3 Ops", ("ops", "ops_by_shape"), lambda: OpsView(a, id="opsview"), id="ops"),
            ViewPane(
                "4 Kernels", ("kernels", "kernel_footprints"), lambda: KernelsView(a, id="kernelsview"), id="kernels"
            ),
            ViewPane("5 Overview", ("summary", "ops", "kernels", "findings"), lambda: OverviewView(a), id="overview"),
        ]

    def compose(self) -> ComposeResult:
        with TabbedContent(initial="timeline"):
            with TabPane("1 Timeline", id="timeline"), Vertical():
                yield Ruler(self.lanes.t_min if self.lanes.rows else 0)
                yield Timeline(self.analysis, self.lanes, id="lanes")
                yield Input(
                    placeholder="search event names (regular expression); Enter to search, Esc to cancel", id="search"
                )
                yield RangePanel(id="range")
            yield from self._panes()
        yield DetailsPanel(id="details")
        yield PhaseBars(("link", "aggregate"), id="background")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = self.title_text
        self.query_one("#search", Input).display = False
        self.query_one(RangePanel).display = False
        self.query_one(DetailsPanel).show(None)
        self.query_one(Timeline).focus()
        self.analyze()

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    # ---- the background worker ---------------------------------------------------------------

    @work(thread=True, exclusive=True, group="analyses", description="Analysing the trace")
    def analyze(self) -> None:
        """Compute every analysis off the UI thread, posting each as it becomes ready."""
        worker = get_current_worker()
        for phase, names in BACKGROUND:
            for k, name in enumerate(names, 1):
                if worker.is_cancelled:
                    return
                getattr(self.analysis, name)
                self.post_message(AnalysisReady(name))
                self.post_message(LoadProgress(phase, k / len(names)))
        for scaffold in ("op_times", "_launch_tree"):  # per-event intermediates the tables no longer need
            self.analysis.forget(scaffold)

    def progress(self, phase: str, fraction: float) -> None:
        bars = self.query_one("#background", PhaseBars)
        bars.progress(phase, fraction)
        bars.display = not bars.done

    def on_load_progress(self, message: LoadProgress) -> None:
        message.stop()
        self.progress(message.phase, message.fraction)

    def on_analysis_ready(self, message: AnalysisReady) -> None:
        for pane in self.query(ViewPane):
            if pane.visited:
                pane.ensure(self.analysis)
        if message.name in DETAILS_NEED + ("notes",) and self.selected >= 0:
            self._show_details(self.selected)
        if message.name == self.query_one(TabbedContent).active or message.name in ("ops", "kernels"):
            self.call_after_refresh(self._focus_view, self.active_view)

    # ---- views -------------------------------------------------------------------------------

    def ensure_view(self, name: str) -> None:
        if name != "timeline":
            self.query_one(f"ViewPane#{name}", ViewPane).ensure(self.analysis)

    def show_view(self, name: str) -> None:
        self.ensure_view(name)
        self.query_one(TabbedContent).active = name
        self.call_after_refresh(self._focus_view, name)

    def _focus_view(self, name: str) -> None:
        from ..widgets.tree_view import CallTreeView

        if name == "tree" and self.selected >= 0 and self.query(CallTreeView):
            self.query_one(CallTreeView).reveal(self.selected)
        target = FOCUS.get(name)
        if target and self.query(target):
            self.query_one(target).focus()

    @property
    def active_view(self) -> str:
        return self.query_one(TabbedContent).active

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        name = event.pane.id or ""
        self.ensure_view(name)
        self.query_one(DetailsPanel).display = name in ("timeline", "tree")

    # ---- the selection -----------------------------------------------------------------------

    def on_timeline_selection_changed(self, message: Timeline.SelectionChanged) -> None:
        self.selected = message.event
        self._show_details(message.event)

    def _show_details(self, event: int) -> None:
        panel, a = self.query_one(DetailsPanel), self.analysis
        if event < 0:
            panel.show(None)
        elif all(a.ready(n) for n in DETAILS_NEED):
            notes = a.peek("notes")
            panel.show(describe(a, event, self.lanes.t_min), notes.notes(event) if notes is not None else None)
        else:
            panel.show(brief(a, event, self.lanes.t_min), None)

    def on_timeline_details_requested(self, message: Timeline.DetailsRequested) -> None:
        panel = self.query_one(DetailsPanel)
        panel.display = not panel.display

    def on_timeline_view_changed(self, message: Timeline.ViewChanged) -> None:
        self.query_one(Ruler).show(message.view, message.mark, message.name_cols)

    # ---- marked range and search, computed in workers ----------------------------------------

    def on_timeline_range_marked(self, message: Timeline.RangeMarked) -> None:
        panel = self.query_one(RangePanel)
        panel.display = message.span is not None
        if message.span is not None:
            panel.computing(message.span)
            self.aggregate(message.span)

    @work(thread=True, exclusive=True, group="range", description="Aggregating the marked range")
    def aggregate(self, span: tuple[int, int]) -> None:
        self.post_message(RangeDone(span, aggregate_range(self.analysis, *span)))

    def on_range_done(self, message: RangeDone) -> None:
        if self.timeline.mark == message.span:
            self.query_one(RangePanel).show(message.rows, message.span)

    def on_timeline_search_requested(self, _message: Timeline.SearchRequested) -> None:
        box = self.query_one("#search", Input)
        box.display = True
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "search":
            return
        event.stop()
        self.search(event.value)

    def search(self, pattern: str) -> bool:
        """Start highlighting the events matching pattern (in a worker); False for a bad expression."""
        try:
            rx = re.compile(pattern or "(?!)", re.IGNORECASE)
        except re.error as exc:
            self.notify(f"bad regular expression: {exc}", severity="error")
            return False
        self.query_one("#search", Input).display = False
        self.timeline.focus()
        self.find(pattern, rx)
        return True

    @work(thread=True, exclusive=True, group="search", description="Searching event names")
    def find(self, pattern: str, rx: re.Pattern) -> None:
        self.post_message(SearchDone(pattern, navigate.search(self.analysis, rx)))

    def on_search_done(self, message: SearchDone) -> None:
        self.timeline.set_matches(message.matches)
        self.notify(f"{len(message.matches):,} match(es) for /{message.pattern}/; n and N move between them", timeout=3)

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
