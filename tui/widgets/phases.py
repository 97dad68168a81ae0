"""One progress bar per phase of loading and analysing, each named (decode, nest, link, aggregate)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, ProgressBar

from ..messages import PHASES

WHAT = {
    "decode": "decode the JSON into columns",
    "nest": "nest events into stacks",
    "link": "link launches to GPU work",
    "aggregate": "tables, summary and notes",
}


class PhaseBars(Vertical):
    """A labelled bar per phase; progress(phase, fraction) moves one (attributes down)."""

    def __init__(self, phases: tuple[str, ...] = PHASES, **kwargs) -> None:
        super().__init__(**kwargs)
        self.phases = phases

    def compose(self) -> ComposeResult:
        for phase in self.phases:
            with Horizontal(classes="phase"):
                yield Label(f"{phase:<10}", classes="phase-name")
                yield ProgressBar(total=100, show_eta=False, id=f"phase-{phase}")
                yield Label(WHAT[phase], classes="phase-what")

    def progress(self, phase: str, fraction: float) -> None:
        if phase in self.phases:
            self.query_one(f"#phase-{phase}", ProgressBar).update(progress=round(100 * fraction, 1))

    @property
    def done(self) -> bool:
        return all(self.query_one(f"#phase-{p}", ProgressBar).percentage == 1 for p in self.phases)
