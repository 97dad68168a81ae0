"""Control characters, escape sequences and bidi overrides from a trace as visible escapes (`\\x1b`, `\\u202e`).

The half of the sanitizer that needs no terminal widths, so the command line's every write goes through it without
importing rich (`--help` and `--version` stay fast); tui.text.sanitize adds the cell widths."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

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
