"""`tracetui kernels --sequences`: the recurring kernel sequences, how often and how long, and what fusing each
would save on the critical path."""

from __future__ import annotations

from ..model.analyses.fusion import SequenceRow, sequence_rows
from ..model.analyses.results import Results
from ..model.analyses.sequences import replayed
from ..tables import sequences as sequences_table
from .formats import table, terminal_width, to_csv, to_json, written_doc


def _rows(a: Results, min_length: int, top: int) -> list[SequenceRow]:
    return sequence_rows(a, a.sequences, min_length, top, "device")


@written_doc
def sequences_document(
    a: Results, min_length: int = sequences_table.DEFAULT_MIN_LENGTH, top: int = sequences_table.DEFAULT_TOP
) -> dict:
    """What `tracetui kernels --sequences --format json` prints: the top sequences (0: all) of min_length or more."""
    return {"rows": [{f.key: f.value(r) for f in sequences_table.FIELDS} for r in _rows(a, min_length, top)]}


def render_sequences(
    a: Results,
    fmt: str,
    min_length: int = sequences_table.DEFAULT_MIN_LENGTH,
    top: int = sequences_table.DEFAULT_TOP,
) -> str:
    if fmt == "json":
        return to_json(sequences_document(a, min_length, top))
    rows = _rows(a, min_length, top)
    if fmt == "csv":
        return to_csv(sequences_table.CSV_FIELDS, rows)
    t, width = sequences_table, terminal_width()
    cut = t.cut_names(rows, width if fmt != "md" else None)
    return table(fmt, t.columns(), rows, cut, t.NAME_WIDTH, t.footers(rows, min_length, replayed(a.graph_owner)), width)
