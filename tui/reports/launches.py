"""`tracetui kernels --queues` (each stream's launch queue) and `tracetui ops --kernels` (each op's kernel sequence)."""

from __future__ import annotations

from ..model.analyses.results import Results
from ..tables import op_kernels as K
from ..tables import queues as Q
from ..tables.base import limit, sort_rows
from .formats import table, terminal_width, to_csv, to_json, written_doc


@written_doc
def queues_document(a: Results) -> dict:
    """What `tracetui kernels --queues --format json` prints: one row per stream with launched work."""
    return {"streams": [{f.key: f.value(r) for f in Q.FIELDS} for r in a.queues]}


def render_queues(a: Results, fmt: str) -> str:
    if fmt == "json":
        return to_json(queues_document(a))
    if fmt == "csv":
        return to_csv(Q.FIELDS, a.queues)
    ranks = len({r.rank for r in a.queues}) > 1
    return table(fmt, Q.columns(ranks), a.queues, None, Q.NAME_WIDTH, Q.footers(a.queues), terminal_width())


@written_doc
def op_kernels_document(a: Results, sort: str | None = None, n: int = 0) -> dict:
    """What `tracetui ops --kernels --format json` prints: per (op, kernel sequence), sorted, limit n rows (0: all)."""
    rows = limit(sort_rows(a.op_kernels, K.SORTS, K.resolve_sort(sort)), n)
    return {"rows": [{f.key: f.value(r) for f in K.FIELDS} for r in rows]}


def render_op_kernels(a: Results, fmt: str, sort: str | None = None, n: int = 0) -> str:
    if fmt == "json":
        return to_json(op_kernels_document(a, sort, n))
    rows = limit(sort_rows(a.op_kernels, K.SORTS, K.resolve_sort(sort)), n)
    if fmt == "csv":
        return to_csv(K.CSV_FIELDS, rows)
    return table(fmt, K.columns(), rows, K.cut_names(rows), K.NAME_WIDTH, K.footers(rows), terminal_width())
