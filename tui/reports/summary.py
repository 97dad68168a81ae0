"""`tracetui summary`: the summary lines and the steps."""

from __future__ import annotations

from ..fmt import fmt_time
from ..model.analyses.results import Results
from ..tables import summary as S
from .formats import grid, to_json


def render_summary(a: Results, fmt: str) -> str:
    s = a.summary
    if fmt == "json":
        return to_json(S.fields(s))
    out = grid(fmt, ["Summary", ""], [[label, text] for _, label, text in S.lines(s)], [])
    if s.steps:
        out += "\n" + grid(fmt, ["Step", "Duration"], [[st.name, fmt_time(st.dur_us)] for st in s.steps], [])
    return out
