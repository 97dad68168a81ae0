"""Shown while the worker loads the trace: the lanes decoded so far (lanes first), a named progress bar per phase,
and q still quits."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Center, Middle, Vertical
from textual.screen import Screen
from textual.widgets import Label

from ..widgets.phases import PhaseBars

if TYPE_CHECKING:
    from textual.app import App

PREVIEW_FIRST_S = 0.3  # the lanes of the events decoded so far: the first after this long,
PREVIEW_EVERY_S = 1.5  # then at most this often,
PREVIEW_PACE = 2.0  # and each waiting twice what the last cost (the decode waits while one is made)


class LoadingScreen(Screen):
    DEFAULT_CSS = """
    LoadingScreen #loading-preview { height: 1fr; display: none; }
    LoadingScreen #loading-preview.painted { display: block; }
    LoadingScreen Middle { height: auto; }
    """

    def __init__(self, label: str) -> None:
        super().__init__()
        self.label = label

    def compose(self) -> ComposeResult:
        yield Vertical(id="loading-preview")
        with Middle(), Center():
            yield Label(f"Loading {self.label} …", id="loading-label")
            yield PhaseBars(id="loading-phases")

    def progress(self, phase: str, fraction: float) -> None:
        self.query_one(PhaseBars).progress(phase, fraction)

    async def preview(self, analysis, lanes, fraction: float) -> None:
        """Paint the lanes of the events decoded so far: the first time a timeline, then that one fed the newer lanes."""
        from ..widgets.timeline import Timeline

        holder = self.query_one("#loading-preview", Vertical)
        shown = holder.query(Timeline)
        if shown:
            shown.first().set_structure(analysis, lanes)
            shown.first().action_reset()  # the whole time decoded so far
        else:
            await holder.mount(Timeline(analysis, lanes, id="loading-lanes"))
        holder.add_class("painted")
        self.query_one("#loading-label", Label).update(
            f"Loading {self.label} … the lanes of the {fraction:.0%} decoded so far"
        )


@contextmanager
def lanes_first(app: App) -> Iterator[None]:
    """Around a load in a worker thread: paint the lanes of the events decoded so far on the loading screen."""
    from ..model.analyses.results import Results
    from ..model.load.stream import partial_traces
    from ..model.view.lanes import LaneIndex

    failed: list[Exception] = []

    def show(trace, fraction: float) -> None:
        if failed:
            return
        try:
            analysis = Results(trace).frameless  # the ops and their GPU work: frames come with the whole trace
            lanes = LaneIndex(analysis)  # nested here, in the loading thread
            app.call_from_thread(_paint, app, analysis, lanes, fraction)  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - a preview never fails the load: it is logged, and no more are made
            failed.append(exc)
            app.log.warning(f"lanes first: no more previews ({exc!r})")

    with partial_traces(show, every_s=PREVIEW_EVERY_S, first_s=PREVIEW_FIRST_S, pace=PREVIEW_PACE):
        yield


async def _paint(app: App, analysis, lanes, fraction: float) -> None:
    if isinstance(app.screen, LoadingScreen):
        await app.screen.preview(analysis, lanes, fraction)
