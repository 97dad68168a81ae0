"""The roofline view: the ops on log-log axes (FLOP/byte against achieved FLOP/s) under the GPU's roofs, in braille.
The rate axis reads in the unit the tables use for the same rates (tui/tables/rates.py: TFLOP/s, GFLOP/s or MFLOP/s,
as the largest of the ops' rates and the roofs reads).

Attributes down: RooflineView(results) reads results.roofline, computing it in a worker when it is not ready (or
takes a Roofline). Messages up: Enter posts RooflineView.Jump(name), for the screen to show the op's calls.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from ..appkit import pace
from ..model.analyses.results import Results
from ..model.analyses.roofline.peaks import peak
from ..model.analyses.roofline.points import NO_SHAPES, Roofline, RooflineRow, roof_words
from ..tables.rates import BYTE_RATES, FLOP_RATES, Unit, rate_text, unit_for
from ..text.fmt import fmt_time, plural

BLANK = Style(bgcolor="#15181c")
AXIS = Style(color="#8a8f98", bgcolor="#15181c")
ROOF = Style(color="#e5c07b", bgcolor="#15181c")
POINT = Style(color="#61afef", bgcolor="#15181c")
SELECTED = Style(color="#000000", bgcolor="#ffffff", bold=True)
TEXT = Style(color="#d7dae0", bgcolor="#15181c")
LEFT = 9  # the y axis: tick labels and the axis line
BRAILLE = 0x2800
DOTS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))  # [row][column] of a 2x4 braille cell


MOVE = Binding.Group("move")


@dataclass(frozen=True)
class Axes:
    """Log-log axes: decades of intensity (x) and TFLOP/s (y, labelled in the view's unit) mapped onto a grid of
    braille dots."""

    x0: float
    x1: float
    y0: float
    y1: float
    dots_w: int
    dots_h: int

    def dot(self, x: float, y: float) -> tuple[int, int]:
        """The dot (column, row from the top) of a point; may fall outside the grid."""
        fx = (math.log10(x) - self.x0) / (self.x1 - self.x0)
        fy = (math.log10(y) - self.y0) / (self.y1 - self.y0)
        return round(fx * (self.dots_w - 1)), round((1 - fy) * (self.dots_h - 1))

    def x_at(self, col: int) -> float:
        return 10 ** (self.x0 + (self.x1 - self.x0) * col / max(self.dots_w - 1, 1))


def points(table: Roofline) -> list[RooflineRow]:
    """The rows that can be plotted (an intensity and a rate above zero), by intensity."""
    rows = [r for r in table.rows if r.intensity and r.tflops]
    return sorted(rows, key=lambda r: (r.intensity, r.tflops))


def roofs(table: Roofline, rows: list[RooflineRow]) -> list[tuple[str, float]]:
    """The compute roofs to draw: the ones the rows are measured against, the highest first."""
    d = table.device
    if d is None:
        return []
    found = {(r.roof_unit or r.unit, r.roof_dtype or r.dtype) for r in rows}
    out = {f"{u} {t}": p for u, t in found if (p := peak(d, u, t))}
    return sorted(out.items(), key=lambda kv: -kv[1])


def rate_unit(table: Roofline, rows: list[RooflineRow]) -> Unit:
    """The unit the rate axis reads in: as the roofline table's FLOP/s column, from the largest of the rates and
    roofs shown (a CPU capture's ops in GFLOP/s or MFLOP/s, not 2.05e-05 TFLOP/s)."""
    return unit_for([r.tflops for r in rows] + [p for _, p in roofs(table, rows)], FLOP_RATES)


def axes(table: Roofline, rows: list[RooflineRow], dots_w: int, dots_h: int) -> Axes:
    """Whole decades around the points, the peaks and the ridge points."""
    xs = [r.intensity or 1.0 for r in rows]
    ys = [r.tflops or 1.0 for r in rows] + [p for _, p in roofs(table, rows)]
    bw = table.device.peak_gbps if table.device else None
    if bw:
        xs += [p * 1000 / bw for _, p in roofs(table, rows)]
    lo_x, hi_x = math.floor(math.log10(min(xs))), math.ceil(math.log10(max(xs)) + 1e-9)
    lo_y, hi_y = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)) + 1e-9)
    return Axes(lo_x, max(hi_x, lo_x + 1), lo_y, max(hi_y, lo_y + 1), dots_w, dots_h)


class Canvas:
    """Braille cells: each cell holds 2x4 dots of one layer (roof or point)."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.roof = [[0] * width for _ in range(height)]
        self.point = [[0] * width for _ in range(height)]

    def set(self, layer: list[list[int]], col: int, row: int) -> None:
        cx, cy = col // 2, row // 4
        if 0 <= col and 0 <= row and cx < self.width and cy < self.height:
            layer[cy][cx] |= DOTS[row % 4][col % 2]

    def cell(self, cx: int, cy: int) -> tuple[str, Style] | None:
        p, r = self.point[cy][cx], self.roof[cy][cx]
        if p:
            return chr(BRAILLE | p | r), POINT
        return (chr(BRAILLE | r), ROOF) if r else None


class RooflineView(Widget, can_focus=True):
    """The ops under their roofs; ←/→ (h/l) move the selection by intensity, ↑/↓ (k/j) by device time."""

    HELP_NAME = "Roofline"

    BINDINGS = [
        Binding("left,h", "step(-1)", "Lower intensity", id="roofline.prev", group=MOVE),
        Binding("right,l", "step(1)", "Higher intensity", id="roofline.next", group=MOVE),
        Binding("up,k", "rank(-1)", "More device time", id="roofline.up", group=MOVE),
        Binding("down,j", "rank(1)", "Less device time", id="roofline.down", group=MOVE),
        Binding("enter", "jump", "Show on timeline", id="roofline.jump"),
    ]

    class Jump(Message):
        """The user asked to see the calls of the selected op: its name (as RowsView.Jump) and one of its calls."""

        def __init__(self, name: str, event: int = -1) -> None:
            super().__init__()
            self.name, self.event = name, event

    def __init__(self, results: Results | Roofline, **kwargs) -> None:
        super().__init__(**kwargs)
        self.results = results
        self.table: Roofline | None = results if isinstance(results, Roofline) else None
        self.rows: list[RooflineRow] = []
        self.unit = FLOP_RATES[0]
        self.selected = 0
        self._lines: list[Strip] = []

    def on_mount(self) -> None:
        if self.table is not None:
            self._redraw()
        elif isinstance(self.results, Results) and (ready := self.results.peek(Results.roofline)) is not None:
            self.set_table(ready)
        else:
            self.run_worker(self._compute, thread=True, group="roofline", description="roofline", exit_on_error=False)

    def _compute(self) -> None:
        assert isinstance(self.results, Results)
        table = self.results.compute(Results.roofline)
        pace.call_from(self.app, self.set_table, table)

    def set_table(self, table: Roofline) -> None:
        """Show another roofline (another device's roofs, another trace)."""
        self.table, self.rows, self.selected = table, points(table), 0
        self.unit = rate_unit(table, self.rows)
        ranked = sorted(self.rows, key=lambda r: -r.device_us)
        self.selected = self.rows.index(ranked[0]) if ranked else 0
        self._redraw()

    @property
    def current(self) -> RooflineRow | None:
        return self.rows[self.selected] if self.rows else None

    def on_resize(self) -> None:
        self._redraw()

    # ---- keys ---------------------------------------------------------------------------------

    def action_step(self, step: int) -> None:
        if self.rows:
            self.selected = min(max(self.selected + step, 0), len(self.rows) - 1)
            self._redraw()

    def action_rank(self, step: int) -> None:
        if not self.rows:
            return
        ranked = sorted(range(len(self.rows)), key=lambda k: -self.rows[k].device_us)
        at = ranked.index(self.selected)
        self.selected = ranked[min(max(at + step, 0), len(ranked) - 1)]
        self._redraw()

    def action_jump(self) -> None:
        if self.current is not None:
            self.post_message(self.Jump(self.current.name, self.current.example))

    # ---- drawing ------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        return self._lines[y] if y < len(self._lines) else Strip.blank(width, BLANK)

    def _redraw(self) -> None:
        width, height = self.size.width, self.size.height
        if width <= 0 or height <= 0:
            return
        self._lines = [_text(line, width) for line in self._message()] if self._message() else self._plot(width, height)
        self.refresh()

    def _message(self) -> list[str]:
        if self.table is None:
            return ["Computing the roofline ..."]
        if not self.table.has_shapes:
            return ["No roofline: " + NO_SHAPES + "."]
        if not self.rows:
            return ["No op with a FLOPs model ran device work in this trace (see tracetui roofline for what is not)."]
        return []

    def _plot(self, width: int, height: int) -> list[Strip]:
        assert self.table is not None
        details = [w for line in self._details() for w in textwrap.wrap(line, width, subsequent_indent="  ")]
        plot_w, plot_h = max(width - LEFT - 1, 4), max(height - 3 - len(details), 2)
        ax = axes(self.table, self.rows, plot_w * 2, plot_h * 4)
        canvas = Canvas(plot_w, plot_h)
        self._draw_roofs(canvas, ax)
        spots = [ax.dot(r.intensity or 1.0, r.tflops or 1.0) for r in self.rows]
        for col, row in spots:
            for dc, dr in ((0, 0), (1, 0), (0, 1), (1, 1)):
                canvas.set(canvas.point, col + dc, row + dr)
        sel = spots[self.selected]
        labels = self._roof_labels(ax, plot_w, plot_h)
        lines = [_text(self._title(width), width)]
        lines += [
            self._plot_line(canvas, ax, cy, (sel[0] // 2, sel[1] // 4), width, labels.get(cy)) for cy in range(plot_h)
        ]
        lines += [_text(self._x_ticks(ax, plot_w), width), _text(" " * LEFT + "FLOP/byte (log) ->", width)]
        lines += [_text(line, width) for line in details]  # wrapped whole: the plot gives up the rows
        return lines

    def _draw_roofs(self, canvas: Canvas, ax: Axes) -> None:
        assert self.table is not None
        bw = self.table.device.peak_gbps if self.table.device else None
        for _, top in roofs(self.table, self.rows):
            for col in range(ax.dots_w):
                y = min(top, ax.x_at(col) * bw / 1000) if bw else top
                canvas.set(canvas.roof, *ax.dot(ax.x_at(col), max(y, 10**ax.y0)))

    def _roof_labels(self, ax: Axes, plot_w: int, plot_h: int) -> dict[int, tuple[int, str]]:
        """Each compute roof's name and peak, right-aligned on the row of cells just under its line."""
        assert self.table is not None
        out: dict[int, tuple[int, str]] = {}
        for name, top in roofs(self.table, self.rows):
            unit, dtype = name.split()
            assert self.table.device is not None
            text = f"{dtype} {roof_words(self.table.device, unit, dtype)} {top / self.unit.scale:,.4g} {self.unit.name}"
            cy = min(ax.dot(10**ax.x1, top)[1] // 4 + 1, plot_h - 1)
            if cy not in out and len(text) < plot_w:
                out[cy] = (plot_w - len(text), text)
        return out

    def _plot_line(
        self, canvas: Canvas, ax: Axes, cy: int, sel: tuple[int, int], width: int, label: tuple[int, str] | None
    ) -> Strip:
        tick = _y_label(ax, cy, canvas.height, self.unit)
        segments = [Segment(f"{tick:>{LEFT - 1}}┤" if tick else " " * (LEFT - 1) + "│", AXIS)]
        for cx in range(canvas.width):
            if (cx, cy) == sel:
                segments.append(Segment("◉", SELECTED))
                continue
            if label is not None and label[0] <= cx < label[0] + len(label[1]):
                segments.append(Segment(label[1][cx - label[0]], ROOF))
                continue
            found = canvas.cell(cx, cy)
            segments.append(Segment(*found) if found else Segment(" ", BLANK))
        return Strip(segments).adjust_cell_length(width, BLANK)

    def _title(self, width: int = 10**6) -> str:
        """The axis, the ops and the roofs, and the keys where they fit (the key bar has them too)."""
        assert self.table is not None
        d = self.table.device
        unknown = "no roofs (a CPU capture)" if self.table.on_cpu else "no roofs (GPU unknown)"
        roofs_of = f"roofs of {d.name} ({d.peak_gbps:,.0f} GB/s)" if d and d.peak_gbps else unknown
        said = f"{self.unit.name} (log) · {plural(len(self.rows), 'op')} · {roofs_of}"
        keys = " · ←→ intensity ↑↓ device time, Enter: timeline"
        return said + keys if len(said + keys) <= width else said

    def _x_ticks(self, ax: Axes, plot_w: int) -> str:
        chars = [" "] * plot_w
        for decade in range(int(ax.x0), int(ax.x1) + 1):
            col = round((decade - ax.x0) / (ax.x1 - ax.x0) * (plot_w - 1))
            tick = _decade(decade)
            col = min(col, plot_w - len(tick))
            for k, ch in enumerate(tick):
                if 0 <= col + k < plot_w:
                    chars[col + k] = ch
        return " " * LEFT + "".join(chars)

    def _details(self) -> list[str]:
        r = self.current
        if r is None:
            return []
        where = f"{r.bound}-bound, {r.pct_of_roof:.1f}% of roof" if r.pct_of_roof is not None else "no roof"
        return [
            f"{r.name} {r.input_shapes} {r.roof_dtype or r.dtype}",
            f"{where} · {plural(r.count, 'call')} · {fmt_time(r.device_us)} · "
            f"{rate_text(r.tflops, FLOP_RATES, self.unit)} · {rate_text(r.gbps, BYTE_RATES)} · "
            f"{r.intensity or 0:.3g} FLOP/byte",
        ]


def _y_label(ax: Axes, cy: int, height: int, unit: Unit) -> str:
    """The decade whose line falls in this row of cells, in unit ('' for rows between decades)."""
    shift = round(math.log10(unit.scale))  # the axes are in TFLOP/s: 1 TFLOP/s is 10**3 GFLOP/s
    for decade in range(int(ax.y0), int(ax.y1) + 1):
        row = round((1 - (decade - ax.y0) / (ax.y1 - ax.y0)) * (height - 1))
        if row == cy:
            return _decade(decade - shift)
    return ""


def _decade(d: int) -> str:
    value = 10.0**d
    return f"{value:g}" if -3 <= d <= 4 else f"1e{d}"


def _text(line: str, width: int) -> Strip:
    return Strip([Segment(line[:width], TEXT)]).adjust_cell_length(width, BLANK)
