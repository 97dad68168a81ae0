"""`tracetui steps`: one row per ProfilerStep#N on each rank, by the summary's step rule (tui/model/steps.py).

The rows are the SQL `steps` table's and the API's `Trace.steps()`: one definition, three ways in.
"""

from __future__ import annotations

from operator import itemgetter

from ..model.analyses.results import Results
from ..model.query.tables import steps as steps_relation
from ..tables import summary as S
from ..tables.base import Field, fit
from .formats import grid, terminal_width, to_csv, to_json, wrap

ORIGIN_NOTE = "Start and Ended count from the trace's first event, as every time tracetui prints."


def step_rows(a: Results) -> list[dict]:
    """The steps as dicts of plain values, in rank then step order (what --format json prints under "steps", before
    to_json rounds its microseconds: these are the SQL steps table's rows as they are)."""
    return steps_relation(a).rows()


def render_steps(a: Results, fmt: str) -> str:
    rel = steps_relation(a)
    rows = rel.rows()
    if fmt == "json":
        return to_json({"steps": rows})
    if fmt == "csv":
        return to_csv([Field(k, itemgetter(k)) for k in rel.columns], rows)
    width = terminal_width()
    if not rows:
        return "\n".join(wrap([S.NO_STEPS], width))
    device = S.has_device_steps(a.summary)
    columns = S.steps_columns(rows, len({r["rank"] for r in rows}) > 1, device)
    fitted = fit(columns, rows, None, None if fmt == "md" else width, 0)
    typical = [S.typical_note(a.summary.typical)] if len({r["rank"] for r in rows}) == 1 else []
    notes = typical + ([S.ELAPSED_NOTE] if device else [])
    notes += [q] if device and (q := S.queued_note(a.summary.steps)) else []
    notes += [ORIGIN_NOTE] if {"Start", "Ended"} & set(fitted.headers) else []
    return grid(fmt, fitted.headers, fitted.cells, notes + fitted.footer(), width, fitted.lefts, fitted.sep)
