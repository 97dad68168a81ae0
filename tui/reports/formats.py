"""The output formats every report shares: a text or markdown grid, JSON, CSV."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

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
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for k, h in enumerate(heads):
        table.add_column(h, justify="left" if k == 0 else "right", no_wrap=True, overflow="ellipsis")
    for row in rows:
        table.add_row(*(Text(c) for c in row))  # Text: names like "[memory]" are not markup
    return _to_text(table) + ("\n" + "\n".join(footers) if footers else "")


def _to_text(renderable: Table) -> str:
    console = Console(file=io.StringIO(), width=400, color_system=None, legacy_windows=False)
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.file.getvalue().splitlines())  # type: ignore[attr-defined]
