"""The details panel over the timeline, for a terminal too short to give it room below the lanes.

The main screen pushes it on Enter when the panel beside the timeline would leave fewer than six lane
rows; it shows the same details, from its top, over the lower part of the screen. Esc or Enter closes it.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen

from ..widgets.details import DetailsPanel


class DetailsOverlay(ModalScreen):
    HELP_NAME = "Details"
    DEFAULT_CSS = """
    DetailsOverlay { align: center bottom; background: $background 30%; }
    DetailsOverlay > DetailsPanel { height: 70%; max-height: 70%; width: 100%; border-top: solid $accent; }
    """
    BINDINGS = [Binding("escape,enter", "dismiss", "Close the details", id="details_overlay.close")]

    def __init__(self, shown: tuple) -> None:
        super().__init__()
        self.shown = shown  # what DetailsPanel.show takes: details, notes, memory, roofline

    def compose(self) -> ComposeResult:
        yield DetailsPanel(id="details-overlay")

    def on_mount(self) -> None:
        panel = self.query_one(DetailsPanel)
        panel.show(*self.shown)
        panel.scroll_home(animate=False)
        self.set_focus(panel)
