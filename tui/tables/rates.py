"""Rate columns (achieved FLOP/s, bytes/s): each written in one unit, named in its header, chosen from its rates.

A column whose rates run from 275 TFLOP/s down to 4.41 GFLOP/s reads in TFLOP/s (275, 0.00441); one whose largest
is 0.275 TFLOP/s reads in GFLOP/s (275, 4.41). The JSON and CSV keep their fixed units (tflops, gbps).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .base import Column


@dataclass(frozen=True)
class Unit:
    """A unit a rate column is written in: its name (the header) and how many of the rates' own unit one of it is."""

    name: str
    scale: float


FLOP_RATES = (Unit("TFLOP/s", 1.0), Unit("GFLOP/s", 1e-3), Unit("MFLOP/s", 1e-6))  # of rates in TFLOP/s
BYTE_RATES = (Unit("GB/s", 1.0), Unit("MB/s", 1e-3))  # of rates in GB/s
LEAST = 0.001  # the least a cell writes in its column's unit: a rate under it reads TINY, never a zero
TINY = "<0.001"


def fmt_rate(value: float | None, digits: int = 3) -> str:
    """A number to 3 significant figures (a rate, FLOP/byte); '-' when there is none."""
    if value is None:
        return "-"
    if value == 0:
        return "0"
    return f"{value:.{max(digits - 1 - int(f'{abs(value):e}'.split('e')[1]), 0)}f}"


def unit_for(rates: Iterable[float | None], units: Sequence[Unit]) -> Unit:
    """The unit of a column of rates: the largest in which its largest rate reads 1 or more (the smallest unit when
    even that rate is under 1 of it; the largest when there is no rate)."""
    top = max((r for r in rates if r), default=0.0)
    if not top:
        return units[0]
    return next((u for u in units if top >= u.scale), units[-1])


def fmt_in(value: float | None, unit: Unit) -> str:
    """A rate as a cell of a column in unit: 3 significant figures; under LEAST of it TINY; '-' for none."""
    if value is None or value == 0:
        return fmt_rate(value)
    scaled = value / unit.scale
    return TINY if scaled < LEAST else fmt_rate(scaled)


def rate_text(value: float | None, units: Sequence[Unit], unit: Unit | None = None) -> str:
    """One rate with its unit, as prose writes it: in `unit`, else the unit it reads best in alone ('266 GFLOP/s')."""
    unit = unit or unit_for([value], units)
    return f"{fmt_in(value or 0.0, unit)} {unit.name}"


def rate_column(
    units: Sequence[Unit], rate: Callable[[Any, Any], float | None], sort: str | None, priority: int
) -> Column:
    """A column of rates (rate: (row, context) -> the rate in units[0], None: none) in one unit, chosen from the rates
    of the rows it shows when the table is fitted (Column.made_for); in units[0] until then."""

    def written(unit: Unit) -> tuple[str, Callable[[Any, Any, int], str]]:
        return unit.name, lambda r, c, w: fmt_in(rate(r, c), unit)

    def made_for(rows: Sequence, context: Any) -> tuple[str, Callable[[Any, Any, int], str]]:
        return written(unit_for((rate(r, context) for r in rows), units))

    header, text = written(units[0])
    return Column(header, text, sort, priority, made_for=made_for)
