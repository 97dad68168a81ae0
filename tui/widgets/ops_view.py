"""The ops table: key_averages() rows and footers, sortable, filterable, grouped by shape on demand."""

from __future__ import annotations

from textual.binding import Binding

from ..model.analyses.ops import OpsTable
from ..model.analyses.results import Results
from ..model.analyses.roofline.achieved import Achieved, op_achieved
from ..tables import ops as O
from ..tables.base import Column
from ..tables.roof_columns import ROOF_SORTS, roof_columns, roof_sorts
from .rows_view import RowsView, sort_bindings


class OpsView(RowsView):
    HELP_NAME = "Ops table"
    SORTS = O.VIEWER_SORTS | ROOF_SORTS  # device times count each kernel once, spans not work; the roofline's
    BINDINGS = [
        *sort_bindings(SORTS, "ops"),
        Binding("b", "toggle_shapes", "Group by shape", id="ops.group_by_shape"),
    ]

    def __init__(self, analysis: Results, hide_python: bool = False, **kwargs) -> None:
        self.analysis = analysis
        self.by_shape = False
        self.hide_python = hide_python
        self.DEFAULT_SORT = O.default_sort(analysis.ops)
        roof = analysis.peek(Results.roofline)  # made in the background before this view (its needs)
        self.achieved = (
            (op_achieved(roof), op_achieved(roof, by_shape=True)) if roof is not None and roof.rows else None
        )
        self.SORTS = O.VIEWER_SORTS | roof_sorts(self.achieved_of) if self.achieved else O.VIEWER_SORTS
        super().__init__(**kwargs)

    @property
    def table(self) -> OpsTable:
        """Frames shown (p): the table with frames as rows (torch 2.12, 2.13); hidden: torch's table up to 2.11."""
        return self.analysis.op_table(self.by_shape, python_frames=not self.hide_python)

    def set_hide_python(self, hide: bool) -> None:
        """Python frames hidden (p): torch's table up to 2.11, a frame's time in the op above it; shown: frames as rows."""
        self.hide_python = hide
        self.refill()

    def columns(self) -> list[Column]:
        return O.columns(self.table, self.by_shape, viewer=True) + self._roof_columns()

    def _roof_columns(self) -> list[Column]:
        """Achieved TFLOP/s and % of roof per op (per op and shapes when grouped): only when the trace has a roofline."""
        return roof_columns(self.achieved_of) if self.achieved is not None else []

    def achieved_of(self, row) -> Achieved | None:
        """A row's roofline figures: its op's, or its op's at its shapes when grouped (None: no modelled work)."""
        if self.achieved is None:
            return None
        by_name, by_shape = self.achieved
        return by_shape.get((row.name, row.input_shapes)) if self.by_shape else by_name.get(row.name)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "sort" and parameters and parameters[0] in O.SORTS:
            return O.has_column(parameters[0], self.analysis.ops)  # CUDA on a CPU-only trace, memory not recorded: none
        if action == "sort" and parameters and parameters[0] in ROOF_SORTS:  # % of roof on a CPU-only trace: none
            spec = self.SORTS.get(parameters[0])
            return spec is not None and any(spec.value(r) is not None for r in self.source_rows())
        return super().check_action(action, parameters)

    def context(self) -> OpsTable:
        return self.table

    def source_rows(self) -> list:
        return self.table.rows

    def status(self) -> str:
        return (  # the rows, sort keys and columns left out first: a narrow terminal cuts the last lines
            super().status()
            + "\n"
            + " · ".join(O.footers(self.table, viewer=True))
            + (" · grouped by input shape" if self.by_shape else "")
        )

    def keybar_state(self) -> list[tuple[str, str]]:
        return super().keybar_state() + ([("b", "by shape")] if self.by_shape else [])

    def action_jump(self) -> None:
        """Enter: the row's calls on the timeline; grouped by shape, only the calls at the row's shapes."""
        row = self.current()
        if row is not None:
            self.post_message(self.Jump(row.name, self.FRAMES, row.input_shapes if self.by_shape else None))

    def action_toggle_shapes(self) -> None:
        self.by_shape = not self.by_shape
        self.refresh_bindings()
        self.refill()
