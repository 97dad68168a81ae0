"""Shown while the worker loads the trace: a named progress bar per phase, and q still quits."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.screen import Screen
from textual.widgets import Label

from ..widgets.phases import PhaseBars


class LoadingScreen(Screen):
    def __init__(self, label: str) -> None:
        super().__init__()
        self.label = label

    def compose(self) -> ComposeResult:
        with Middle(), Center():
            yield Label(f"Loading {self.label} …", id="loading-label")
            yield PhaseBars(id="loading-phases")

    def progress(self, phase: str, fraction: float) -> None:
        self.query_one(PhaseBars).progress(phase, fraction)
