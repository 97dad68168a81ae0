"""One line that names the selection when the details panel is closed (or has no room): name, duration, lane.

Attributes down: the screen calls show() with the event (or -1). The text is made here, at render time,
from the trace: the event's name (kernel names folded), how long it lasted, when it started and the
lane the timeline draws it in.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ..model.tracks import lane_titles
from ..text.fmt import fmt_dur
from ..text.names import short_name, shorten
from ..text.sanitize import cell_len, crop_cells, visible

NOTHING = "Nothing selected: ← → (h l) or a click selects an event"
NOTHING_IN_TREE = "Nothing selected: ↑ ↓ or a click picks a node (Enter: its details)"  # the tree, before its cursor


def selection_text(analysis, event: int, origin: int, width: int = 200, titles: dict | None = None) -> str:
    """`aten::linear · 1.16ms · CPU main thread · at 2.41ms`: what, how long, where, when; the name cut in the
    middle (kernel names folded first) so the rest fits in width."""
    if event < 0:
        return NOTHING
    t = analysis.trace
    track = int(t.x.track[event])
    titles = titles if titles is not None else lane_titles([tr for tr in t.tracks if tr.events])
    lane = visible(titles.get(track, (t.tracks[track].name, ""))[0])  # as the timeline titles it; names are data
    start = int(t.x.ts[event]) - origin
    rest = f" · {fmt_dur(int(t.x.dur[event]))} · {lane} · at {fmt_dur(start)}"
    name = short_name(visible(t.name_of(event)), 60)
    room = max(width - cell_len(rest), 16)
    return crop_cells(shorten(name, room), room) + rest


class SelectionLine(Static):
    """The selected event in one line, with the key that opens its details."""

    DEFAULT_CSS = "SelectionLine { height: 1; padding: 0 1; background: $panel; color: $text; }"

    def __init__(self, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)
        self.text = NOTHING
        self.shown: tuple | None = None

    def show(self, analysis, event: int, origin: int, titles: dict | None = None, nothing: str = NOTHING) -> None:
        """nothing: what the line says with no event (how the view shown picks one)."""
        self.shown = (analysis, event, origin, titles, nothing)
        width = (self.size.width or self.app.size.width) - 2 - 2  # the padding, the ▸
        hint = "  (Enter: details)" if event >= 0 and width >= 90 else ""
        self.text = selection_text(analysis, event, origin, width - len(hint), titles) if event >= 0 else nothing
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append("▸ ", style="bold")
        line.append(self.text)
        line.append(hint, style="dim")
        self.update(line)

    def on_resize(self) -> None:
        if self.shown is not None:
            self.show(*self.shown)
