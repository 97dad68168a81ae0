"""Help generated from the live key bindings of the screen and the focused widget."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static


def binding_rows(chain: list) -> list[tuple[str, str, str, str]]:
    """(where, keys, description, id) for each binding of the given nodes, first node first."""
    rows, seen = [], set()
    for node in chain:
        for b in getattr(node, "BINDINGS", []):
            if not isinstance(b, Binding) or b.system:
                continue
            key = (b.key, b.action)
            if key in seen:
                continue
            seen.add(key)
            rows.append(
                (type(node).__name__, b.key_display or b.key.replace(",", " "), b.description or b.action, b.id or "")
            )
    return rows


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close help", id="help.close")]

    def __init__(self, rows: list[tuple[str, str, str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static("Keys (generated from the bindings; Esc closes)", id="help-title")
            table: DataTable = DataTable(cursor_type="row", zebra_stripes=True)
            table.add_columns("Where", "Keys", "Does", "Id")
            for row in self.rows:
                table.add_row(*(Text(c) for c in row))
            yield table
