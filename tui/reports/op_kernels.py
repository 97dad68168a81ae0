"""`tracetui ops --kernels`: each op's kernel sequence, its calls and its launch delays."""

from __future__ import annotations

from ..model.analyses.results import Results
from ..tables import op_kernels as op_kernels_table
from ..tables.base import limit, sort_rows
from .formats import table, terminal_width, to_csv, to_json, written_doc


def _rows(a: Results, sort: str | None, n: int) -> list:
    return limit(sort_rows(a.op_kernels, op_kernels_table.SORTS, op_kernels_table.resolve_sort(sort)), n)


@written_doc
def op_kernels_document(a: Results, sort: str | None = None, n: int = 0) -> dict:
    """What `tracetui ops --kernels --format json` prints: per (op, kernel sequence), sorted, limit n rows (0: all)."""
    return {"rows": [{f.key: f.value(r) for f in op_kernels_table.FIELDS} for r in _rows(a, sort, n)]}


def render_op_kernels(a: Results, fmt: str, sort: str | None = None, n: int = 0) -> str:
    if fmt == "json":
        return to_json(op_kernels_document(a, sort, n))
    rows = _rows(a, sort, n)
    if fmt == "csv":
        return to_csv(op_kernels_table.CSV_FIELDS, rows)
    t = op_kernels_table
    return table(fmt, t.columns(), rows, t.cut_names(rows), t.NAME_WIDTH, t.footers(rows), terminal_width())
