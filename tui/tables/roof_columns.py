"""The roofline's two columns (achieved FLOP/s, % of roof) the viewer adds to the ops and kernels tables, dropped
first to fit, and their sort keys (R, r)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..model.analyses.roofline.achieved import Achieved
from .base import Column, SortKey
from .rates import FLOP_RATES, rate_column

PRIORITY = 4  # above every other column's: the first left out when the terminal is narrow


def fmt_pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def roof_columns(lookup: Callable[[Any], Achieved | None]) -> list[Column]:
    """Achieved FLOP/s, in the unit the table's rates read best in (TFLOP/s, GFLOP/s, MFLOP/s: tui.tables.rates), and
    % of roof of a table's row ('-' for rows without modelled work)."""

    def tflops(row: Any, context: Any) -> float | None:
        found = lookup(row)
        return None if found is None else found.tflops

    def pct(row: Any, context: Any, width: int) -> str:
        found = lookup(row)
        return "-" if found is None else fmt_pct(found.pct_of_roof)

    return [rate_column(FLOP_RATES, tflops, "tflops", PRIORITY), Column("% of roof", pct, "roof", PRIORITY)]


def roof_sorts(lookup: Callable[[Any], Achieved | None]) -> dict[str, SortKey]:
    """The sort keys of those columns, their values looked up as the columns' are (rows without modelled work last)."""

    def tflops(row: Any) -> float | None:
        found = lookup(row)
        return None if found is None else found.tflops

    def pct(row: Any) -> float | None:
        found = lookup(row)
        return None if found is None else found.pct_of_roof

    return {
        "tflops": SortKey("tflops", means="tflops", get=tflops),
        "roof": SortKey("pct_of_roof", means="pct_of_roof", get=pct),
    }


ROOF_SORTS = roof_sorts(lambda row: None)  # for a view's bindings, made before it has a roofline
