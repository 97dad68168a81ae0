"""`tracetui breakdown`: the temporal breakdown (per device or per stream) and each stream's idle time by cause."""

from __future__ import annotations

from operator import itemgetter

from ..model.analyses.breakdown import BreakdownReport
from ..model.analyses.breakdown import breakdown as compute
from ..model.analyses.results import Results
from ..tables import breakdown as B
from ..tables import idle_stats as S
from ..tables.base import Field
from .formats import table, terminal_width, to_csv, to_json, written_doc

NO_DEVICE = "No device activity (no kernel, copy or set): nothing to break down."


def report_of(a: Results, step: int | None) -> BreakdownReport:
    """The whole trace's breakdown (kept in the cache), or one step's (WindowMissing: no such step)."""
    return a.breakdown if step is None else compute(a.trace, a.links.launcher, a.graph_owner, step)


@written_doc
def breakdown_document(a: Results, step: int | None = None, by: str = "rank", idle_stats: bool = False) -> dict:
    """What `tracetui breakdown --format json` prints: the window, the rows per device (by rank) or per stream,
    and each stream's idle time by cause (with idle_stats, its idle intervals' statistics per cause too)."""
    r = report_of(a, step)
    stats = {"idle_stats": [S.row_json(s) for s in S.idle_stats_rows(r.idle)]} if idle_stats else {}
    return {
        "window": r.window,
        "by": by,
        "rows": _rows(r, by, a.trace.origin),
        "idle": [B.idle_json(row) for row in r.idle],
        **stats,
        "left_out_ranks": r.left_out,
    }


def render_breakdown(a: Results, fmt: str, step: int | None = None, by: str = "rank", idle_stats: bool = False) -> str:
    if fmt == "json":
        return to_json(breakdown_document(a, step, by, idle_stats))
    r = report_of(a, step)
    if fmt == "csv":
        return to_csv(S.FIELDS, S.idle_stats_rows(r.idle)) if idle_stats else _csv(r, by, a.trace.origin)
    if not r.devices:
        return NO_DEVICE
    width = terminal_width()
    ranks = len({row.rank for row in r.devices}) > 1
    rows = r.devices if by == "rank" else r.streams
    per = "device" if by == "rank" else "stream"
    out = [f"Temporal breakdown of {r.window}, per {per}:", ""]
    out.append(
        table(fmt, B.temporal_columns(ranks, by), rows, None, B.NAME_WIDTH, B.temporal_footers(rows, r.window), width)
    )
    out += ["", f"Idle time per stream in {r.window}, by what it waited for:", ""]
    out.append(table(fmt, B.idle_columns(ranks), r.idle, None, B.NAME_WIDTH, B.idle_footers(r.idle), width))
    if idle_stats:
        out += ["", f"Idle intervals per stream in {r.window}, by what each waited for:", ""]
        out.append(table(fmt, S.columns(ranks), S.idle_stats_rows(r.idle), None, B.NAME_WIDTH, [S.NOTE], width))
    if r.left_out:
        out += ["", f"Ranks without {r.window}, left out: {', '.join(map(str, r.left_out))}."]
    return "\n".join(out)


def _rows(r: BreakdownReport, by: str, origin: int) -> list[dict]:
    """By rank, a row per device; by stream, a row per stream with its own idle time by cause beside."""
    if by == "rank":
        return [B.temporal_json(row, by, origin) for row in r.devices]
    return [B.stream_json(t, i, origin) for t, i in zip(r.streams, r.idle, strict=True)]


def _csv(r: BreakdownReport, by: str, origin: int) -> str:
    """One line per device (by rank) or per stream, as the JSON's rows."""
    if by == "rank":
        return to_csv(B.temporal_fields(by), r.devices)
    rows = _rows(r, by, origin)
    keys = list(rows[0]) if rows else [f.key for f in B.temporal_fields(by)]
    return to_csv([Field(k, itemgetter(k)) for k in keys], rows)
