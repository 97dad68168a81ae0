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

import dataclasses
import re
from typing import Any

from rich.cells import cell_len, set_cell_size

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

# Code points a terminal acts on or that reorder what follows: C0, DEL, C1, the bidi embeddings, overrides, isolates
# and marks (Unicode UAX #9; the "Trojan Source" characters, CVE-2021-42574), the line and paragraph separators, and
# lone surrogates (a JSON "\ud800" decodes to one; no stream can encode it).
_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029)
_UNSAFE = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *_BIDI]


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_TABLE = {code: _escape(code) for code in _UNSAFE} | {code: _escape(code) for code in range(0xD800, 0xE000)}
_LINES_TABLE = {code: text for code, text in _TABLE.items() if code != 0x0A}  # newlines laid out (no report uses tabs)
_ANY = re.compile("[" + "".join(re.escape(chr(c)) for c in _UNSAFE) + "\ud800-\udfff]")


def has_unsafe(text: str) -> bool:
    """Whether `visible` would change the text."""
    return _ANY.search(text) is not None


def visible(text: str) -> str:
    """One line of text with every control character, bidi control and lone surrogate as a visible escape:
    ESC as `\\x1b`, a newline as `\\x0a`, U+202E as `\\u202e`; any other text as it is."""
    return text.translate(_TABLE) if _ANY.search(text) else text


def visible_lines(text: str) -> str:
    """Text of several lines (a report, a note) as `visible` shows it, keeping its newlines."""
    return text.translate(_LINES_TABLE) if _ANY.search(text) else text


def visible_data(value: Any) -> Any:
    """A value with every string in it (in lists, tuples, dicts and dataclasses, as deep as they go) as `visible`
    shows it: a model's plain result (an event's details, its args) made ready to show; numbers as they are."""
    if type(value) is str:  # a str subclass (an enum of ours) is no trace's text, and keeps its type
        return visible(value)
    if isinstance(value, dict):
        return {visible_data(k): visible_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(visible_data(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changed = {f.name: visible_data(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changed)
    return value


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


# OWASP's advice for CSV injection: a cell a spreadsheet would read as a formula starts with `'`.
_FORMULA = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?%?")


def csv_cell(value: object) -> str:
    """A CSV cell's text: visible (no control reaches a terminal that shows the file), and text a spreadsheet would
    run as a formula (starting with =, +, -, @) prefixed with `'`; a number (-1.5, -inf, or text such as -1.5)
    stays a number."""
    text = str(value)
    number = isinstance(value, (int, float)) or _NUMBER.fullmatch(text)
    if text.startswith(_FORMULA) and not number:
        text = "'" + text
    return visible(text)
