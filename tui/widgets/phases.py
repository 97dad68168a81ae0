"""One progress bar per phase of loading and analysing, each named (decode, nest, link, aggregate)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, ProgressBar

from ..appkit.messages import PHASES
from ..model.load.progress import COMPILING

WHAT = {
    "decode": "decode the JSON into columns",
    "nest": "nest events into stacks",
    "link": "link launches to GPU work",
    "aggregate": "tables, summary and notes",
}

WAITING = "waiting for another tracetui to finish caching this trace"
SAID = {COMPILING: "compiling the native decoder (numba, once: 20 s to a few minutes)"}  # other waits than WAITING


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
                yield Label(WHAT[phase], classes="phase-what", id=f"what-{phase}")

    def progress(self, phase: str, fraction: float) -> None:
        """A phase's bar moved to fraction; a negative one is a wait, shown as a bar with no end and the wait said
        beside it: the loader's WAITING (another tracetui writes this trace's cache) or COMPILING (SAID)."""
        if phase not in self.phases:
            return
        bar = self.query_one(f"#phase-{phase}", ProgressBar)
        what = self.query_one(f"#what-{phase}", Label)
        if fraction < 0:
            bar.update(total=None)
            what.update(SAID.get(fraction, WAITING))
        elif bar.total is None:
            bar.update(total=100, progress=round(100 * fraction, 1))
            what.update(WHAT[phase])
        else:
            bar.update(progress=round(100 * fraction, 1))

    @property
    def done(self) -> bool:
        return all(self.query_one(f"#phase-{p}", ProgressBar).percentage == 1 for p in self.phases)
