"""The critical path as tables, for `tracetui critical` and the viewer's path view alike: the path's groups
(critical/groups.py) and a group's stretches, the breakdown by class, and a job's ranks; each a list of Columns
that tables.base.fit lays out."""

from __future__ import annotations

from dataclasses import dataclass

from ..model.analyses.critical import CLASSES, HTA_CLASS, CriticalPath, PathItem
from ..model.analyses.critical.groups import PathGroup, kind_of
from ..model.analyses.critical.ranks import JobPath
from ..model.trace import TraceColumns
from ..text.names import shorten
from .base import KEEP, Column, SortKey
from .critical import TITLES, bar, own_tag, when
from .critical import group_label as group_label  # the table's words, where the viewer reads them


def _share(ns: int, p: CriticalPath) -> str:
    return f"{ns / p.length_ns:.1%}" if p.length_ns else "-"


def _fit_name(text: str, width: int) -> str:
    """A name cut in the middle to width (whole when it fits)."""
    return text if len(text) <= width else shorten(text, max(width, 8))


def path_columns(trace: TraceColumns) -> list[Column[PathItem, CriticalPath]]:
    """One group's stretches, in time order: what, when from the window's start, how long, what bounds it."""
    return [
        Column("On the path", lambda r, p, w: _fit_name(r.name, w), name=True, priority=KEEP, min_width=20),
        Column("Kind", lambda r, p, w: kind_of(trace, r), priority=4, left=True),
        Column("At", lambda r, p, w: "+" + when(r.start_ns - p.start_ns), priority=2),
        Column("Time", lambda r, p, w: when(r.dur_ns), sort="time", priority=KEEP),
        Column("Share", lambda r, p, w: _share(r.dur_ns, p), sort="time", priority=1),
        Column("Bound by", lambda r, p, w: TITLES.get(r.bound_by, r.bound_by), priority=3, left=True),
    ]


AT_NOTE = "At: from the start of {window} ({start} into the trace)"


def at_note(p: CriticalPath) -> str:
    """What the path's At column counts from."""
    return AT_NOTE.format(window=p.window, start=when(p.start_ns))


# The path's groups sort by their time on the path (the default; their Share of it too, the same order), their
# calls or their name.
GROUP_SORTS = {
    "time": SortKey("dur_ns", means="path_time"),
    "calls": SortKey("calls", means="calls"),
    "name": SortKey("name", reverse=False, means="name"),
}


def group_columns() -> list[Column[PathGroup, CriticalPath]]:
    """The path grouped: name, kind (in words), time and share of the path, calls, what bounds it. Narrow, the
    kind goes first, then the calls, then what bounds it (said below the table when every row has one class)."""
    return [
        Column(
            "On the path",
            lambda g, p, w: _fit_name(g.name, w),
            sort="name",
            name=True,
            priority=KEEP,
            min_width=20,
            tag=own_tag,
        ),
        Column("Kind", lambda g, p, w: g.kind, priority=5, left=True),
        Column("Time", lambda g, p, w: when(g.dur_ns), sort="time", priority=KEEP),
        Column("Share", lambda g, p, w: _share(g.dur_ns, p), sort="time", priority=2),  # the time's order
        Column("Calls", lambda g, p, w: f"{g.calls:,}", sort="calls", priority=4),
        Column("Bound by", lambda g, p, w: TITLES.get(g.bound_by, g.bound_by), priority=3, left=True),
    ]


BREAKDOWN_BAR = 24  # cells of a whole path's bar in the text report


def breakdown_columns(title: str = "Bound by") -> list[Column[str, CriticalPath]]:
    """A row per class on the path (its name in words, HTA's name, time, share, a bar): HTA's name goes first."""
    return [
        Column(title, lambda c, p, w: TITLES.get(c, c), name=True, priority=KEEP, min_width=12),
        Column("HTA class", lambda c, p, w: HTA_CLASS[c] or "(none)", priority=4, left=True),
        Column("Time", lambda c, p, w: when(p.breakdown[c]), priority=KEEP),
        Column("Share", lambda c, p, w: _share(p.breakdown[c], p), priority=KEEP),
        Column("", lambda c, p, w: bar(p.breakdown[c] / (p.length_ns or 1), BREAKDOWN_BAR), priority=2, left=True),
    ]


def breakdown_classes(p: CriticalPath) -> list[str]:
    """The classes with time on the path, the most first."""
    return sorted((c for c in CLASSES if p.breakdown.get(c, 0) > 0), key=lambda c: -p.breakdown[c])


@dataclass
class RankRow:
    """One rank of a job's path: its length, the class its own path runs through most, and the waits."""

    rank: int
    length_ns: int
    bound_by: str
    share: float
    waits_ns: int  # its path's time waiting for other ranks in collectives
    held_ns: int  # the other ranks' paths' time waiting for it


def rank_rows(job: JobPath) -> list[RankRow]:
    held = job.held_ns()
    out = []
    for r, p in job.paths.items():
        own = job.own_breakdown(r)
        cls = max(own, key=lambda c: own[c])
        waited = sum(w.on_path_ns for w in job.waits if w.rank == r)
        out.append(RankRow(r, p.length_ns, cls, own[cls] / (sum(own.values()) or 1), waited, held[r]))
    return out


def rank_columns() -> list[Column[RankRow, JobPath]]:
    """A job's ranks: the path, what its own path runs through, how long it waits and is waited for."""
    return [
        Column("Rank", lambda r, j, w: str(r.rank), name=True, priority=KEEP, min_width=4),
        Column("Path", lambda r, j, w: when(r.length_ns), priority=KEEP),
        Column("Own path bound by", lambda r, j, w: TITLES.get(r.bound_by, r.bound_by), priority=2, left=True),
        Column("Share", lambda r, j, w: f"{r.share:.0%}", priority=3),
        Column("Waits for others", lambda r, j, w: when(r.waits_ns), priority=KEEP),
        Column("Others wait for it", lambda r, j, w: when(r.held_ns), priority=KEEP),
    ]
