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
    table = fitted(fmt, R.columns(rows), rows, None, R.NAME_WIDTH, [], width)
    copies = R.copy_rows(rows)
    copied = [
        f"Copies per rank and direction ({COPY_NOTE}):",
        fitted(fmt, R.COPY_COLUMNS, copies, None, R.NAME_WIDTH, [], width),
    ]
    copied = copied if copies else []
    rule = f"Straggler rule: {job.straggler_rule}."
    if fmt == "md":
        job_grid = grid(fmt, ["Job", ""], [[k, v] for k, v in R.job_lines(job)], [], left=True)
        return "\n\n".join([table, *copied, job_grid, rule])
    lines = [_line(label, text, width or 100) for label, text in R.job_lines(job)]
    spaced = [part for c in copied for part in (c, "")]
    return "\n".join([table, "", *spaced, *lines, "", textwrap.fill(rule, width or 100)])


COPY_NOTE = "GB/s: bytes over device time"  # under 80 columns, as every line


def _line(label: str, text: str, width: int) -> str:
    """A label and its value wrapped beside it."""
    return textwrap.fill(
        text, max(width, 40), initial_indent=f"{label:<16}", subsequent_indent=" " * 16, break_on_hyphens=False
    )
