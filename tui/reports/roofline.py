"""`tracetui roofline`: the roofline table in the asked format, with the device its roofs are of."""

from __future__ import annotations

from ..model.analyses.roofline.points import Roofline
from ..tables import roofline as R
from ..tables.base import limit, sort_rows
from .formats import table, terminal_width, to_csv, to_json, written_doc


@written_doc
def roofline_document(t: Roofline, sort: str | None, n: int) -> dict:
    """What `tracetui roofline --format json` prints, as data."""
    rows = limit(sort_rows(t.rows, R.SORTS, R.resolve_sort(sort)), n)
    doc = {"device": R.device_doc(t), "rows": [{f.key: f.value(r) for f in R.FIELDS} for r in rows]}
    return {**doc, "not_modelled": R.not_modelled_doc(t)}


def render_roofline(t: Roofline, fmt: str, sort: str | None, n: int) -> str:
    if fmt == "json":
        return to_json(roofline_document(t, sort, n))
    key = R.resolve_sort(sort)
    rows = limit(sort_rows(t.rows, R.SORTS, key), n)
    if fmt == "csv":
        return to_csv(R.FIELDS, rows)
    return table(fmt, R.COLUMNS, rows, t, R.NAME_WIDTH, R.footers(t), terminal_width(), key)
