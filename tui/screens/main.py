"""The main screen: the registry's views in tabs, the details panel, and the wiring between them.

The timeline paints as soon as the events are nested. Everything else (launch links, tables,
summary, notes) is computed by a background worker in the order the planner gives; a view that
needs what is not ready yet says "computing …" and appears when it is. The UI thread only reads
what is ready. A result that fails is said in the panes that need it; the rest carries on.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input, TabbedContent
from textual.worker import get_current_worker

from ..appkit import faults, pace
from ..appkit.messages import AnalysisFailed, AnalysisReady, LoadProgress
from ..model.analyses.ops import table_name
from ..model.analyses.results import Results
from ..model.analysis import Analysis
from ..model.load import behind
from ..model.pattern import NOTHING, BadPattern, Matcher, compile_name_pattern
from ..model.view import navigate
from ..model.view.lanes import LaneIndex
from ..process.gcpolicy import keep_long_lived
from ..process.heap import give_back
from ..text.sanitize import visible
from ..views.planner import DETAILS, STRUCTURE, plan
from ..views.registry import MAIN, key_bindings, spec_of
from ..views.showing import ShowsViews
from ..widgets.details import DetailsPanel
from ..widgets.failures import ReportsFailedWorkers
from ..widgets.keybar import KeyBar
from ..widgets.phases import PhaseBars
from ..widgets.selection_line import SelectionLine
from ..widgets.timeline import Timeline
from ..widgets.view_pane import ViewPane, focus_target
from .critical_side import ShowsCritical
from .details_side import ShowsDetails
from .messages import RangeDone, RanksCompared, SearchDone, SeriesReady, StructureReady

if TYPE_CHECKING:
    from ..widgets.rows_view import RowsView
    from ..widgets.tree_view import CallTreeView

FRAME_LEVELS_SHOWN = 3  # deeper Python stacks than this are hidden by default (p shows them)
STEP_ROW = table_name("ProfilerStep#1")  # the one row the ops table gives every ProfilerStep#N


def row_pattern(name: str) -> str:
    """The events a table row's name stands for: the row itself, or every ProfilerStep#N for its one row."""
    return r"^ProfilerStep#\d+$" if name == STEP_ROW else "^" + re.escape(name) + "$"


class MainScreen(ShowsDetails, ShowsCritical, ShowsViews, ReportsFailedWorkers, Screen):
    """Attributes down to the widgets, messages up from them."""

    HELP_NAME = "Everywhere"
    BINDINGS = [
        *key_bindings(MAIN),
        Binding("p", "python(True)", "Hide Python frames", id="main.hide_python"),
        Binding("p", "python(False)", "Show Python frames", id="main.show_python"),
        Binding("C", "compare_ranks", "Compare ranks", id="main.compare_ranks"),
        Binding("escape", "close_details", "Close the details panel", show=False, id="main.close_details"),
        Binding("escape", "back_home", "Back to the watch", id="main.back_home"),
    ]

    def __init__(
        self,
        analysis: Results,
        lanes: LaneIndex,
        title: str,
        hide_python: bool = False,
        initial: str = "timeline",
        legend: str | None = None,
        notes: list[tuple[str, str]] | None = None,
    ) -> None:
        super().__init__()
        self.legend = legend  # the first open's: said in the details panel, below the lanes, until a selection
        self.notes = notes or []  # what the load had to say (level, text): in the details panel, else toasts
        self.analysis, self.lanes, self.title_text = analysis, lanes, title
        self.hide_python = hide_python
        self.view_name = initial  # the view shown, and where the focus goes (tui/views/showing.py)
        self.reveal_pending = False  # the tree, once shown, moves to the selection
        self.origin = analysis.trace.origin  # time zero: never moved by showing or hiding frames
        self.selected = -1
        self.failures: dict[str, tuple[str, object]] = {}  # result name -> (one line, log path)
        self.cache_told: set[str] = set()  # cache writes that failed, said once each
        self.details_open = {"timeline"} | {s.name for s in MAIN if s.name == initial and s.details}  # details_side.py
        self.shown_details: tuple = (None,)  # what the details panel shows (DetailsPanel.show's arguments)
        self.details_event = -1  # the event they are about: another one starts the panel at its top
        self.details_merged = None  # the tree row it is the first event of, when the row stands for more than one
        self.pending_search: str | None = None  # run once the nesting with frames is ready
        self.marked_path = None  # the critical path b marked last (critical_side.py)

    @property
    def structure(self) -> Analysis:
        """The nesting the timeline, the tree and the details show: with or without Python frames."""
        return self.analysis.frameless if self.hide_python else self.analysis

    def compose(self) -> ComposeResult:
        with TabbedContent(initial=self.view_name):
            for spec in MAIN:
                yield ViewPane(spec, self)
        panel = DetailsPanel(id="details", legend=self.legend)
        panel.display = any(
            spec.details for spec in MAIN if spec.name == self.view_name
        )  # not a frame over the overview
        if panel.display:  # the notes under the lanes; on a view without the panel (profile's overview), toasts
            panel.notes = self.notes
        yield panel
        yield SelectionLine(id="selection")
        yield PhaseBars(("link", "aggregate"), id="background")
        yield KeyBar()

    async def on_mount(self) -> None:
        self.sub_title = visible(self.title_text)  # the file's name: data, never terminal input
        self.query_one("#search", Input).display = False
        self.range_panel.display = False
        self._show_details(-1)
        if not self.details.notes:
            for level, text in self.notes:
                self.notify(text, title=level, severity="warning" if level == "warning" else "information", timeout=10)
        self.call_after_refresh(self.fit_panels)
        self.analyze(self.view_name)
        await self.settle_view(take_focus=True)

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    @property
    def details(self) -> DetailsPanel:
        return self.query_one(DetailsPanel)

    @property
    def range_panel(self):
        from ..widgets.range_panel import RangePanel

        return self.query_one(RangePanel)

    # ---- the background worker ---------------------------------------------------------------

    @work(thread=True, exclusive=True, group="analyses", description="Analysing the trace", exit_on_error=False)
    def analyze(self, first: str = "timeline") -> None:
        """Compute every result off the UI thread in the planner's order, posting each as it is ready (or failed)."""
        worker = get_current_worker()
        jobs = plan(self.analysis, self.structure, spec_of(MAIN, first))
        for k, (source, result) in enumerate(jobs):
            if worker.is_cancelled:
                return
            try:
                source.compute(result)
            except Exception as exc:  # noqa: BLE001 - one failed result stays in the panes that need it
                pace.post(self, AnalysisFailed(result, faults.one_line(exc), faults.record(result.name, exc)))
            else:
                pace.post(self, AnalysisReady(result))
                if result is Results.memory_curves or result is Results.launch_queues:
                    pace.post(self, SeriesReady(self._value_lanes()))
            phase = result.phase
            done = sum(1 for _, r in jobs[: k + 1] if r.phase == phase) / sum(1 for _, r in jobs if r.phase == phase)
            self.post_message(LoadProgress("link" if phase == "structure" else phase, done))
        scaffolds = (Results.op_times, Results.op_times_frames, Results._launch_tree, Results.time_nesting)
        for scaffold in scaffolds:  # the tables no longer need
            self.analysis.forget(scaffold)
        keep_long_lived()
        give_back()  # the analyses' temporaries, kept while they ran (heap.py)
        for problem in behind.problems():  # the cache entry, written behind the analyses (a full disk)
            pace.call_from(self.app, self._cache_problem, problem)

    def _cache_problem(self, text: str) -> None:
        if text not in self.cache_told:
            self.cache_told.add(text)
            self.notify(text, title="cache", severity="warning", timeout=10)

    def _value_lanes(self) -> list:
        """The value lanes whose results are ready (memory and counters, launch queues); in the worker."""
        from ..widgets.timeline import launch_queue_lanes, value_lanes

        a = self.analysis
        memory = value_lanes(a) if a.ready(Results.memory_curves) else []
        return memory + (launch_queue_lanes(a) if a.ready(Results.launch_queues) else [])

    def record_failure(self, what: str, exc: BaseException) -> object:
        """Log a failure of the UI's own (a view that could not be built); the log's path."""
        return faults.record(what, exc)

    def on_series_ready(self, message: SeriesReady) -> None:
        if message.series:
            self.timeline.set_series(message.series)

    def progress(self, phase: str, fraction: float) -> None:
        bars = self.query_one("#background", PhaseBars)
        bars.progress(phase, fraction)
        if bars.display == bars.done:
            bars.display = not bars.done
            self.fit_panels()

    def on_load_progress(self, message: LoadProgress) -> None:
        message.stop()
        self.progress(message.phase, message.fraction)

    async def on_analysis_failed(self, message: AnalysisFailed) -> None:
        self.failures[message.result.name] = (message.line, message.log)
        await self._panes_changed()

    async def on_analysis_ready(self, message: AnalysisReady) -> None:
        if message.result in DETAILS + (Results.notes, Results.links) and self.details_event >= 0:  # more to say
            self._show_details(self.details_event, self.details_merged)
        if message.result is Results.links:  # ] and [ offered, or not, once the links are known
            self.timeline.refresh_bindings()
        if message.result is Results.critical:  # the overview's verdict gains the path's breakdown
            for overview in self.query("OverviewView"):
                overview.redraw()  # type: ignore[attr-defined]
        await self._panes_changed()

    async def _panes_changed(self) -> None:
        """Views visited while computing are made once their results are ready; the one shown takes the focus."""
        for pane in self.query(ViewPane):
            if pane.visited and not pane.showing and pane.id != self.view_name:
                pane.ensure()
        await self.settle_view()

    # ---- views -------------------------------------------------------------------------------

    async def show_view(self, name: str) -> None:
        self.reveal_pending = name == "tree"
        await super().show_view(name)

    def view_settled(self, pane: ViewPane) -> None:
        """Each view's own details panel beside it (details_side.py); the tree, once made, at the selection."""
        from ..widgets.tree_view import CallTreeView

        revealing = False  # the tree moves to the selection: its node follows in the details (on its highlight)
        if pane.id == "tree" and self.reveal_pending and pane.showing:
            self.reveal_pending = False
            if self.selected >= 0:
                revealing = pane.query_one(CallTreeView).reveal(self.selected)
        self.show_views_details(pane, revealing)
        self.fit_panels()

    def focus_view(self) -> None:
        """The focus back in the view shown (from the details panel or the search box)."""
        pane = self.pane(self.view_name)
        self.set_focus(focus_target(pane) if pane.showing else None)

    # ---- the selection and the details panel -------------------------------------------------

    def on_timeline_selection_changed(self, message: Timeline.SelectionChanged) -> None:
        self.selected = message.event
        self._show_details(message.event)

    def on_timeline_view_changed(self, message: Timeline.ViewChanged) -> None:
        from ..widgets.ruler import Ruler

        self.query_one(Ruler).show(message.view, message.mark, message.name_cols)

    # ---- marked range and search, computed in workers ----------------------------------------

    def on_timeline_range_marked(self, message: Timeline.RangeMarked) -> None:
        panel = self.range_panel
        panel.display = message.span is not None
        self.fit_panels()
        if message.span is not None:
            panel.computing(message.span)
            self.aggregate(message.span)

    @work(thread=True, exclusive=True, group="range", description="Aggregating the marked range", exit_on_error=False)
    def aggregate(self, span: tuple[int, int]) -> None:
        from ..model.analyses.rangeagg import aggregate_range

        pace.post(self, RangeDone(span, aggregate_range(self.structure, *span)))

    def on_range_done(self, message: RangeDone) -> None:
        if self.timeline.mark == message.span:
            self.range_panel.show(message.rows, message.span)

    def on_timeline_search_requested(self, _message: Timeline.SearchRequested) -> None:
        box = self.query_one("#search", Input)
        box.display = True
        self.fit_panels()
        self.set_focus(box)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "search":
            return
        event.stop()
        self.search(event.value)

    def search(self, pattern: str) -> bool:
        """Start highlighting the events matching pattern (in a worker); False for a bad expression."""
        try:
            rx = compile_name_pattern(pattern) if pattern else NOTHING
        except BadPattern as exc:
            self.notify(f"bad regular expression: {exc}", severity="error")
            return False
        self._close_search()
        self.find(pattern, rx)
        return True

    def _close_search(self) -> None:
        self.query_one("#search", Input).display = False
        self.fit_panels()
        self.focus_view()

    @work(thread=True, exclusive=True, group="search", description="Searching event names", exit_on_error=False)
    def find(self, pattern: str, rx: Matcher, shapes: str | None = None) -> None:
        found = navigate.search(self.structure, rx)
        if shapes is not None:
            from ..model.analyses.ops import of_shapes

            found = of_shapes(self.analysis.trace, found, shapes)
        pace.post(self, SearchDone(pattern, found))

    def on_search_done(self, message: SearchDone) -> None:
        self.timeline.set_matches(message.matches, message.pattern)  # the key bar says how many (n, N move)
        self.refresh_bindings()

    # ---- Python frames shown or hidden -------------------------------------------------------

    def keybar_state(self) -> list[tuple[str, str]]:
        """Python frames hidden or shown, for the key bar, said as what p does ("p frames shown" read as an order)."""
        if not self.analysis.peek(Results.frame_levels):
            return []
        return [("p", "show frames" if self.hide_python else "hide frames")]

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "python":  # one of the two p bindings at a time: the footer says the state
            levels = self.analysis.peek(Results.frame_levels)
            return bool(levels) and parameters[0] != self.hide_python
        if action == "compare_ranks":
            return len(self.ranks) > 1
        if action == "close_details":
            return self._closable()
        if action == "back_home":  # Esc backs out one level: what is open here first, then the viewer
            return getattr(self.app, "home", lambda: None)() is not None and not self._closable()
        return True

    def action_back_home(self) -> None:
        self.app.back_home()  # type: ignore[attr-defined]

    def action_python(self, hide: bool) -> None:
        if not self.analysis.peek(Results.frame_levels):
            self.notify("no Python frames in this trace (capture with with_stack=True)", timeout=3)
            return
        self.notify("nesting the events " + ("without" if hide else "with") + " their Python frames …", timeout=2)
        self.restructure(hide)

    @work(
        thread=True,
        exclusive=True,
        group="structure",
        description="Nesting with or without Python frames",
        exit_on_error=False,
    )
    def restructure(self, hide: bool) -> None:
        structure = self.analysis.frameless if hide else self.analysis
        lanes = LaneIndex(structure)
        for result in STRUCTURE:
            structure.compute(result)
        if not get_current_worker().is_cancelled:
            pace.post(self, StructureReady(hide, lanes))

    async def on_structure_ready(self, message: StructureReady) -> None:
        self.hide_python, self.lanes = message.hide_python, message.lanes
        self.timeline.set_structure(self.structure, message.lanes)
        shown = self.pane(self.view_name)
        had_focus = self.focused is not None and shown in self.focused.ancestors_with_self  # (a rebuild loses it)
        for pane in self.query(ViewPane):
            if pane.spec.restructure:
                await pane.rebuild()
        for ops in self.query("OpsView"):
            ops.set_hide_python(self.hide_python)  # type: ignore[attr-defined]
        self.refresh_bindings()
        await self.settle_view(take_focus=had_focus)  # a rebuilt view takes the focus back
        if self.pending_search is not None:
            self.search(self.pending_search)
            self.pending_search = None

    # ---- the ranks of a job -------------------------------------------------------------------

    @property
    def ranks(self) -> list[int]:
        """The ranks of a folder opened as a job (empty for one file): the palette offers each."""
        return [int(info["rank"]) for info in self.analysis.trace.ranks] if self.analysis.trace.job else []

    async def go_to_rank(self, rank: int) -> None:
        await self.show_view("timeline")
        self.timeline.go_to_rank(rank)

    def action_compare_ranks(self, rank: int | None = None) -> None:
        """The straggler (else the slowest rank), or `rank`, side by side with a typical rank."""
        job = self.analysis.peek(Results.job)
        if job is None:
            self.notify("the ranks are still being summarized …", timeout=2)
            return
        which = "the straggler" if job.stragglers else "the slowest rank"
        self.notify(f"comparing {which if rank is None else f'rank {rank}'} with a typical rank …", timeout=2)
        self.compare_ranks(rank)

    @work(thread=True, exclusive=True, group="compare", description="Comparing two ranks", exit_on_error=False)
    def compare_ranks(self, rank: int | None) -> None:
        from ..model.jobs import compare_pair

        d, labels = compare_pair(self.analysis, rank)
        pace.post(self, RanksCompared(d, labels))

    def on_ranks_compared(self, message: RanksCompared) -> None:
        from .compare import CompareScreen

        self.app.push_screen(CompareScreen(message.diff, message.labels, pushed=True))

    # ---- from the views to the timeline -------------------------------------------------------

    async def on_rows_view_jump(self, message: RowsView.Jump) -> None:
        await self.show_view("timeline")
        pattern = row_pattern(message.name)
        if self.hide_python and message.frame:  # a frame's calls: show the frames first
            self.pending_search = pattern
            self.restructure(False)
        elif message.shapes is not None:  # one shape's row: its calls, not every call of the op
            self._close_search()
            self.find(pattern, compile_name_pattern(pattern), message.shapes)
        else:
            self.search(pattern)

    async def on_roofline_view_jump(self, message) -> None:
        """An op of the roofline: its calls highlighted on the timeline, the one picked selected."""
        await self.show_view("timeline")
        self.search("^" + re.escape(message.name) + "$")
        if message.event >= 0:
            self.timeline.select(message.event, jump=True)

    async def on_sequences_view_mark(self, message) -> None:
        """A recurring sequence's occurrences marked on the timeline as a search's matches: n and N stop at each
        occurrence's op, its device activities highlighted with it."""
        await self.show_view("timeline")
        self.timeline.set_matches(message.stops, message.label)
        if self.timeline.match_mask is not None:
            self.timeline.match_mask[message.marked] = True
            self.timeline.refresh()
        self.refresh_bindings()

    def on_tree_node_highlighted(self, event) -> None:
        """The tree's cursor: its node's first event in the details panel, under what a merged row stands for."""
        from ..widgets.tree_view import CallTreeView

        node, tree = getattr(event.node, "data", None), event.control
        if node is not None and len(node.events) and isinstance(tree, CallTreeView):
            self._show_details(tree.first_event(node), tree.merged(node))

    async def on_call_tree_view_show(self, message: CallTreeView.Show) -> None:
        await self.show_view("timeline")
        self.timeline.select(message.event, jump=True)
