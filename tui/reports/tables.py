"""`tracetui ops` and `tracetui kernels`: a table definition rendered in the asked format."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.analyses.results import Results
from ..tables import ops as O
from ..tables.base import limit, sort_rows
from .formats import table as fitted
from .formats import terminal_width, to_csv, to_json, written_doc

if TYPE_CHECKING:
    from ..model.analyses.code import CodeTable

# The kernels' and the code's tables are imported by their functions: `ops` would import the critical path's
# package with the kernels table (its launch queues) for nothing.


@written_doc
def ops_document(a: Results, sort: str | None, n: int, grouped: bool, python_frames: bool = False) -> dict:
    """What `tracetui ops --format json` prints, as data (python_frames: frames as rows, as torch 2.12-2.13)."""
    table = a.op_table(grouped, python_frames)
    table, rows = O.sorted_table(table, O.resolve_sort(sort, table))
    fields = O.fields(grouped, table.has_memory)
    return {"rows": [{f.key: f.value(r) for f in fields} for r in limit(rows, n)], **O.totals(table)}


def render_ops(a: Results, fmt: str, sort: str | None, n: int, grouped: bool, python_frames: bool = False) -> str:
    if fmt == "json":
        return to_json(ops_document(a, sort, n, grouped, python_frames))
    table = a.op_table(grouped, python_frames)
    key = O.resolve_sort(sort, table)
    table, rows = O.sorted_table(table, key)
    rows = limit(rows, n)
    fields = O.fields(grouped, table.has_memory)
    if fmt == "csv":
        return to_csv(fields, rows)
    columns = O.columns(table, grouped)
    foot = O.footers(table) + O.unsorted_note(key, table)
    return fitted(fmt, columns, rows, table, O.NAME_WIDTH, foot, terminal_width(), key)


@written_doc
def kernels_document(a: Results, sort: str | None, n: int) -> dict:
    """What `tracetui kernels --format json` prints, as data."""
    from ..tables import kernels as K

    rows = limit(sort_rows(a.kernels, K.SORTS, K.resolve_sort(sort)), n)
    return {"rows": [{f.key: f.value(r) for f in K.FIELDS} for r in rows], **K.totals(a.kernels)}


def render_kernels(a: Results, fmt: str, sort: str | None, n: int) -> str:
    from ..tables import kernels as K
    from ..tables import summary as S

    if fmt == "json":
        return to_json(kernels_document(a, sort, n))
    key = K.resolve_sort(sort)
    rows = limit(sort_rows(a.kernels, K.SORTS, key), n)
    if fmt == "csv":
        return to_csv(K.FIELDS, rows)
    none = "" if a.kernels else S.no_gpu_text(a.summary) or ""  # the summary only when there is no row to total
    foot = K.footers(a.kernels, none)
    return fitted(fmt, K.columns(), rows, None, K.NAME_WIDTH, foot, terminal_width(), key)


@written_doc
def code_document(t: CodeTable, sort: str | None, n: int) -> dict:
    """What `tracetui code --format json` prints, as data."""
    from ..tables import code as C

    rows = limit(sort_rows(t.rows, C.SORTS, C.resolve_sort(sort, t)), n)
    return {"rows": [{f.key: f.value(r) for f in C.FIELDS} for r in rows], **C.totals(t)}


def render_code(t: CodeTable, fmt: str, sort: str | None, n: int) -> str:
    from ..tables import code as C

    if fmt == "json":
        return to_json(code_document(t, sort, n))
    key = C.resolve_sort(sort, t)
    rows = limit(sort_rows(t.rows, C.SORTS, key), n)
    if fmt == "csv":
        return to_csv(C.FIELDS, rows)
    return fitted(fmt, C.columns(t), rows, t, C.NAME_WIDTH, C.footers(t), terminal_width(), key)
