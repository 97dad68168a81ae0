"""The idle-interval statistics table (`tracetui breakdown --idle-stats`): per stream and per cause, the count, mean,
sample standard deviation, quartiles and maximum of its idle intervals, as HTA's `show_idle_interval_stats`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..model.analyses.breakdown import CAUSES, StreamIdle
from ..model.analyses.breakdown.intervals import IntervalStats
from ..text.fmt import fmt_time
from .base import KEEP, Column, Field
from .breakdown import CAUSE_HEADS, device_name, lane

CAUSE_KEYS = {"host": "host_wait", "stream": "other_stream", "kernel": "between_kernels", "other": "other"}
NOTE = (
    "An interval runs from the latest end so far on the stream to the next activity's start, 0 for back-to-back "
    "ones (as HTA's); Std is the sample standard deviation (n - 1, pandas' describe as HTA), '-' for one interval; "
    "quartiles interpolate linearly. HTA's other is Other stream and Other together."
)


@dataclass(frozen=True)
class IdleStatsRow:
    """One stream's idle intervals of one cause."""

    stream: StreamIdle
    cause: str
    stats: IntervalStats


def idle_stats_rows(idle: list[StreamIdle]) -> list[IdleStatsRow]:
    """Per stream, in the breakdown's order, a row for each cause with intervals."""
    return [IdleStatsRow(s, c, st) for s in idle for c in CAUSES if (st := s.stats(c)) is not None]


def _us(get: Callable[[IntervalStats], float | None]) -> Callable[[IdleStatsRow], float | None]:
    def value(r: IdleStatsRow) -> float | None:
        ns = get(r.stats)
        return None if ns is None else ns / 1000.0

    return value


STATS: list[tuple[str, str, Callable[[IntervalStats], float | None]]] = [
    ("Mean", "mean_us", lambda s: s.mean_ns),
    ("Std", "std_us", lambda s: s.std_ns),
    ("p25", "p25_us", lambda s: s.p25_ns),
    ("p50", "p50_us", lambda s: s.p50_ns),
    ("p75", "p75_us", lambda s: s.p75_ns),
    ("Max", "max_us", lambda s: s.max_ns),
]


# dropped to fit in this order (the higher first): the quartiles, then the spread; the median stays with mean and max
PRIORITY = {"mean_us": KEEP, "max_us": KEEP, "p25_us": 3, "p75_us": 3, "std_us": 2, "p50_us": 1}


def _text(get: Callable[[IntervalStats], float | None]) -> Callable[[IdleStatsRow, None, int], str]:
    us = _us(get)
    return lambda r, c, w: "-" if (v := us(r)) is None else fmt_time(v)


def columns(ranks: bool) -> list[Column[IdleStatsRow, None]]:
    cols: list[Column[IdleStatsRow, None]] = (
        [Column("Rank", lambda r, c, w: str(r.stream.rank), priority=KEEP)] if ranks else []
    )
    return cols + [
        Column("Stream", lambda r, c, w: lane(r.stream), name=True, min_width=14),
        Column("Cause", lambda r, c, w: CAUSE_HEADS[r.cause], priority=KEEP, left=True),
        Column("Count", lambda r, c, w: f"{r.stats.count:,}", priority=KEEP),
        *[Column(head, _text(get), priority=PRIORITY.get(key, 1)) for head, key, get in STATS],
    ]


FIELDS: list[Field[IdleStatsRow]] = [
    Field("rank", lambda r: r.stream.rank),
    Field("device", lambda r: device_name(r.stream)),
    Field("stream", lambda r: r.stream.lane),
    Field("cause", lambda r: CAUSE_KEYS[r.cause]),
    Field("count", lambda r: r.stats.count),
    *[Field(key, _us(get)) for _, key, get in STATS],
]


def row_json(r: IdleStatsRow) -> dict[str, Any]:
    return {f.key: f.value(r) for f in FIELDS}
