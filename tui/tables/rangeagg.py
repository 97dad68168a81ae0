"""The marked range's table: per name, its count and its self CPU, self GPU and whole time inside the range."""

from __future__ import annotations

from ..model.analyses.rangeagg import RangeRow
from ..text.fmt import fmt_dur
from .base import KEEP, Column


def _dur(ns: int) -> str:
    return fmt_dur(ns) if ns else "-"


# The numbers are never dropped to fit: the name is cut first (in the middle, rows kept apart).
COLUMNS: list[Column[RangeRow, None]] = [
    Column("Name", lambda r, c, w: r.name, priority=KEEP, name=True, min_width=12),
    Column("Count", lambda r, c, w: str(r.count), priority=KEEP),
    Column("Self CPU", lambda r, c, w: _dur(r.cpu_self_ns), priority=KEEP),
    Column("Self GPU", lambda r, c, w: _dur(r.gpu_self_ns), priority=KEEP),
    Column("Total", lambda r, c, w: fmt_dur(r.total_ns), priority=KEEP),
]
