"""The output formats every report shares: a text or markdown grid, JSON, CSV."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import sys
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


MIN_NAME = 24  # the narrowest the name column gets on a narrow terminal


def terminal_width() -> int | None:
    """The columns to fit text tables in: TRACETUI_COLUMNS, else the terminal's when printing to one (None: any)."""
    if os.environ.get("TRACETUI_COLUMNS", "").isdigit():
        return int(os.environ["TRACETUI_COLUMNS"])
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def grid(
    fmt: str, heads: list[str], rows: list[list[str]], footers: list[str], width: int | None = None, left: bool = False
) -> str:
    """Text (torch's layout: names left, numbers right) or a markdown table, then footers."""
    if fmt == "md":
        lines = ["| " + " | ".join(heads) + " |", "|" + "|".join(["---"] + ["---:"] * (len(heads) - 1)) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        return "\n".join(lines + ([""] + footers if footers else []))
    return text_grid(heads, rows, width, left) + ("\n" + "\n".join(footers) if footers else "")


def text_grid(heads: list[str], rows: list[list[str]], width: int | None = None, left: bool = False) -> str:
    """A table sized to its content, three spaces between columns, a rule under the header; numbers right
    (everything left with left=True). Wider than `width`, only the first (name) column shrinks."""
    widths = [max([len(h)] + [len(r[k]) for r in rows]) for k, h in enumerate(heads)]
    total = sum(widths) + 3 * (len(widths) - 1)
    if width is not None and total > width and widths[0] > MIN_NAME:
        widths[0] = max(MIN_NAME, widths[0] - (total - width))
        total = sum(widths) + 3 * (len(widths) - 1)

    def line(cells: list[str]) -> str:
        first = cells[0] if len(cells[0]) <= widths[0] else cells[0][: widths[0] - 3] + "..."
        out = [first.ljust(widths[0])]
        out += [c.ljust(w) if left else c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "   ".join(out).rstrip()

    return "\n".join([line(heads), "─" * total, *(line(r) for r in rows)])
