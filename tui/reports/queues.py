"""`tracetui kernels --queues`: each stream's launch queue and its launches' delays."""

from __future__ import annotations

from ..model.analyses.results import Results
from ..tables import queues as queues_table
from .formats import table, terminal_width, to_csv, to_json, written_doc


@written_doc
def queues_document(a: Results) -> dict:
    """What `tracetui kernels --queues --format json` prints: one row per stream with launched work."""
    return {"streams": [{f.key: f.value(r) for f in queues_table.FIELDS} for r in a.queues]}


def render_queues(a: Results, fmt: str) -> str:
    if fmt == "json":
        return to_json(queues_document(a))
    if fmt == "csv":
        return to_csv(queues_table.FIELDS, a.queues)
    ranks = len({r.rank for r in a.queues}) > 1
    columns, footers = queues_table.columns(ranks), queues_table.footers(a.queues)
    return table(fmt, columns, a.queues, None, queues_table.NAME_WIDTH, footers, terminal_width())
