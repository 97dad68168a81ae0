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
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Input, TabbedContent, TabPane
from textual.worker import get_current_worker

from ..messages import AnalysisReady, LoadProgress
from ..model.analyses.calltree import CallTree
from ..model.analyses.details import brief, describe
from ..model.analyses.memory import memory_at
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

VIEWS = ("timeline", "tree", "ops", "kernels", "overview", "code")
FRAME_LEVELS_SHOWN = 3  # deeper Python stacks than this are hidden by default (p shows them)
# What the background worker computes, phase by phase, in the order the views want it: the shown
# nesting's structure (STRUCTURE, on the Analysis the timeline shows), then the trace's tables.
STRUCTURE = ("_children_csr", "self_ns", "launches_below", "gpu_below")
BACKGROUND = (
    ("link", ("links",)),
    (
        "aggregate",
        (
            "ops",
            "kernels",
            "kernel_footprints",
            "summary",
            "job",
            "findings",
            "notes",
            "ops_by_shape",
            "code",
            "memory",
        ),
    ),
)
DETAILS_NEED = ("_children_csr", "self_ns", "launches_below")
FOCUS = {
    "timeline": "Timeline",
    "tree": "CallTreeView",
    "ops": "OpsView DataTable",
    "kernels": "KernelsView DataTable",
    "code": "CodeView DataTable",
}


class SearchDone(Message):
    def __init__(self, pattern: str, matches) -> None:
        super().__init__()
        self.pattern, self.matches = pattern, matches


class RangeDone(Message):
    def __init__(self, span: tuple[int, int], rows: list[RangeRow]) -> None:
        super().__init__()
        self.span, self.rows = span, rows


class StructureReady(Message):
    """The nesting with Python frames shown or hidden is computed: the timeline can switch to it."""

    def __init__(self, hide_python: bool, lanes: LaneIndex) -> None:
        super().__init__()
        self.hide_python, self.lanes = hide_python, lanes


class SeriesReady(Message):
    """The value lanes (memory, counters) are computed: the timeline can show them."""

    def __init__(self, series: list) -> None:
        super().__init__()
        self.series = series


class RanksCompared(Message):
    def __init__(self, diff, labels: tuple[str, str]) -> None:
        super().__init__()
        self.diff, self.labels = diff, labels


class MainScreen(Screen):
    """Attributes down to the widgets, messages up from them."""

    BINDINGS = [
        Binding("p", "python(True)", "Hide Python frames", id="main.hide_python"),
        Binding("p", "python(False)", "Show Python frames", id="main.show_python"),
        Binding("C", "compare_ranks", "Compare ranks", id="main.compare_ranks"),
    ]

    def __init__(self, analysis: Results, lanes: LaneIndex, title: str, hide_python: bool = False) -> None:
        super().__init__()
        self.analysis, self.lanes, self.title_text = analysis, lanes, title
        self.hide_python = hide_python
        self.selected = -1
        self.pending_search: str | None = None  # run once the nesting with frames is ready

    @property
    def structure(self):
        """The nesting the timeline, the tree and the details show: with or without Python frames."""
        return self.analysis.frameless if self.hide_python else self.analysis

    def _panes(self) -> list[ViewPane]:
        """The other views, imported and made on their first visit: the first paint waits for none of them."""
        from ..widgets.code_view import CodeView
        from ..widgets.kernels_view import KernelsView
        from ..widgets.ops_view import OpsView
        from ..widgets.overview import OverviewView
        from ..widgets.tree_view import CallTreeView

        a = self.analysis
        return [
            ViewPane(
                "2 Tree",
                ("_children_csr", "self_ns", "gpu_below"),
                lambda: CallTreeView(CallTree(self.structure), id="calltree"),
                source=lambda: self.structure,
                id="tree",
            ),
            ViewPane("3 Ops", ("ops", "ops_by_shape"), lambda: OpsView(a, self.hide_python, id="opsview"), id="ops"),
            ViewPane(
                "4 Kernels", ("kernels", "kernel_footprints"), lambda: KernelsView(a, id="kernelsview"), id="kernels"
            ),
            ViewPane(
                "5 Overview",
                ("summary", "job", "ops", "kernels", "findings", "memory"),
                lambda: OverviewView(a),
                id="overview",
            ),
            ViewPane("6 Code", ("code", "gpu_below"), lambda: CodeView(a, id="codeview"), id="code"),
        ]

    def compose(self) -> ComposeResult:
        with TabbedContent(initial="timeline"):
            with TabPane("1 Timeline", id="timeline"), Vertical():
                yield Ruler(self.lanes.t_min if self.lanes.rows else 0)
                yield Timeline(self.structure, self.lanes, id="lanes")
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
        structure = self.structure
        jobs = [("link", structure, name) for name in STRUCTURE]
        if structure is not self.analysis:  # the tables and the code view nest with the frames
            jobs += [("link", self.analysis, "gpu_below")]
        jobs += [("link", self.analysis, "memory_curves")]  # the value lanes: drawn as soon as they are ready
        jobs += [(phase, self.analysis, name) for phase, names in BACKGROUND for name in names]
        for k, (phase, source, name) in enumerate(jobs):
            if worker.is_cancelled:
                return
            getattr(source, name)
            self.post_message(AnalysisReady(name))
            if name == "memory_curves":
                from ..widgets.timeline import value_lanes

                self.post_message(SeriesReady(value_lanes(self.analysis)))
            done = sum(1 for p, _, _ in jobs[: k + 1] if p == phase) / sum(1 for p, _, _ in jobs if p == phase)
            self.post_message(LoadProgress(phase, done))
        for scaffold in ("op_times", "_launch_tree"):  # per-event intermediates the tables no longer need
            self.analysis.forget(scaffold)

    def on_series_ready(self, message: SeriesReady) -> None:
        if message.series:
            self.timeline.set_series(message.series)

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
        panel, a = self.query_one(DetailsPanel), self.structure
        if event < 0:
            panel.show(None)
        elif all(a.ready(n) for n in DETAILS_NEED) and self.analysis.ready("links"):
            notes = self.analysis.peek("notes")
            full = self.analysis if self.analysis.ready("nesting") else None  # for the code stack: frames nested
            details = describe(a, event, self.lanes.t_min, frames=full)
            curves = self.analysis.peek("memory_curves")
            memory = memory_at(self.analysis, curves, int(a.trace.x.ts[event])) if curves else None
            panel.show(details, notes.notes(event) if notes is not None else None, memory)
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
        self.post_message(SearchDone(pattern, navigate.search(self.structure, rx)))

    # ---- Python frames shown or hidden -------------------------------------------------------

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "python":  # one of the two p bindings at a time: the footer says the state
            levels = self.analysis.peek("frame_levels")
            return bool(levels) and parameters[0] != self.hide_python
        if action == "compare_ranks":
            return len(self.ranks) > 1
        return True

    def action_python(self, hide: bool) -> None:
        if self.analysis.frame_levels == 0:
            self.notify("no Python frames in this trace (capture with with_stack=True)", timeout=3)
            return
        self.notify("nesting the events " + ("without" if hide else "with") + " their Python frames …", timeout=2)
        self.restructure(hide)

    @work(thread=True, exclusive=True, group="structure", description="Nesting with or without Python frames")
    def restructure(self, hide: bool) -> None:
        structure = self.analysis.frameless if hide else self.analysis
        lanes = LaneIndex(structure)
        for name in STRUCTURE:
            getattr(structure, name)
        self.post_message(StructureReady(hide, lanes))

    def on_structure_ready(self, message: StructureReady) -> None:
        self.hide_python, self.lanes = message.hide_python, message.lanes
        self.timeline.set_structure(self.structure, message.lanes)
        self.query_one("ViewPane#tree", ViewPane).rebuild(self.analysis)
        for ops in self.query("OpsView"):
            ops.set_hide_python(self.hide_python)  # type: ignore[attr-defined]
        self.refresh_bindings()
        if self.pending_search is not None:
            self.search(self.pending_search)
            self.pending_search = None

    # ---- the ranks of a job -------------------------------------------------------------------

    @property
    def ranks(self) -> list[int]:
        """The ranks of a folder opened as a job (empty for one file): the palette offers each."""
        return [int(info["rank"]) for info in self.analysis.trace.ranks] if self.analysis.trace.job else []

    def go_to_rank(self, rank: int) -> None:
        self.show_view("timeline")
        self.timeline.go_to_rank(rank)

    def action_compare_ranks(self, rank: int | None = None) -> None:
        """The straggler (else the slowest rank), or `rank`, side by side with a typical rank."""
        job = self.analysis.peek("job")
        if job is None:
            self.notify("the ranks are still being summarized …", timeout=2)
            return
        which = "the straggler" if job.stragglers else "the slowest rank"
        self.notify(f"comparing {which if rank is None else f'rank {rank}'} with a typical rank …", timeout=2)
        self.compare_ranks(rank)

    @work(thread=True, exclusive=True, group="compare", description="Comparing two ranks")
    def compare_ranks(self, rank: int | None) -> None:
        from ..model.jobs import compare_pair

        d, labels = compare_pair(self.analysis, rank)
        self.post_message(RanksCompared(d, labels))

    def on_ranks_compared(self, message: RanksCompared) -> None:
        from .compare import CompareScreen

        self.app.push_screen(CompareScreen(message.diff, message.labels, pushed=True))

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
        pattern = "^" + re.escape(message.name) + "$"
        if self.hide_python and message.frame:  # a frame's calls: show the frames first
            self.pending_search = pattern
            self.restructure(False)
        else:
            self.search(pattern)

    def on_call_tree_view_show(self, message: CallTreeView.Show) -> None:
        self.show_view("timeline")
        self.timeline.select(message.event)
