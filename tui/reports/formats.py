"""The output formats every report shares: a text or markdown grid, JSON, CSV."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

from ..names import shorten
from ..tables.base import SEP, Column, Field, fit, fit_readable, kept_sorted


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


def table(
    fmt: str,
    columns: Sequence[Column],
    rows: Sequence[Any],
    context: Any,
    name_width: int,
    footers: list[str],
    width: int | None,
    sort: str | None = None,
) -> str:
    """A table definition's rows as text fitted to width (columns dropped, never the one sorted by; names cut in the
    middle; said in a footer) or markdown. Width 0: every column, names whole."""
    if fmt != "md" and width:
        fitted = fit_readable(columns, rows, context, width, sort)
    else:
        fitted = fit(
            kept_sorted(list(columns), sort),
            rows,
            context,
            None if fmt == "md" else width,
            0 if width == 0 else name_width,
        )
    notes = fitted.footer()
    return grid(fmt, fitted.headers, fitted.cells, footers + notes, width, fitted.lefts, fitted.sep)


def wrap(lines: list[str], width: int | None, indent: str = "") -> list[str]:
    """Lines wrapped at width (as they are without one)."""
    if not width:
        return lines
    return [w for line in lines for w in (textwrap.wrap(line, width, subsequent_indent=indent) or [""])]


def wrap_prose(lines: list[str], width: int | None) -> list[str]:
    """Prose wrapped at width, each wrapped line indented as its first (a `* ` bullet's under its text)."""
    if not width:
        return lines
    out = []
    for text in "\n".join(lines).split("\n"):
        lead = len(text) - len(text.lstrip(" "))
        indent = " " * (lead + 2 if text.lstrip().startswith("* ") else lead)
        out += textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=False) or [""]
    return out


def label_grid(heads: list[str], rows: list[list[str]], width: int | None) -> str:
    """Label and value lines (both left), the value wrapped beside its label at width."""
    if not width:
        return text_grid(heads, rows, None, left=True)
    label = max(len(r[0]) for r in [heads, *rows])
    room = max(width - label - SEP, 20)
    lines = [heads[0].ljust(label) + " " * SEP + heads[1], "─" * min(width, label + SEP + max(len(r[1]) for r in rows))]
    for name, value in rows:
        parts = textwrap.wrap(value, room, break_on_hyphens=False) or [""]
        lines += [(name if k == 0 else "").ljust(label) + " " * SEP + p for k, p in enumerate(parts)]
    return "\n".join(line.rstrip() for line in lines)


def terminal_width() -> int | None:
    """The columns to fit text tables in: TRACETUI_COLUMNS (0: no limit), else the terminal's when printing to
    one (None: any, torch's layout)."""
    if os.environ.get("TRACETUI_COLUMNS", "").isdigit():
        return int(os.environ["TRACETUI_COLUMNS"])
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def grid(
    fmt: str,
    heads: list[str],
    rows: list[list[str]],
    footers: list[str],
    width: int | None = None,
    left: bool | list[bool] = False,
    sep: int = SEP,
) -> str:
    """Text (torch's layout: names left, numbers right) or a markdown table, then footers (wrapped at width)."""
    if fmt == "md":
        lines = ["| " + " | ".join(heads) + " |", "|" + "|".join(["---"] + ["---:"] * (len(heads) - 1)) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        return "\n".join(lines + ([""] + footers if footers else []))
    footers = wrap(footers, width)
    return text_grid(heads, rows, width, left, sep) + ("\n" + "\n".join(footers) if footers else "")


def text_grid(
    heads: list[str], rows: list[list[str]], width: int | None = None, left: bool | list[bool] = False, sep: int = SEP
) -> str:
    """A table sized to its content, three spaces between columns, a rule under the header; numbers right
    (everything left with left=True). Wider than `width`, only the first (name) column shrinks."""
    widths = [max([len(h)] + [len(r[k]) for r in rows]) for k, h in enumerate(heads)]
    lefts = left if isinstance(left, list) else [True] + [left] * (len(heads) - 1)
    total = sum(widths) + sep * (len(widths) - 1)
    if width and total > width and widths[0] > MIN_NAME:
        widths[0] = max(MIN_NAME, widths[0] - (total - width))
        total = sum(widths) + sep * (len(widths) - 1)

    def line(cells: list[str]) -> str:
        first = cells[0] if len(cells[0]) <= widths[0] else shorten(cells[0], widths[0])
        out = [first.ljust(widths[0])]
        out += [
            c.ljust(w) if on_left else c.rjust(w)
            for c, w, on_left in zip(cells[1:], widths[1:], lefts[1:], strict=True)
        ]
        return (" " * sep).join(out).rstrip()

    return "\n".join([line(heads), "─" * total, *(line(r) for r in rows)])
