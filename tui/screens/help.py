"""Help made from the live key bindings: the keys that work here, by where they work, in words; and the legend."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.actions import parse
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.strip import Strip
from textual.widgets import Static

from ..text.sanitize import crop_cells, ljust_cells
from ..widgets.lazy_table import LazyTable, TextColumns, frozen_room

LEGEND = (
    "A bar is an event, as long as it lasted; its colour stands for its name. Where events are too small to "
    "draw one by one, ░ ▒ ▓ shade the cell by how busy it is (a little, half, mostly). The lanes are the CPU "
    "threads (ops, Python frames, runtime calls) and the GPU streams (kernels, copies); a gap on a GPU lane is "
    "time the GPU did nothing. White is the selection, gold a search match."
)
LEGEND_FOR = "Timeline"  # the view whose help section the legend goes with (its HELP_NAME)
KEY_WORDS = {
    "left": "←",
    "right": "→",
    "up": "↑",
    "down": "↓",
    "enter": "Enter",
    "escape": "Esc",
    "question_mark": "?",
    "backspace": "Backspace",
    "pageup": "PgUp",
    "pagedown": "PgDn",
    "home": "Home",
    "end": "End",
    "slash": "/",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "ctrl+p": "Ctrl+P",
    "ctrl+c": "Ctrl+C",
    "tab": "Tab",
    "shift+tab": "Shift+Tab",
}

Row = tuple[str, str, str]  # keys, what they do, the binding's id (for keymap.toml)
LEAST_WORDS = 24  # the narrowest the last column wraps to; narrower, the rows scroll sideways
KEYS_LEAST = 8  # the keys' column is as wide as its longest keys ("  Ctrl+P"), and never narrower than this


def keys_in_words(keys: str) -> str:
    return " ".join(KEY_WORDS.get(k.strip(), k.strip()) for k in keys.split(","))


def _works(node, binding: Binding) -> bool:
    """Whether the binding does something here (its node's check_action says so)."""
    _, action, params = parse(binding.action)
    try:
        return node.check_action(action, params) is not False
    except Exception:  # noqa: BLE001 - a check that fails says nothing about the key
        return True


def _own(node) -> list[Binding]:
    """The node's bindings and its bases' (Textual's own classes are not ours)."""
    ours = [cls for cls in type(node).__mro__ if cls.__module__.startswith("tui.")]
    return [b for cls in ours for b in cls.__dict__.get("BINDINGS", []) if isinstance(b, Binding)]


def _keys(b: Binding, overrides: dict[str, str]) -> str:
    """The binding's keys, as a keymap file remaps them."""
    return overrides.get(b.id or "", b.key)


def _rows(node, overrides: dict[str, str], seen: set[str], outer: frozenset[str] = frozenset()) -> list[Row]:
    """outer: the keys a node further out binds; a key the node hands up (DEFERS: a table's Enter posts the row
    for its view to act on) is told in the words of that node's binding."""
    rows: list[Row] = []
    defers = set(getattr(type(node), "DEFERS", ())) & outer
    for b in _own(node):
        if b.system or not _works(node, b):
            continue
        keys = _keys(b, overrides)
        if defers and set(keys.split(",")) <= defers:
            continue
        fresh = [k for k in keys.split(",") if k not in seen]  # a key nearer the focus wins
        if not fresh:
            continue
        seen.update(fresh)
        rows.append(
            (
                b.key_display if b.key_display and keys == b.key else keys_in_words(",".join(fresh)),
                b.tooltip or b.description or b.action,
                b.id or "",
            )
        )
    return rows


def help_sections(screen, overrides: dict[str, str]) -> list[tuple[str, list[Row]]]:
    """(where, rows) from the focused widget out to the app: only keys that work here, each key once."""
    chain = list(screen.focused.ancestors_with_self) if screen.focused else [screen, screen.app]
    sections: dict[str, list[Row]] = {}
    seen: set[str] = set()
    outer: list[frozenset[str]] = []  # per node: the keys that work on the nodes further out
    further: set[str] = set()
    for node in reversed(chain):
        outer.insert(0, frozenset(further))
        further |= {k for b in _own(node) if not b.system and _works(node, b) for k in _keys(b, overrides).split(",")}
    for k, node in enumerate(chain):
        where = getattr(type(node), "HELP_NAME", None)
        if where is None:
            continue
        rows = _rows(node, overrides, seen, outer[k])
        if rows:
            sections.setdefault(where, []).extend(rows)
    return list(sections.items())


def is_heading(row: Sequence[str]) -> bool:
    """A section's row: where the keys work, in the first column, and nothing after it."""
    return bool(row[0]) and not any(row[1:])


def lead_widths(heads: list[str], rows: list[list[str]], width: int) -> list[int]:
    """The widths of the columns before what the keys do: each its longest cell's, the sections' names left out
    (they run across their rows: "Moving in a table" made the keys' column 18 wide for keys of 8); the keys' column
    KEYS_LEAST at least and no more than the table keeps of a first column."""
    keyed = [r for r in rows if not is_heading(r)]
    lead = [max([cell_len(h), *(cell_len(r[c]) for r in keyed)]) for c, h in enumerate(heads[:-1])]
    if lead:
        lead[0] = min(max(lead[0], KEYS_LEAST), frozen_room(width))
    return lead


def wrapped(heads: list[str], rows: list[list[str]], width: int, sep: int = 2) -> list[list[str]]:
    """The rows with their last column (what the keys do) wrapped to what the columns before it leave of width,
    each further line a row of its own under the first, the other columns blank: words, never cut mid-word."""
    if not heads:
        return rows
    lead = lead_widths(heads, rows, width)
    room = max(width - sum(lead) - sep * len(lead), LEAST_WORDS)
    out: list[list[str]] = []
    for row in rows:
        lines = textwrap.wrap(row[-1], room, break_on_hyphens=False) or [row[-1]]
        out.append([*row[:-1], lines[0]])
        out.extend([*([""] * (len(row) - 1)), line] for line in lines[1:])
    return out


class HelpTable(LazyTable):
    """The help's rows: PageDown and PageUp turn the page (the rows and the cursor a page on), as in a pager; the
    table's own moved only the cursor to the page's last row, so the first press scrolled nothing. What the keys do
    wraps to the table's width (it was cut: "fit the widt"), again when the terminal's size changes."""

    def __init__(self, heads: list[str], rows: list[list[str]], **kwargs) -> None:
        self.heads, self.rows = heads, rows
        super().__init__(TextColumns(heads, rows, right_from=len(heads)), **kwargs)

    def show(self, heads: list[str], rows: list[list[str]]) -> None:
        """Other rows (the ids shown or hidden), wrapped to the width the table has."""
        self.heads, self.rows = heads, rows
        self._fit()

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _fit(self) -> None:
        width = self.size.width - self.styles.scrollbar_size_vertical  # the bar's room kept, shown or not
        if width > 0:
            rows = wrapped(self.heads, self.rows, width)
            words = max([cell_len(self.heads[-1]), *(cell_len(r[-1]) for r in rows)])
            widths = [*lead_widths(self.heads, self.rows, width), words]
            self.set_source(TextColumns(self.heads, rows, right_from=len(self.heads), widths=widths))

    def _line(self, cells: list[str], base: Style, width: int) -> Strip:
        """A section's name runs across its row (the keys' column is only as wide as the keys)."""
        if cells and is_heading(cells) and cell_len(cells[0]) > self._frozen_width(width):
            text = ljust_cells(crop_cells(cells[0], width), width)
            return Strip([Segment(text, base + self._style("lazy-table--frozen"))])
        return super()._line(cells, base, width)

    def action_page(self, step: int) -> None:
        page = max(self.scrollable_content_region.height - 2, 1)
        self.scroll_to(y=self.scroll_offset.y + step * page, animate=False)
        self.move_cursor(self.cursor_row + step * page)


class HelpScreen(ModalScreen):
    """The keys by where they work, in words; i shows the ids a keymap file remaps them by."""

    HELP_NAME = "Help"
    BINDINGS = [
        Binding("escape,q,question_mark", "dismiss", "Close help", id="help.close"),
        Binding("i", "ids", "Show or hide the binding ids (for keymap.toml)", id="help.ids"),
    ]

    def __init__(self, sections: list[tuple[str, list[Row]]]) -> None:
        super().__init__()
        self.sections, self.with_ids = sections, False

    def _source(self) -> tuple[list[str], list[list[str]]]:
        """Keys and what they do; with ids, the id between them (so a long description never hides it)."""
        rows: list[list[str]] = []
        for where, keys in self.sections:
            rows.append([where, "", ""] if self.with_ids else [where, ""])
            for k, what, ident in keys:
                rows.append([f"  {k}", ident, what] if self.with_ids else [f"  {k}", what])
        heads = ["Keys", "Id", "What they do"] if self.with_ids else ["Keys", "What they do"]
        return heads, rows

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static("Keys that work here (Esc closes; i shows the ids for keymap.toml)", id="help-title")
            legend = self.legend()
            if legend:
                yield Static(legend, id="help-legend")
            yield HelpTable(*self._source())

    def legend(self) -> str | None:
        """What the drawing means: the timeline's, where its keys are shown (none over a table)."""
        return LEGEND if any(where == LEGEND_FOR for where, _ in self.sections) else None

    def on_mount(self) -> None:
        self.set_focus(self.query_one(LazyTable))

    def action_ids(self) -> None:
        self.with_ids = not self.with_ids
        self.query_one(HelpTable).show(*self._source())
