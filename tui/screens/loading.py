"""Shown while the worker loads the trace: a progress bar, and q still quits."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.screen import Screen
from textual.widgets import Label, ProgressBar


class LoadingScreen(Screen):
    def __init__(self, label: str) -> None:
        super().__init__()
        self.label = label

    def compose(self) -> ComposeResult:
        with Middle(), Center():
            yield Label(f"Loading {self.label} …", id="loading-label")
            yield ProgressBar(total=100, show_eta=False, id="loading-bar")

    def progress(self, fraction: float) -> None:
        self.query_one(ProgressBar).update(progress=round(100 * fraction, 1))
