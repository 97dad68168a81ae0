"""The one registry of views: each ViewSpec drives its tab, number key, palette command, focus, help and details.

Adding a view is one entry here plus its widget. The main screen and the compare screen each show
the specs of their own list; nothing else names a view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..model.analyses.results import Results
from ..model.analysis import Analysis, derived

if TYPE_CHECKING:
    from textual.widget import Widget


@dataclass(frozen=True)
class ViewSpec:
    """A view: its tab and key, what it needs from the model, how its widget is made, and what it says."""

    name: str  # the tab's id
    key: str  # the number key that shows it
    title: str  # the tab's title and the palette's words
    about: str  # one line for help and the palette
    build: Callable[[Any], Widget]  # (the screen) -> the view's widget, made once its needs are ready
    needs: tuple[derived, ...] = ()  # the results it reads
    on_structure: bool = False  # the needs are read on the shown nesting (frames shown or hidden)
    focus: str | None = None  # what takes focus in it (a selector), else the view itself
    details: bool = False  # the details panel shows beside it
    eager: bool = False  # made at once (the first paint), not on the first visit
    restructure: bool = False  # made again when Python frames are shown or hidden
    unavailable: Callable[[Any], str | None] = lambda screen: None  # why this trace has nothing to show, in words
    short: str = ""  # the tab's title where every full title does not fit the width (else the title)

    def tab_label(self, short: bool = False) -> str:
        return f"{self.key} {(self.short or self.title) if short else self.title}"


# ---- the main screen's views --------------------------------------------------------------------


def _timeline(screen) -> Widget:
    from textual.containers import Vertical
    from textual.widgets import Input

    from ..widgets.critical_line import CriticalLine
    from ..widgets.range_panel import RangePanel
    from ..widgets.ruler import Ruler
    from ..widgets.timeline import Timeline

    search = Input(placeholder="search event names (regular expression); Enter to search, Esc to cancel")
    search.id = "search"
    timeline = Timeline(screen.structure, screen.lanes)
    return Vertical(Ruler(screen.origin), timeline, search, CriticalLine(), RangePanel())


TREE_FRAMES_HIDDEN = "self includes the hidden Python frames' time; p shows them"  # (the ops table's Self CPU: not)


def _tree(screen) -> Widget:
    """The call tree; with Python frames hidden, a line above it says an op's self holds its hidden frames' time."""
    from textual.containers import Vertical
    from textual.widgets import Static

    from ..model.analyses.calltree import CallTree
    from ..model.analyses.results import Results
    from ..widgets.tree_view import CallTreeView

    tree = CallTreeView(CallTree(screen.structure))
    if not (screen.hide_python and screen.analysis.peek(Results.frame_levels)):
        return tree
    return Vertical(Static(TREE_FRAMES_HIDDEN, classes="table-status tree-note", markup=False), tree)


def _ops(screen) -> Widget:
    from ..widgets.ops_view import OpsView

    return OpsView(screen.analysis, screen.hide_python)


def _kernels(screen) -> Widget:
    from ..widgets.kernels_view import KernelsView

    return KernelsView(screen.analysis)


def _sequences(screen) -> Widget:
    from ..widgets.sequences_view import SequencesView

    return SequencesView(screen.analysis)


def _overview(screen) -> Widget:
    from ..widgets.overview import OverviewView

    return OverviewView(screen.analysis)


def _code(screen) -> Widget:
    from ..widgets.code_view import CodeView

    return CodeView(screen.analysis)


def _roofline(screen) -> Widget:
    from ..widgets.roofline_view import RooflineView

    return RooflineView(screen.analysis)


def _critical(screen) -> Widget:
    from ..widgets.critical_view import CriticalView

    a = screen.analysis
    return CriticalView(screen.marked_path or a.critical, a.trace, a.frameless if screen.hide_python else None)


def _no_shapes(screen) -> str | None:
    from ..tables.roofline import NO_SHAPES

    return None if screen.analysis.roofline.has_shapes else NO_SHAPES


def _no_gpu(screen) -> str | None:
    from ..model.analyses.no_gpu import no_gpu

    a: Results = screen.analysis
    if a.kernels:
        return None
    s = a.summary
    if s.device_records_missing:
        return (
            "This trace launched GPU work but recorded no device activity (the GPU records were lost): "
            "see the overview (5) for the likely causes and how to capture them."
        )
    return no_gpu(s.cut_short) + ". The ops (3) and code (6) views show where the time went."


def _no_frames(screen) -> str | None:
    from ..tables.code import NO_FRAMES

    return None if screen.analysis.code.frames else NO_FRAMES + "."


MAIN: tuple[ViewSpec, ...] = (
    ViewSpec(
        "timeline",
        "1",
        "Timeline",
        "CPU threads and GPU streams over time",
        _timeline,
        focus="Timeline",
        details=True,
        eager=True,
        short="Time",
    ),
    ViewSpec(
        "tree",
        "2",
        "Tree",
        "the call tree per step, hottest first",
        _tree,
        needs=(Analysis.child_index, Analysis.self_ns, Analysis.gpu_below),
        on_structure=True,
        focus="CallTreeView",
        details=True,
        restructure=True,
    ),
    ViewSpec(
        "ops",
        "3",
        "Ops",
        "the key_averages() table: time per op",
        _ops,
        needs=(Results.ops, Results.ops_by_shape, Results.ops_frames, Results.ops_by_shape_frames, Results.roofline),
        focus="OpsView LazyTable",
    ),
    ViewSpec(
        "kernels",
        "4",
        "Kernels",
        "time per GPU kernel, with its footprint",
        _kernels,
        needs=(Results.kernels, Results.kernel_footprints, Results.summary, Results.roofline, Results.launch_queues),
        focus="KernelsView LazyTable",
        unavailable=_no_gpu,
        short="Kern",
    ),
    ViewSpec(
        "overview",
        "5",
        "Overview",
        "the verdict in words, steps, top ops and kernels, findings",
        _overview,
        needs=(Results.summary, Results.job, Results.ops, Results.kernels, Results.findings, Results.memory),
        short="Over",
    ),
    ViewSpec(
        "code",
        "6",
        "Code",
        "time per function of your code, at its def line (with_stack traces), and its icicle",
        _code,
        needs=(Results.code, Results.gpu_below),
        focus="CodeView LazyTable",
        unavailable=_no_frames,
    ),
    ViewSpec(
        "roofline",
        "7",
        "Roofline",
        "how fast each op runs against the GPU's limits (achieved FLOP/s by FLOP per byte)",
        _roofline,
        needs=(Results.roofline,),
        focus="RooflineView",
        unavailable=_no_shapes,
        short="Roof",
    ),
    ViewSpec(
        "critical",
        "8",
        "Path",
        "the critical path of the typical step (or of the one b marked): what bounds it, then the path to walk",
        _critical,
        needs=(Results.critical,),
        focus="CriticalView LazyTable",
        restructure=True,
    ),
    ViewSpec(
        "sequences",
        "9",
        "Sequences",
        "recurring kernel sequences, what fusing each would save; Enter marks one's occurrences on the timeline",
        _sequences,
        needs=(Results.fused_sequences, Results.graph_owner),
        focus="SequencesView LazyTable",
        unavailable=_no_gpu,
        short="Seqs",
    ),
)


# ---- the compare screen's views -----------------------------------------------------------------


def _compare_table(which: str) -> Callable[[Any], Widget]:
    def build(screen) -> Widget:
        from ..tables import diff as D
        from ..widgets.lazy_table import LazyTable, TextColumns

        d = screen.diff
        heads, rows = {
            "summary": lambda: (["", "A", "B", "Change"], D.summary_rows(d.summary_a, d.summary_b)),
            "steps": lambda: (
                D.CPU_STEP_HEADS if d.cpu_only else D.STEP_HEADS,
                D.step_rows(d.steps_a, d.steps_b, gpu=not d.cpu_only),
            ),
            "ops": lambda: (D.ROW_HEADS, [D.row_cells(r) for r in d.ops]),
            "kernels": lambda: (D.ROW_HEADS, [D.row_cells(r) for r in d.kernels]),
        }[which]()
        return LazyTable(TextColumns(heads, rows))

    return build


COMPARE: tuple[ViewSpec, ...] = (
    ViewSpec("summary", "1", "Summary", "both summaries and verdicts side by side", _compare_table("summary")),
    ViewSpec("steps", "2", "Steps", "each step's CPU time, GPU time and launches", _compare_table("steps")),
    ViewSpec("ops", "3", "Ops", "per op: count and time in A and B, biggest change first", _compare_table("ops")),
    ViewSpec(
        "kernels",
        "4",
        "Kernels",
        "per kernel: count and time in A and B, biggest change first",
        _compare_table("kernels"),
    ),
)


def spec_of(specs: tuple[ViewSpec, ...], name: str) -> ViewSpec:
    return next(s for s in specs if s.name == name)


def key_bindings(specs: tuple[ViewSpec, ...], prefix: str = "view") -> list:
    """The number keys of a screen's views, one binding each (help and the keymap know them by id)."""
    from textual.binding import Binding

    return [
        Binding(s.key, f"view('{s.name}')", f"{s.title}: {s.about}", show=False, id=f"{prefix}.{s.name}") for s in specs
    ]
