"""`tracetui ranks`: one row per rank, then what the job shows (slowest rank, collectives, verdict)."""

from __future__ import annotations

import textwrap

from ..model.jobs import JobReport
from ..tables import ranks as R
from .formats import grid, terminal_width, to_csv, to_json, written_doc
from .formats import table as fitted


@written_doc
def ranks_document(report: JobReport) -> dict:
    """What `tracetui ranks --format json` prints, as data."""
    return {"ranks": [{f.key: f.value(r) for f in R.FIELDS} for r in report.rows], "job": R.job_fields(report.job)}


def render_ranks(report: JobReport, fmt: str) -> str:
    rows, job = report.rows, report.job
    if fmt == "json":
        return to_json(ranks_document(report))
    if fmt == "csv":
        return to_csv(R.CSV_FIELDS, rows)
    width = terminal_width()
    table = fitted(fmt, R.COLUMNS, rows, None, R.NAME_WIDTH, [], width)
    rule = f"Straggler rule: {job.straggler_rule}."
    if fmt == "md":
        return (
            f"{table}\n\n"
            + grid(fmt, ["Job", ""], [[k, v] for k, v in R.job_lines(job)], [], left=True)
            + f"\n\n{rule}"
        )
    lines = [_line(label, text, width or 100) for label, text in R.job_lines(job)]
    return "\n".join([table, "", *lines, "", textwrap.fill(rule, width or 100)])


def _line(label: str, text: str, width: int) -> str:
    """A label and its value wrapped beside it."""
    return textwrap.fill(
        text, max(width, 40), initial_indent=f"{label:<16}", subsequent_indent=" " * 16, break_on_hyphens=False
    )
