"""The output formats every report shares: a text or markdown grid, JSON, CSV."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from ..tables.base import Column, Field


def to_json(doc: dict) -> str:
    return json.dumps(doc, indent=2)


def to_csv(fields: Sequence[Field], rows: Sequence[Any]) -> str:
    """A header of the JSON keys (also when there are no rows), then one line per row."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([f.key for f in fields])
    w.writerows([[str(f.value(r)) for f in fields] for r in rows])
    return buf.getvalue().rstrip("\n")


def cells(columns: Sequence[Column], rows: Sequence[Any], context: Any, name_width: int) -> list[list[str]]:
    return [[c.text(r, context, name_width) for c in columns] for r in rows]


def grid(fmt: str, heads: list[str], rows: list[list[str]], footers: list[str]) -> str:
    """Text (a rich table with torch's layout: names left, numbers right) or a markdown table, then footers."""
    if fmt == "md":
        lines = ["| " + " | ".join(heads) + " |", "|" + "|".join(["---"] + ["---:"] * (len(heads) - 1)) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        return "\n".join(lines + ([""] + footers if footers else []))
    return text_grid(heads, rows) + ("\n" + "\n".join(footers) if footers else "")


def text_grid(heads: list[str], rows: list[list[str]]) -> str:
    """A table sized to its content: names left, numbers right, three spaces apart, a rule under the header."""
    widths = [max([len(h)] + [len(r[k]) for r in rows]) for k, h in enumerate(heads)]

    def line(cells: list[str]) -> str:
        out = [c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "   ".join(out).rstrip()

    rule = "─" * (sum(widths) + 3 * (len(widths) - 1))
    return "\n".join([line(heads), rule, *(line(r) for r in rows)])
