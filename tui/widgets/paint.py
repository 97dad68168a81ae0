"""Turn lane cells into styled segments: stable colours, eighth blocks, labels, highlights."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from rich.color import Color
from rich.segment import Segment
from rich.style import Style

from ..model.view.lanes import BUSY, EMPTY, Cells
from ..text.sanitize import cell_len, crop_cells, ljust_cells, visible

# Eighth blocks filled from the left: 0/8 .. 8/8.
LEFT = " ▏▎▍▌▋▊▉█"
SHADES = "░▒▓"
PALETTE = [
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#b07aa1",
    "#76b7b2",
    "#edc948",
    "#e15759",
    "#9c755f",
    "#86bcb6",
    "#d37295",
    "#8cd17d",
    "#a0cbe8",
    "#ffbe7d",
    "#b6992d",
    "#499894",
    "#f1ce63",
]
SELECTED = Color.parse("#ffffff")  # the selection and matches keep their meaning in every theme
MATCH = Color.parse("#ffd700")
ON_PATH = Color.parse("#ff5f87")  # the critical path's events (b); the rest dimmed
DIMMED = Color.parse("#3a3f47")


@dataclass(frozen=True)
class LaneColors:
    """What the theme decides in a lane: the CPU and GPU lane backgrounds and the shade of busy cells."""

    lane_bg: Color = Color.parse("#1c1f24")
    gpu_bg: Color = Color.parse("#111418")
    busy_fg: Color = Color.parse("#8a8f98")


LANES = [LaneColors()]  # the current theme's (set by the Timeline from its component classes)


def use_theme(colors: LaneColors) -> None:
    LANES[0] = colors


@lru_cache(maxsize=65536)
def color_of(name: str) -> Color:
    """A colour per name, stable across runs and machines."""
    return Color.parse(PALETTE[zlib.crc32(name.encode()) % len(PALETTE)])


@lru_cache(maxsize=4096)
def style(fg: Color | None, bg: Color | None) -> Style:
    """Styles are made once per colour pair: building them per cell dominated the frame time."""
    return Style(color=fg, bgcolor=bg)


@lru_cache(maxsize=256)
def text_on(bg: Color) -> Color:
    r, g, b = bg.get_truecolor()
    return Color.parse("#000000") if (0.299 * r + 0.587 * g + 0.114 * b) > 140 else Color.parse("#ffffff")


def paint_row(
    cells: Cells,
    name_of,
    selected: int,
    matches: np.ndarray | None,
    gpu: bool,
    mark_col: int = -1,
    path: np.ndarray | None = None,
    hot: np.ndarray | None = None,
) -> list[Segment]:
    """Segments for one row: name_of(event) gives its name; the selection and matches (a mask over
    all events, or None) are highlighted; with a critical path (a mask over all events), its events
    stand out and the others are dimmed; hot marks the cells a path event covers (a merged cell shows it).

    mark_col is the cell where the selected event starts; if that cell is merged (busy), it is
    drawn in the selection colour so a tiny selected event stays visible at any zoom.
    """
    bg = LANES[0].gpu_bg if gpu else LANES[0].lane_bg
    out: list[tuple[str, Style]] = []
    k, width = 0, len(cells.event)
    events = cells.event.tolist()
    while k < width:
        ev = events[k]
        if ev >= 0 and cells.head[k] == 0 and cells.tail[k] == 0:
            run = k
            while run < width and events[run] == ev and cells.head[run] == 0 and cells.tail[run] == 0:
                run += 1
            out.append(_label_run(name_of(ev), run - k, _fill(ev, name_of, selected, matches, path)))
            k = run
            continue
        if k == mark_col and ev == BUSY:
            out.append(("▮", style(SELECTED, bg)))
        else:
            out.append(_cell(ev, cells, k, name_of, selected, matches, bg, path, hot))
        k += 1
    return _merge(out, bg)


def _fill(ev: int, name_of, selected: int, matches: np.ndarray | None, path: np.ndarray | None = None) -> Color:
    if ev == selected:
        return SELECTED
    if matches is not None and matches[ev]:
        return MATCH
    if path is not None:
        return ON_PATH if path[ev] else DIMMED
    return color_of(name_of(ev))


def _label_run(name: str, length: int, color: Color) -> tuple[str, Style]:
    """A slice's name in its run of cells: shown as data (visible), cut and padded by cells so the lane stays in
    time with the ruler."""
    name = visible(name)
    text = name if cell_len(name) <= length else (crop_cells(name, length) if length >= 4 else "")
    return ljust_cells(text, length), style(text_on(color), color)


def _cell(
    ev: int, cells: Cells, k: int, name_of, selected, matches, bg: Color, path=None, hot=None
) -> tuple[str, Style]:
    if ev == EMPTY:
        return " ", style(None, bg)
    if ev == BUSY:
        shade = SHADES[min(int(cells.cover[k] * len(SHADES)), len(SHADES) - 1)]
        if path is None:
            return shade, style(LANES[0].busy_fg, bg)
        return shade, style(ON_PATH if hot is not None and hot[k] else DIMMED, bg)
    color = _fill(ev, name_of, selected, matches, path)
    head, tail = float(cells.head[k]), float(cells.tail[k])
    if head > 0 and tail > 0:  # starts and ends inside this cell
        return LEFT[max(1, round(cells.cover[k] * 8))], style(color, bg)
    if head > 0:  # starts mid-cell: background on the left, colour on the right
        return LEFT[min(round(head * 8), 7)], style(bg, color)
    return LEFT[max(round((1 - tail) * 8), 1)], style(color, bg)


def _merge(parts: list[tuple[str, Style]], bg: Color) -> list[Segment]:
    """Join neighbouring parts of the same (cached, so identical) style into one segment."""
    segments: list[Segment] = []
    texts: list[str] = []
    current = None
    for text, st in parts:
        if st is not current and texts:
            segments.append(Segment("".join(texts), current))
            texts = []
        current = st
        texts.append(text)
    if texts:
        segments.append(Segment("".join(texts), current))
    return segments
