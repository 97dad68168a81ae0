"""How the main screen shares its rows: the timeline keeps at least six lane rows at any size (80x24 included).

Pure arithmetic on the terminal's height, so the rule is tested without a terminal. Fixed rows: the tab
bar (2), the key bar (1), the background progress bars while they run (up to 2); in the timeline view
the ruler (2), the search box while it is open (3), the critical path's line (b, x) and the marked range's table. What is left, less the
lanes' six rows, is the details panel's: shown below the lanes when it has MIN_DETAILS rows or more, else
a one-line summary of the selection (Enter then opens the details over the timeline). It takes up to
DETAILS_SHARE of the height, and more where the lanes need fewer rows than are left (a trace of two lanes at
160x45 left 22 rows under them blank while the details said "↓ 11 more lines").
"""

from __future__ import annotations

from dataclasses import dataclass

MIN_LANES = 6  # the timeline never shows fewer lane rows than this
MIN_DETAILS = 4  # a details panel smaller than this is a one-line summary instead
TABS, KEYBAR, RULER, SEARCH = 2, 1, 2, 3
RANGE_MAX, RANGE_MIN = 10, 5  # the marked range's table: its border and header, then its rows
DETAILS_SHARE = 0.4  # on a tall terminal the details panel takes at most this much of it


@dataclass(frozen=True)
class Rows:
    """The rows given to each part: the range table's height, the details panel's most (0: one line instead)."""

    range: int
    details: int
    lanes: int


def share(
    height: int, bars: int, timeline: bool, marked: bool, searching: bool, status: int = 0, lanes_needed: int = 0
) -> Rows:
    """The range table's and the details panel's rows, leaving the lanes (or the tree) MIN_LANES at least;
    status: the rows of the critical path's line under the lanes while it shows; lanes_needed: the rows the
    timeline's lanes take in all (0: as many as they are given), the rows past them the details panel's."""
    body = height - TABS - KEYBAR - bars
    fixed = (RULER + (SEARCH if searching else 0) + status) if timeline else 0
    range_rows = 0
    if timeline and marked:
        range_rows = max(RANGE_MIN, min(RANGE_MAX, (body - fixed - MIN_LANES) // 2))
    room = body - fixed - range_rows - MIN_LANES
    spare = room + MIN_LANES - lanes_needed if lanes_needed else 0  # what the lanes leave blank at the share
    details = min(room, max(int(height * DETAILS_SHARE), MIN_DETAILS, spare)) if room >= MIN_DETAILS else 0
    lanes = body - fixed - range_rows - (details if details else 1)
    return Rows(range_rows, details, lanes)
