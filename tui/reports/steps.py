"""`tracetui steps`: one row per ProfilerStep#N on each rank, by the summary's step rule (tui/model/steps.py).

The rows are the SQL `steps` table's and the API's `Trace.steps()`: one definition, three ways in.
"""

from __future__ import annotations

from operator import itemgetter

from ..fmt import fmt_time
from ..model.analyses.results import Results
from ..model.query.tables import steps as steps_relation
from ..tables import summary as S
from ..tables.base import Field
from .formats import grid, terminal_width, to_csv, to_json

TIMES = ("start_us", "dur_us", "device_us", "end_us", "elapsed_us")
HEADS = {"start_us": "Start", "dur_us": "CPU span", "device_us": "GPU busy", "end_us": "Ended", "elapsed_us": "Elapsed"}
NO_STEPS = "no ProfilerStep#N in this trace (a profiler schedule with prof.step() records them)"
ORIGIN_NOTE = "Start and Ended count from the trace's first event, as every time tracetui prints."


def step_rows(a: Results) -> list[dict]:
    """The steps as dicts of plain values, in rank then step order (what --format json prints under "steps")."""
    return steps_relation(a).rows()


def render_steps(a: Results, fmt: str) -> str:
    rel = steps_relation(a)
    rows = rel.rows()
    if fmt == "json":
        return to_json({"steps": rows})
    if fmt == "csv":
        return to_csv([Field(k, itemgetter(k)) for k in rel.columns], rows)
    if not rows:
        return NO_STEPS
    ranks = len({r["rank"] for r in rows}) > 1
    heads = ["Step"] + (["Rank"] if ranks else []) + [HEADS[k] for k in TIMES] + ["Launches"]
    cells = [
        [r["name"]] + ([str(r["rank"])] if ranks else []) + [fmt_time(r[k]) for k in TIMES] + [str(r["launches"])]
        for r in rows
    ]
    return grid(fmt, heads, cells, [S.ELAPSED_NOTE, ORIGIN_NOTE], terminal_width())
