"""The kernels table: per GPU kernel statistics and its footprint from one example's args."""

from __future__ import annotations

from functools import lru_cache

from textual.binding import Binding

from ..fmt import fmt_time, truncate
from ..model.analyses.results import Results
from ..model.load.args import event_args
from ..report import KERNEL_SORTS
from .rows_view import Column, RowsView


class KernelsView(RowsView):
    SORTS = KERNEL_SORTS
    DEFAULT_SORT = "total"
    NAME_MAX = 70
    BINDINGS = [
        Binding("n", "sort('name')", "Sort by name", id="kernels.sort_name"),
        Binding("t", "sort('total')", "Sort by total", id="kernels.sort_total"),
        Binding("c", "sort('count')", "Sort by calls", id="kernels.sort_count"),
        Binding("a", "sort('avg')", "Sort by average", id="kernels.sort_avg"),
        Binding("x", "sort('max')", "Sort by max", show=False, id="kernels.sort_max"),
        Binding("l", "sort('latency')", "Sort by launch latency", id="kernels.sort_latency"),
    ]

    def __init__(self, analysis: Results, **kwargs) -> None:
        self.analysis = analysis
        super().__init__(**kwargs)
        self.COLUMNS = [
            Column("Name", lambda r: truncate(r.name, self.name_width), "name"),
            Column("Kind", lambda r: r.kind),
            Column("Calls", lambda r: str(r.count), "count"),
            Column("Total", lambda r: fmt_time(r.total_us), "total"),
            Column("Avg", lambda r: fmt_time(r.avg_us), "avg"),
            Column("Min", lambda r: fmt_time(r.min_us), "min"),
            Column("Max", lambda r: fmt_time(r.max_us), "max"),
            Column("% GPU", lambda r: f"{r.pct_gpu:.1f}%", "total"),
            Column(
                "Launch→start",
                lambda r: "-" if r.launch_latency_us is None else fmt_time(r.launch_latency_us),
                "latency",
            ),
            Column("Grid", lambda r: self._arg(r.example, "grid")),
            Column("Block", lambda r: self._arg(r.example, "block")),
            Column("Regs", lambda r: self._arg(r.example, "registers per thread")),
            Column("Shared mem", lambda r: self._arg(r.example, "shared memory")),
            Column("Occupancy %", lambda r: self._arg(r.example, "est. achieved occupancy %")),
        ]

    @lru_cache(maxsize=4096)  # noqa: B019 - one view per app, a few hundred kernels
    def _arg(self, event: int, key: str) -> str:
        value = event_args(self.analysis.trace, event).get(key)
        return "-" if value is None else str(value)

    def source_rows(self) -> list:
        return self.analysis.kernels
