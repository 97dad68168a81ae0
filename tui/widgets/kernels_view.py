"""The kernels table: per GPU kernel statistics and its footprint from one example's args."""

from __future__ import annotations

from ..model.analyses.results import Results
from ..model.analyses.roofline.achieved import Achieved, kernel_achieved
from ..tables import kernels as K
from ..tables.base import Column
from ..tables.roof_columns import ROOF_SORTS, roof_columns, roof_sorts
from .rows_view import RowsView, sort_bindings


class KernelsView(RowsView):
    HELP_NAME = "Kernels table"
    SORTS = K.SORTS | K.FOOTPRINT_SORTS | ROOF_SORTS  # the footprint's; the roofline's with a roofline (each view's)
    DEFAULT_SORT = K.DEFAULT_SORT
    NAME_MAX = 70
    BINDINGS = sort_bindings(SORTS, "kernels")

    def __init__(self, analysis: Results, **kwargs) -> None:
        self.analysis = analysis
        super().__init__(**kwargs)
        prints = analysis.kernel_footprints  # computed in the background before this view is made
        self.queues = analysis.peek(Results.launch_queues)  # its needs, made before this view
        self.footprint = K.Footprint(lambda event, key: prints.get(event, {}).get(key, "-"))
        roof = analysis.peek(Results.roofline)  # made in the background before this view (its needs)
        self.achieved = kernel_achieved(roof) if roof is not None and roof.rows else None
        self.SORTS = K.SORTS | K.footprint_sorts(self.footprint)
        if self.achieved:
            self.SORTS |= roof_sorts(self.achieved_of)

    def columns(self) -> list[Column]:
        """The kernels table's columns; with a roofline, each kernel's achieved FLOP/s and % of roof after them."""
        return K.columns(self.footprint) + (roof_columns(self.achieved_of) if self.achieved else [])

    def achieved_of(self, row) -> Achieved | None:
        """A kernel's roofline figures (None: none of its launches ran modelled work)."""
        return self.achieved.get(row.name) if self.achieved else None

    def context(self) -> K.Footprint:
        return self.footprint

    def source_rows(self) -> list:
        return self.analysis.kernels

    def status(self) -> str:
        """The rows and sort keys, why an occupancy reads "-", then each stream's launch queue and its latency
        outliers, named."""
        shown = self.fitted is not None and K.OCCUPANCY_HEADER in self.fitted.headers  # its "-" on screen
        lines = [super().status(), *(K.unestimated_note(self.analysis.kernels, self.footprint) if shown else [])]
        if self.queues is not None and self.queues.streams:
            lines += K.queue_footers(self.queues, self.analysis.trace.name_of)
        return "\n".join(lines)
