"""Text from a trace made safe to show: control characters, escape sequences and bidi overrides as visible escapes,
and widths counted in terminal cells.

A trace's names (ops, kernels, threads, processes, args) and file names are data, never terminal input: an ESC in a
name would let it set the window title (`ESC ] 0`), write the clipboard (`ESC ] 52`) or clear the screen. rich's
Text drops only BEL, BS, VT, FF and CR (rich/control.py); ESC, the other C0 controls, C1 controls and bidi overrides
pass through to the terminal. Every renderer (text and markdown reports, CSV, the viewer's cells, panels, titles and
notes, stderr) shows such text through `visible`. JSON keeps the raw string (json.dumps escapes it).

Widths are terminal cells (rich.cells.cell_len: a wide CJK character takes 2, a combining mark 0), so that tables
of such names stay aligned.
"""

from __future__ import annotations

import re

from rich.cells import cell_len, set_cell_size

from .escape import has_unsafe, visible, visible_data, visible_lines

__all__ = [
    "cell_len",
    "crop_cells",
    "csv_cell",
    "has_unsafe",
    "ljust_cells",
    "rjust_cells",
    "visible",
    "visible_data",
    "visible_lines",
]

ELLIPSIS = "…"


def ljust_cells(text: str, width: int) -> str:
    """Text padded on the right to width terminal cells (str.ljust counts characters: a wide name went too far)."""
    return text + " " * (width - cell_len(text))


def rjust_cells(text: str, width: int) -> str:
    """Text padded on the left to width terminal cells."""
    return " " * (width - cell_len(text)) + text


def crop_cells(text: str, width: int) -> str:
    """Text cut to at most width terminal cells, its end replaced by `…` when cut (a wide character that would
    straddle the edge is left out, a space in its place)."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    return set_cell_size(text, width - 1) + ELLIPSIS


def middle_cut(text: str, width: int) -> str:
    """Text within width cells, cut in its middle: its start and its end, `…` between (crop_cells keeps the start;
    text/name_forms.py cuts names by characters, without rich)."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    end_cells = (width - 1) // 2
    end = ""
    for ch in reversed(text):
        if cell_len(ch + end) > end_cells:
            break
        end = ch + end
    return set_cell_size(text, width - 1 - cell_len(end)) + ELLIPSIS + end


# OWASP's advice for CSV injection: a cell a spreadsheet would read as a formula starts with `'`.
_FORMULA = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?%?")


def csv_cell(value: object) -> str:
    """A CSV cell's text: visible (no control reaches a terminal that shows the file), and text a spreadsheet would
    run as a formula (starting with =, +, -, @) prefixed with `'`; a number (-1.5, -inf, or text such as -1.5)
    stays a number; nothing (None) is an empty cell, as csv.writer writes it."""
    if value is None:
        return ""
    text = str(value)
    number = isinstance(value, (int, float)) or _NUMBER.fullmatch(text)
    if text.startswith(_FORMULA) and not number:
        text = "'" + text
    return visible(text)
