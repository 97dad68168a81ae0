"""The pinned time ruler above the lanes: tick labels in units that follow the zoom."""

from __future__ import annotations

import math

from rich.text import Text
from textual.widget import Widget

from ..model.view.viewport import Viewport
from ..text.fmt import fmt_dur, fmt_tick
from .timeline import GUTTER

MIN_TICK_CELLS = 12


def tick_step(bucket: int) -> int:
    """A 1-2-5 step in ns that leaves at least MIN_TICK_CELLS cells between ticks."""
    target = bucket * MIN_TICK_CELLS
    power = 10 ** int(math.floor(math.log10(max(target, 1))))
    for mult in (1, 2, 5, 10):
        if power * mult >= target:
            return power * mult
    return power * 10


def ruler_text(view: Viewport, origin: int, mark: tuple[int, int] | None, gutter: int = GUTTER) -> Text:
    """Two lines: labels relative to the trace start, and tick marks (the mark range shaded)."""
    step = tick_step(view.bucket)
    labels = [" "] * view.width
    ticks = ["─"] * view.width
    first = ((view.t0 - origin) // step + 1) * step + origin
    t = first
    while t < view.t1:
        col = int(view.col_of(t))
        if 0 <= col < view.width:
            ticks[col] = "┬"
            label = fmt_tick(t - origin, step)
            if col + len(label) < view.width and all(c == " " for c in labels[col : col + len(label) + 1]):
                labels[col : col + len(label)] = list(label)
        t += step
    span = f"{fmt_dur(view.t1 - view.t0)} shown"[: gutter - 1].ljust(gutter - 1) + "│"
    text = Text(span + "".join(labels) + "\n" + "time".ljust(gutter - 1) + "│", style="#9aa3ad")
    start = len(text)
    text.append("".join(ticks), style="#5c6370")
    if mark is not None:
        a = max(int(view.col_of(mark[0])), 0)
        b = min(int(math.ceil(view.col_of(mark[1]))), view.width)
        if a < b:
            text.stylize("on #5a4a00", start + a, start + b)
    return text


class Ruler(Widget):
    """Draws ruler_text for the view it is given (attributes down from the screen)."""

    DEFAULT_CSS = "Ruler { height: 2; }"

    def __init__(self, origin: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.origin = origin
        self.view: Viewport | None = None
        self.mark: tuple[int, int] | None = None
        self.name_cols = GUTTER

    def show(self, view: Viewport, mark: tuple[int, int] | None, name_cols: int) -> None:
        self.view, self.mark, self.name_cols = view, mark, name_cols
        self.refresh()

    def render(self) -> Text:
        if self.view is None:
            return Text("")
        return ruler_text(self.view, self.origin, self.mark, self.name_cols)
