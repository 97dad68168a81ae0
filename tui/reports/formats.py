"""The output formats every report shares: a text or markdown grid, JSON, CSV."""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar

from ..model import settings
from ..tables.base import SEP, Column, Field, fit, fit_readable, kept_sorted
from ..text.names import shorten
from ..text.sanitize import cell_len, crop_cells, csv_cell, ljust_cells, rjust_cells, visible

US_DECIMALS = 3  # a trace's times are whole nanoseconds: a microsecond value has 3 decimals, any more is float noise
# maps of a name to microseconds: a critical path's classes, a rank's collectives
US_MAPS = frozenset({"breakdown", "collectives"})


def in_us(key: object) -> bool:
    """Whether a JSON key (a CSV column) holds microseconds: `us`, `…_us`, or a map of US_MAPS."""
    k = str(key)
    return k == "us" or k.endswith("_us") or k in US_MAPS


def written(value: Any, us: bool = False) -> Any:
    """A value as JSON and CSV write it: microseconds rounded to the nanosecond (9214.157, never 9214.157000000001).

    us: the value is in microseconds. A key that holds microseconds (in_us) makes everything under it so, as does
    a figure's unit ({"value": …, "unit": "us"}); every other value is as it was (a share keeps its digits).
    The one definition: to_json and to_csv write through it, and the documents the Python API returns (written_doc)
    are the JSON's figures."""
    if isinstance(value, float):
        return round(float(value), US_DECIMALS) + 0.0 if us and math.isfinite(value) else value  # + 0.0: never -0.0
    if isinstance(value, dict):
        figure = value.get("unit") == "us"
        return {k: written(v, us or in_us(k) or (figure and k == "value")) for k, v in value.items()}
    if isinstance(value, list):
        return [written(v, us) for v in value]
    if isinstance(value, tuple):
        return tuple(written(v, us) for v in value)
    return value


P = ParamSpec("P")
D = TypeVar("D")


def written_doc(document: Callable[P, D]) -> Callable[P, D]:
    """A function that returns what a `--format json` prints, returning it as written (the Python API returns the
    same figures as the JSON)."""

    @functools.wraps(document)
    def as_written(*args: P.args, **kwargs: P.kwargs) -> D:
        return written(document(*args, **kwargs))

    return as_written


def to_json(doc: dict) -> str:
    return json.dumps(written(doc), indent=2)


def to_csv(fields: Sequence[Field], rows: Sequence[Any]) -> str:
    """A header of the JSON keys (also when there are no rows), then one line per row, values as written (text a
    spreadsheet would run as a formula prefixed, control characters visible: csv_cell)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([f.key for f in fields])
    w.writerows([[csv_cell(written(f.value(r), in_us(f.key))) for f in fields] for r in rows])
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
    middle; said in a footer) or markdown. Width 0: every column, names whole. No rows: only the footers, which say
    why (no header over nothing), when there are any."""
    if not rows and footers:
        return "\n".join(footers if fmt == "md" else wrap(footers, width))
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
    heads, rows = visible_cells(heads, rows)
    label = max(cell_len(r[0]) for r in [heads, *rows])
    room = max(width - label - SEP, 20)
    rule = "─" * min(width, label + SEP + max(cell_len(r[1]) for r in rows))
    lines = [ljust_cells(heads[0], label) + " " * SEP + heads[1], rule]
    for name, value in rows:
        parts = textwrap.wrap(value, room, break_on_hyphens=False) or [""]
        lines += [ljust_cells(name if k == 0 else "", label) + " " * SEP + p for k, p in enumerate(parts)]
    return "\n".join(line.rstrip() for line in lines)


PROSE_WIDTH = 100  # where prose and label lines wrap with no terminal to fit (a file, a pipe)


def terminal_width() -> int | None:
    """The columns to fit text tables in: TRACETUI_COLUMNS (0: no limit), else the terminal's when printing to
    one (None: any, torch's layout)."""
    asked = settings.columns()
    if asked is not None:
        return asked
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
    """Text (torch's layout: names left, numbers right) or a markdown table, then footers (wrapped at width).

    left: every column but the first (always left) left, or each column's alignment. Markdown aligns text left and
    numbers right: a column not left is right-aligned only when its cells are numbers (md_numbers). Every cell and
    footer is shown as `visible` shows it (a trace's names are data: no control character reaches the terminal)."""
    footers = visible_all(footers)
    if fmt == "md":
        heads, rows = visible_cells(heads, rows)
        lefts = _lefts(left, len(heads))
        rule = ["---" if on_left or not md_numbers([r[k] for r in rows]) else "---:" for k, on_left in enumerate(lefts)]
        lines = ["| " + " | ".join(heads) + " |", "|" + "|".join(rule) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        return "\n".join(lines + ([""] + footers if footers else []))
    footers = wrap(footers, width)
    return text_grid(heads, rows, width, left, sep) + ("\n" + "\n".join(footers) if footers else "")


def visible_all(lines: list[str]) -> list[str]:
    """Lines as `visible` shows each, their newlines kept."""
    return ["\n".join(visible(part) for part in line.split("\n")) for line in lines]


def visible_cells(heads: list[str], rows: list[list[str]]) -> tuple[list[str], list[list[str]]]:
    """A table's header and cells as `visible` shows them: a newline or carriage return no longer splits a row."""
    return [visible(h) for h in heads], [[visible(c) for c in r] for r in rows]


NUMBER = re.compile(r"[-+−~≈<>≤≥]?\s*\.?\d")  # a cell that starts with a number: 1,234 · 4.41 ms · 92.1% · ~3
PLACEHOLDERS = frozenset({"", "-", "—", "n/a", "NULL"})  # no value: says nothing of a column's kind


def md_numbers(cells: list[str]) -> bool:
    """Whether a markdown column holds numbers (right-aligned): at least half its values start with a number (a
    figures column with a verdict among them still is one). A column of no values is one (as it always was)."""
    values = [c.strip() for c in cells if c.strip() not in PLACEHOLDERS]
    return 2 * sum(1 for c in values if NUMBER.match(c)) >= len(values)


def titled(fmt: str, title: str, table_text: str) -> str:
    """A title over a table: in markdown a blank line between (a paragraph touching a table is part of it)."""
    return title + ("\n\n" if fmt == "md" else "\n") + table_text


def _lefts(left: bool | list[bool], n: int) -> list[bool]:
    """Each column's alignment: the first always left, the others as given (one for all, or one each)."""
    lefts = left if isinstance(left, list) else [left] * n
    return [k == 0 or on_left for k, on_left in enumerate(lefts)]


def text_grid(
    heads: list[str], rows: list[list[str]], width: int | None = None, left: bool | list[bool] = False, sep: int = SEP
) -> str:
    """A table sized to its content, three spaces between columns, a rule under the header; numbers right
    (everything left with left=True). Wider than `width`, only the first (name) column shrinks. Widths are terminal
    cells (a wide character takes two), of the cells as `visible` shows them."""
    heads, rows = visible_cells(heads, rows)
    widths = [max([cell_len(h)] + [cell_len(r[k]) for r in rows]) for k, h in enumerate(heads)]  # terminal cells
    lefts = _lefts(left, len(heads))
    total = sum(widths) + sep * (len(widths) - 1)
    if width and total > width and widths[0] > MIN_NAME:
        widths[0] = max(MIN_NAME, widths[0] - (total - width))
        total = sum(widths) + sep * (len(widths) - 1)

    def line(cells: list[str]) -> str:
        first = cells[0] if cell_len(cells[0]) <= widths[0] else crop_cells(shorten(cells[0], widths[0]), widths[0])
        out = [ljust_cells(first, widths[0])]
        out += [
            ljust_cells(c, w) if on_left else rjust_cells(c, w)
            for c, w, on_left in zip(cells[1:], widths[1:], lefts[1:], strict=True)
        ]
        return (" " * sep).join(out).rstrip()

    return "\n".join([line(heads), "─" * total, *(line(r) for r in rows)])
