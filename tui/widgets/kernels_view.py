"""The kernels table: per GPU kernel statistics and its footprint from one example's args."""

from __future__ import annotations

from ..model.analyses.results import Results
from ..model.analyses.roofline.achieved import kernel_achieved
from ..tables import kernels as K
from ..tables.base import Column
from ..tables.roof_columns import roof_columns
from .rows_view import RowsView, sort_bindings


class KernelsView(RowsView):
    HELP_NAME = "Kernels table"
    SORTS = K.SORTS
    DEFAULT_SORT = K.DEFAULT_SORT
    NAME_MAX = 70
    BINDINGS = sort_bindings(K.SORTS, "kernels")

    def __init__(self, analysis: Results, **kwargs) -> None:
        self.analysis = analysis
        super().__init__(**kwargs)
        prints = analysis.kernel_footprints  # computed in the background before this view is made
        self.queues = analysis.peek(Results.launch_queues)  # its needs, made before this view
        self.footprint = K.Footprint(lambda event, key: prints.get(event, {}).get(key, "-"))
        roof = analysis.peek(Results.roofline)  # made in the background before this view (its needs)
        self.achieved = kernel_achieved(roof) if roof is not None and roof.rows else None

    def columns(self) -> list[Column]:
        """The kernels table's columns; with a roofline, each kernel's achieved TFLOP/s and % of roof after them."""
        achieved = self.achieved
        return K.columns(self.footprint) + (roof_columns(lambda r: achieved.get(r.name)) if achieved else [])

    def context(self) -> K.Footprint:
        return self.footprint

    def source_rows(self) -> list:
        return self.analysis.kernels

    def status(self) -> str:
        """The rows and sort keys, then each stream's launch queue and its latency outliers, named."""
        if self.queues is None or not self.queues.streams:
            return super().status()
        return super().status() + "\n" + "\n".join(K.queue_footers(self.queues, self.analysis.trace.name_of))
