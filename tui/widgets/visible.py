"""No control character from a trace reaches the terminal through the viewer: one line filter at the App.

Textual draws a segment's text as it is, and rich's Text drops only BEL, BS, VT, FF and CR: an ESC in a kernel's
name set the terminal's title (`ESC ] 0`), wrote its clipboard (`ESC ] 52`) and cleared the screen. The widgets
build their text through tui.text.sanitize where names enter (tables, lanes, the tree, the details), which keeps
them aligned; this filter, applied by Textual to every line of every widget (Textual's own too: tabs, titles,
notifications, the palette, tooltips), is the net under them: what any widget missed is shown as an escape,
the line kept to its width.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

from ..text.sanitize import has_unsafe, visible


class VisibleFilter(LineFilter):
    """Every segment's text as `visible` shows it, the line cut (or padded) back to the cells it had."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if not has_unsafe("".join([s.text for s in segments if not s.control])):  # one search a line: the usual
            return segments
        length = sum(s.cell_length for s in segments)
        shown = [s if s.control else Segment(visible(s.text), s.style, s.control) for s in segments]
        return Segment.adjust_line_length(shown, length, segments[-1].style if segments else None)


class VisibleText:
    """Mixed into each App: its line filters end with VisibleFilter (Textual asks the app for every widget's)."""

    _visible_filter = VisibleFilter()

    def get_line_filters(self) -> Sequence[LineFilter]:
        return [*super().get_line_filters(), self._visible_filter]  # type: ignore[misc]
