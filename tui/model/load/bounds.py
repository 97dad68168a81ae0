"""The limits a decoded file is held to before it becomes a Trace (model/limits.py): names cut, input shapes and
lanes past their limits left out, times shifted by baseTimeNanoseconds kept in range; each counted in the report.

Each pass costs a look at the distinct names, shapes or lanes (not the events) unless something is past a limit;
then the events concerned are renumbered or left out in one numpy pass.
"""

from __future__ import annotations

import numpy as np

from ..columns import Table
from ..limits import ARGS_BYTES, LANES, NAME_CHARS, TIME_NS, cut_name
from ..trace import LoadReport
from ..tracks import Meta
from .build import Interner


def bound(part, base: int | None) -> int:
    """Hold a merged part (see parts.Part) to the limits, in place; the base time to add to its times (0 when the
    file's baseTimeNanoseconds is none, or one no clock can have: said in the report)."""
    report: LoadReport = part.report
    _cut_names(part, report)
    _drop_big_shapes(part, report)
    _drop_late_lanes(part, report)
    return _base(part, base, report)


def _count(report: LoadReport, limit: str, n: int) -> None:
    if n:
        report.limits[limit] = report.limits.get(limit, 0) + n


def _cut_names(part, report: LoadReport) -> None:
    """Names, categories, process and thread names past NAME_CHARS cut; names that then read alike become one."""
    cut = 0
    for attr, tables in (("names", ("x", "inst")), ("cat_names", ("x",))):
        values = getattr(part, attr)
        long = [k for k, v in enumerate(values) if len(v) > NAME_CHARS]
        if not long:
            continue
        cut += len(long)
        shortened = Interner()
        mapping = np.asarray(shortened.many([cut_name(v) for v in values]), np.int32)
        setattr(part, attr, shortened.values)
        key = "name" if attr == "names" else "cat_str"
        for table in tables:
            column = getattr(part, table).column(key)
            column[:] = mapping[column]
    meta: Meta = part.meta
    for names in (meta.process_name, meta.process_labels, meta.thread_name):
        for k, v in names.items():
            if isinstance(v, str) and len(v) > NAME_CHARS:
                names[k] = cut_name(v)
                cut += 1
    _count(report, "name", cut)


def _drop_big_shapes(part, report: LoadReport) -> None:
    """Input shapes past ARGS_BYTES of text are left out (the events keep no shape)."""
    big = [k for k, s in enumerate(part.shapes) if len(s) > ARGS_BYTES]
    if not big:
        return
    shape = part.x.shape
    gone = np.isin(shape, big)
    _count(report, "args", int(gone.sum()))
    shape[gone] = -1


def _drop_late_lanes(part, report: LoadReport) -> None:
    """The events of lanes past the first LANES (in the order lanes first appear) are left out."""
    if len(part.tracks) <= LANES:
        return
    left = 0
    for table in ("x", "inst", "flow"):
        t: Table = getattr(part, table)
        late = t.column("track") >= LANES
        if late.any():
            left += int(late.sum())
            setattr(part, table, t.take(np.flatnonzero(~late)))
    part.tracks = part.tracks[:LANES]
    _count(report, "lanes", left)


def _base(part, base: int | None, report: LoadReport) -> int:
    """The base time to add to every time: none past TIME_NS (said as lost), and events it would put past
    TIME_NS are left out as times out of range."""
    if not base:
        return 0
    if not 0 < base < TIME_NS:
        report.damaged.append("ignored baseTimeNanoseconds, a time no clock can have (times stay relative)")
        return 0
    for table in ("x", "inst", "flow"):
        t: Table = getattr(part, table)
        far = t.column("ts") >= TIME_NS - base
        if far.any():
            report.bad_numbers["ts out of range"] = report.bad_numbers.get("ts out of range", 0) + int(far.sum())
            setattr(part, table, t.take(np.flatnonzero(~far)))
    return base
