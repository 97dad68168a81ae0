"""The roofline's two columns (achieved TFLOP/s, % of roof) the viewer adds to the ops and kernels tables, dropped
first to fit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..model.analyses.roofline.achieved import Achieved
from .base import Column
from .roofline import fmt_tflops

PRIORITY = 4  # above every other column's: the first left out when the terminal is narrow


def fmt_pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def roof_columns(lookup: Callable[[Any], Achieved | None]) -> list[Column]:
    """TFLOP/s and % of roof of a table's row ('-' for rows without modelled work)."""

    def tflops(row: Any, context: Any, width: int) -> str:
        found = lookup(row)
        return "-" if found is None else fmt_tflops(found.tflops)

    def pct(row: Any, context: Any, width: int) -> str:
        found = lookup(row)
        return "-" if found is None else fmt_pct(found.pct_of_roof)

    return [Column("TFLOP/s", tflops, None, priority=PRIORITY), Column("% of roof", pct, None, priority=PRIORITY)]
