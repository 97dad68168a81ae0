"""Statistics of a stream's idle intervals per cause, as HTA's `show_idle_interval_stats` gives them.

HTA (hta/analyzers/breakdown_analysis.py, `_analyze_idle_time_for_stream`) takes, for each activity on a stream
after the first, the interval from the previous one's end to its start, gives it a cause, and describes each
cause's intervals with pandas' `Series.describe`: count, mean, the sample standard deviation (ddof 1; none for a
single interval) and the quartiles by linear interpolation (numpy's default `percentile` method, the same one).
Here the interval runs from the latest end so far on the stream (never negative: an activity that overlaps the
one before waited for nothing), so a back-to-back activity is an interval of 0, as in HTA.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class IntervalStats:
    """The idle intervals of one cause on one stream; times in ns (std None: fewer than two intervals)."""

    count: int
    mean_ns: float
    std_ns: float | None
    p25_ns: float
    p50_ns: float
    p75_ns: float
    max_ns: float


def interval_stats(ns: np.ndarray) -> IntervalStats | None:
    """count, mean, sample std, quartiles (linear interpolation) and max of the intervals (None: there are none)."""
    if not len(ns):
        return None
    values = ns.astype(np.float64)
    p25, p50, p75 = np.percentile(values, [25, 50, 75])
    std = float(values.std(ddof=1)) if len(values) > 1 else None
    return IntervalStats(
        len(values), float(values.mean()), std, float(p25), float(p50), float(p75), float(values.max())
    )
