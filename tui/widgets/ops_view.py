"""The ops table: key_averages() rows and footers, sortable, filterable, grouped by shape on demand."""

from __future__ import annotations

from textual.binding import Binding

from ..fmt import fmt_memory, fmt_share, fmt_time, truncate
from ..model.analyses.results import Results
from ..report import OP_SORTS, op_footers
from .rows_view import Column, RowsView


class OpsView(RowsView):
    SORTS = OP_SORTS
    DEFAULT_SORT = "cpu_total"
    BINDINGS = [
        Binding("n", "sort('name')", "Sort by name", id="ops.sort_name"),
        Binding("s", "sort('self_cpu')", "Sort by self CPU", id="ops.sort_self_cpu"),
        Binding("t", "sort('cpu_total')", "Sort by CPU total", id="ops.sort_cpu_total"),
        Binding("a", "sort('cpu_avg')", "Sort by CPU avg", show=False, id="ops.sort_cpu_avg"),
        Binding("g", "sort('self_device')", "Sort by self CUDA", id="ops.sort_self_device"),
        Binding("u", "sort('device_total')", "Sort by CUDA total", id="ops.sort_device_total"),
        Binding("c", "sort('count')", "Sort by calls", id="ops.sort_count"),
        Binding("b", "toggle_shapes", "Group by shape", id="ops.group_by_shape"),
    ]

    def __init__(self, analysis: Results, **kwargs) -> None:
        self.analysis = analysis
        self.by_shape = False
        self.DEFAULT_SORT = "device_total" if analysis.ops.has_device else "cpu_total"
        super().__init__(**kwargs)
        self.COLUMNS = self._columns()

    @property
    def table(self):
        return self.analysis.ops_by_shape if self.by_shape else self.analysis.ops

    def _columns(self) -> list[Column]:
        t = lambda: self.table  # noqa: E731 - totals of whichever grouping is shown
        cols = [
            Column("Name", lambda r: truncate(r.name, self.name_width) + (" [GPU]" if r.is_device else ""), "name"),
            Column("Self CPU %", lambda r: fmt_share(r.self_cpu_us, t().self_cpu_total_us), "self_cpu"),
            Column("Self CPU", lambda r: fmt_time(r.self_cpu_us), "self_cpu"),
            Column("CPU total %", lambda r: fmt_share(r.cpu_total_us, t().self_cpu_total_us), "cpu_total"),
            Column("CPU total", lambda r: fmt_time(r.cpu_total_us), "cpu_total"),
            Column("CPU time avg", lambda r: fmt_time(r.cpu_avg_us), "cpu_avg"),
        ]
        if self.analysis.ops.has_device:
            cols += [
                Column("Self CUDA", lambda r: fmt_time(r.self_device_us), "self_device"),
                Column("Self CUDA %", lambda r: fmt_share(r.self_device_us, t().self_device_total_us), "self_device"),
                Column("CUDA total", lambda r: fmt_time(r.device_total_us), "device_total"),
                Column("CUDA time avg", lambda r: fmt_time(r.device_avg_us), "device_avg"),
            ]
        if self.analysis.ops.has_memory:
            cols += [
                Column("CPU Mem", lambda r: fmt_memory(r.cpu_mem)),
                Column("Self CPU Mem", lambda r: fmt_memory(r.self_cpu_mem)),
            ]
            if self.analysis.ops.has_device_memory:
                cols += [
                    Column("CUDA Mem", lambda r: fmt_memory(r.device_mem)),
                    Column("Self CUDA Mem", lambda r: fmt_memory(r.self_device_mem)),
                ]
        cols.append(Column("# of Calls", lambda r: str(r.count), "count"))
        cols.append(Column("Input Shapes", lambda r: (r.input_shapes or "")[:60]))
        return cols

    def source_rows(self) -> list:
        return self.table.rows

    def status(self) -> str:
        return (
            " · ".join(op_footers(self.table))
            + (" · grouped by input shape" if self.by_shape else "")
            + "\n"
            + super().status()
        )

    def action_toggle_shapes(self) -> None:
        self.by_shape = not self.by_shape
        self.refill()
