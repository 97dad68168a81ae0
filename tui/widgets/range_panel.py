"""The marked range: the time each name holds inside it, self time on the CPU and on the GPU apart."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from ..fmt import fmt_dur
from ..model.analyses.rangeagg import RangeRow

MAX_ROWS = 500


def range_title(rows: list[RangeRow], span: tuple[int, int] | None) -> str:
    """What the range is and what its rows add up to (self times: CPU over its threads, GPU over its streams)."""
    if not span:
        return ""
    cpu, gpu = sum(r.cpu_self_ns for r in rows), sum(r.gpu_self_ns for r in rows)
    parts = [f"Marked range: {fmt_dur(span[1] - span[0])}", f"CPU self {fmt_dur(cpu)} (summed over threads)"]
    if gpu:
        parts.append(f"GPU self {fmt_dur(gpu)} (summed over streams)")
    return " · ".join(parts)


def range_cells(r: RangeRow) -> tuple[str, ...]:
    """A row's cells: name, count, self CPU and self GPU inside the range, and its whole time inside it."""

    def dur(ns: int) -> str:
        return fmt_dur(ns) if ns else "-"

    return (r.name[:80], str(r.count), dur(r.cpu_self_ns), dur(r.gpu_self_ns), fmt_dur(r.total_ns))


class RangePanel(DataTable):
    """count, self CPU and self GPU time in the range, and the total in the range, by name."""

    DEFAULT_CSS = "RangePanel { height: 10; }"

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.add_columns("Name", "Count", "Self CPU in range", "Self GPU in range", "Total in range")

    def computing(self, span: tuple[int, int]) -> None:
        self.clear()
        self.border_title = f"Marked range: {fmt_dur(span[1] - span[0])} · computing …"

    def show(self, rows: list[RangeRow], span: tuple[int, int] | None) -> None:
        self.clear()
        self.border_title = range_title(rows, span)
        for r in rows[:MAX_ROWS]:
            self.add_row(*(Text(c) for c in range_cells(r)))
