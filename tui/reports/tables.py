"""`tracetui ops` and `tracetui kernels`: a table definition rendered in the asked format."""

from __future__ import annotations

from ..model.analyses.code import CodeTable
from ..model.analyses.results import Results
from ..tables import code as C
from ..tables import kernels as K
from ..tables import ops as O
from ..tables.base import limit, sort_rows
from .formats import table as fitted
from .formats import terminal_width, to_csv, to_json


def render_ops(a: Results, fmt: str, sort: str | None, n: int, grouped: bool, hide_python: bool = False) -> str:
    table = a.ops_by_shape if grouped else a.ops
    hidden = [r for r in table.rows if r.is_python] if hide_python else []
    table = table.without_python() if hide_python else table
    rows = limit(sort_rows(table.rows, O.SORTS, O.resolve_sort(sort, table)), n)
    fields = O.fields(grouped, table.has_memory)
    if fmt == "json":
        return to_json({"rows": [{f.key: f.value(r) for f in fields} for r in rows], **O.totals(table)})
    if fmt == "csv":
        return to_csv(fields, rows)
    columns = O.columns(table, grouped)
    footers = O.footers(table) + ([O.hidden_note(hidden)] if hidden else [])
    return fitted(fmt, columns, rows, table, O.NAME_WIDTH, footers, terminal_width())


def render_kernels(a: Results, fmt: str, sort: str | None, n: int) -> str:
    rows = limit(sort_rows(a.kernels, K.SORTS, K.resolve_sort(sort)), n)
    if fmt == "json":
        return to_json({"rows": [{f.key: f.value(r) for f in K.FIELDS} for r in rows], **K.totals(a.kernels)})
    if fmt == "csv":
        return to_csv(K.FIELDS, rows)
    columns = K.columns()
    return fitted(fmt, columns, rows, None, K.NAME_WIDTH, K.footers(a.kernels), terminal_width())


def render_code(t: CodeTable, fmt: str, sort: str | None, n: int) -> str:
    rows = limit(sort_rows(t.rows, C.SORTS, C.resolve_sort(sort, t)), n)
    if fmt == "json":
        return to_json({"rows": [{f.key: f.value(r) for f in C.FIELDS} for r in rows], **C.totals(t)})
    if fmt == "csv":
        return to_csv(C.FIELDS, rows)
    return fitted(fmt, C.columns(t), rows, t, C.NAME_WIDTH, C.footers(t), terminal_width())
