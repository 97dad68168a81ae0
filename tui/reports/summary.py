"""`tracetui summary`: the summary lines, the verdict and why, and the steps."""

from __future__ import annotations

import textwrap

from ..model.analyses.results import Results
from ..tables import copies as CP
from ..tables import summary as S
from ..text.escape import visible
from .formats import PROSE_WIDTH, grid, label_grid, terminal_width, titled, to_json, wrap, written_doc


@written_doc
def summary_document(a: Results) -> dict:
    """What `tracetui summary --format json` prints, as data."""
    return (
        S.fields(a.summary)
        | {"copies": CP.fields(a.copies)}
        | ({"job": S.job_fields(a.rank_rows)} if a.trace.job else {})
    )


def render_summary(a: Results, fmt: str) -> str:
    s = a.summary
    if fmt == "json":
        return to_json(summary_document(a))
    width = terminal_width()
    rows = [[label, text] for key, label, text in S.lines(s) if key != "verdict"] + [["Verdict", s.verdict]]
    if a.copies.rows:  # before the CPU and CUDA totals, after the kernels
        rows.insert(
            next((k for k, r in enumerate(rows) if r[0] == S.LABELS["cpu_self_total_us"]), -1),
            [CP.LABEL, CP.line(a.copies)],
        )
    out = (
        grid(fmt, ["Summary", ""], rows, [], width, left=True)
        if fmt == "md"
        else label_grid(["Summary", ""], rows, PROSE_WIDTH if width is None else width)
    )
    why = f"Why: {visible(s.reason)}"  # a name's control characters escaped before wrapping, as every table shows them
    out += "\n\n" + why if fmt == "md" else "\n" + textwrap.fill(why, width or PROSE_WIDTH, subsequent_indent="     ")
    if a.trace.job:
        heads, rows = S.steps_per_rank(a.rank_rows)
        title = f"A job of {len(a.rank_rows)} ranks: steps per rank"
        out += "\n\n" + titled(fmt, title, grid(fmt, heads, rows, [], width))
    elif s.steps:
        shown, hidden = S.shown_steps(s.steps)
        device = S.has_device_steps(s)
        steps = [S.step_cells(st, not device) for st in shown]
        more = [f"… {hidden:,} more steps (the first 4 and the slowest are shown; --format json lists all)"]
        notes = (more if hidden else []) + [S.typical_note(s.typical)] + ([S.ELAPSED_NOTE] if device else [])
        notes += [q] if device and (q := S.queued_note(shown)) else []
        out += "\n\n" + grid(fmt, S.step_heads(s), steps, notes, width)
    else:  # a capture without a schedule (a fresh-eyes run's first trace: "no steps", and nothing said why)
        out += "\n\n" + "\n".join(wrap([S.NO_STEPS], width))
    return out
