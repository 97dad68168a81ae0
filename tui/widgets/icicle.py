"""The icicle (flame) drawing of the code view's frames, with the Line API: Enter zooms in, Backspace out."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from ..model.view.icicle import ALL, Icicle, Span, Width
from ..text.fmt import fmt_dur
from ..text.names import shorten
from ..text.sanitize import cell_len, crop_cells, ljust_cells, visible
from .paint import color_of, style, text_on

BLANK = Style(bgcolor="#15181c")


MOVE = Binding.Group("move")


class IcicleView(Widget, can_focus=True):
    """Rows of frames, each as wide as its time; the selected frame is highlighted (attributes: set_tree)."""

    HELP_NAME = "Icicle"

    BINDINGS = [
        Binding("enter", "zoom_in", "Zoom into frame", id="icicle.zoom_in"),
        Binding("backspace", "zoom_out", "Zoom out", id="icicle.zoom_out"),
        Binding("left,h", "step(-1)", "Previous frame", id="icicle.prev", group=MOVE),
        Binding("right,l", "step(1)", "Next frame", id="icicle.next", group=MOVE),
        Binding("up,k", "up", "Parent frame", id="icicle.up", group=MOVE),
        Binding("down,j", "down", "Child frame", id="icicle.down", group=MOVE),
    ]

    class Selected(Message):
        """The selected frame in words: its name, then its figures in forms, the longest first (fitted picks)."""

        def __init__(self, name: str, forms: list[str]) -> None:
            super().__init__()
            self.name, self.forms = visible(name), forms  # a name is data

        @property
        def text(self) -> str:
            return self.name + self.forms[0]

        def fitted(self, width: int) -> str:
            """The longest form that fits whole; else the shortest, the name cut in the middle to make room."""
            whole = next((self.name + f for f in self.forms if len(self.name + f) <= width), None)
            return whole or shorten(self.name, max(width - len(self.forms[-1]), 12)) + self.forms[-1]

    def __init__(self, icicle: Icicle, by: str = "device", **kwargs) -> None:
        super().__init__(**kwargs)
        self.icicle = icicle
        self.root, self.selected, self.by = ALL, ALL, by  # by: what the width is (device or cpu time)
        self.cpu_only = by == "cpu"  # a CPU-only capture: no device time to show (v not offered)
        self._rows: list[list[Span]] = []

    def set_tree(self, icicle: Icicle) -> None:
        self.icicle, self.root, self.selected = icicle, ALL, ALL
        self._relayout()

    def on_resize(self) -> None:
        self._relayout()

    def _relayout(self) -> None:
        self._rows = self.icicle.rows(self.root, max(self.size.width, 1), self.by)  # type: ignore[arg-type]
        self.refresh()
        self._announce()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y >= len(self._rows):
            return Strip.blank(width, BLANK)
        segments, at = [], 0
        for span in self._rows[y]:
            if span.start > at:
                segments.append(Segment(" " * (span.start - at), BLANK))
            segments.append(self._span(span))
            at = span.end
        if at < width:
            segments.append(Segment(" " * (width - at), BLANK))
        return Strip(segments, width)

    def _span(self, span: Span) -> Segment:
        name = self.icicle.name(span.node)
        fill = color_of("frame:" + name)
        if span.node == self.selected:
            fill = color_of("selected")
            return Segment(_label(name, span.end - span.start), Style(color="#000000", bgcolor="#ffffff", bold=True))
        return Segment(_label(name, span.end - span.start), style(text_on(fill), fill))

    # ---- moving and zooming ------------------------------------------------------------------

    def _position(self) -> tuple[int, int] | None:
        for y, row in enumerate(self._rows):
            for k, span in enumerate(row):
                if span.node == self.selected:
                    return y, k
        return None

    def action_step(self, step: int) -> None:
        at = self._position()
        if at is not None and self._rows[at[0]]:
            row = self._rows[at[0]]
            self._select(row[min(max(at[1] + step, 0), len(row) - 1)].node)

    def action_up(self) -> None:
        if self.selected != self.root:
            self._select(self.icicle.parent(self.selected))

    def action_down(self) -> None:
        kids = self.icicle.children(self.selected, self.by)  # type: ignore[arg-type]
        if kids:
            self._select(kids[0])

    def action_zoom_in(self) -> None:
        self.root = self.selected
        self._relayout()

    def action_zoom_out(self) -> None:
        if self.root != ALL:
            self.root = self.icicle.parent(self.root)
            self._relayout()

    def action_toggle_width(self) -> None:
        self.by = "cpu" if self.by == "device" else "device"
        self._relayout()

    def _select(self, node: int) -> None:
        self.selected = node
        self.refresh()
        self._announce()

    def _announce(self) -> None:
        by: Width = self.by  # type: ignore[assignment]
        value, whole = self.icicle.value(self.selected, by), self.icicle.value(self.root, by)
        share = f" ({100 * value / whole:.1f}% of the zoomed frame)" if whole else ""
        what = "device time launched from beneath it" if by == "device" else "CPU time"
        kind = "device" if by == "device" else "CPU"  # (a fresh-eyes run: "cpu time" at 80 columns, "CPU time" wider)
        name, switch = self.icicle.name(self.selected), "(no device time in this trace)" if self.cpu_only else "(v)"
        brief = f" ({100 * value / whole:.1f}%)" if whole else ""
        self.post_message(
            self.Selected(
                name,
                [
                    f": {fmt_dur(value)} of {what}{share} · width = {kind} time {switch}",
                    f": {fmt_dur(value)} of {kind} time{brief} · width = {kind} time {switch}",
                    f": {fmt_dur(value)} of {kind} time{brief}",
                ],
            )
        )


def _label(name: str, width: int) -> str:
    """A span's name in its width, its last cell left blank so that two spans side by side never read as one name
    ("nn.Module: Linear_1nn.Module: L…"); cut with … where it is longer."""
    if width <= 0:
        return ""
    room = width - 1 if width >= 2 else width
    name = visible(name)
    text = name if cell_len(name) <= room else (crop_cells(name, room) if room >= 4 else "")
    return ljust_cells(text, width)  # by cells: the spans stay under their time
