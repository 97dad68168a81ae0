"""The Textual app: it loads in a worker, then hands the analysis to the main screen."""

from __future__ import annotations

import time
from pathlib import Path

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.command import Hit, Hits, Provider
from textual.worker import get_current_worker

from .messages import CompareLoaded, LoadFailed, LoadProgress, TraceLoaded
from .screens.loading import LoadingScreen
from .screens.main import FRAME_LEVELS_SHOWN, VIEWS, MainScreen

PROGRESS_EVERY_S = 0.1


class LoadCancelled(Exception):
    """Raised from the progress callback to abandon a load the user no longer wants."""


class ViewCommands(Provider):
    """The command palette lists the views and the main actions."""

    def _commands(self):
        app = self.app
        for k, name in enumerate(VIEWS, 1):
            yield f"Show {name} ({k})", lambda n=name: app.action_view(n), f"switch to the {name} view"
        yield "Help: keys (?)", app.action_help, "every key binding, generated from the bindings"
        main = next((s for s in reversed(app.screen_stack) if isinstance(s, MainScreen)), None)  # under the palette
        for rank in main.ranks if main is not None else []:
            yield f"Go to rank {rank}", lambda r=rank: main.go_to_rank(r), "its lanes at the top of the timeline"
            yield (
                f"Compare rank {rank}",
                lambda r=rank: main.action_compare_ranks(r),
                "side by side with a typical rank (C: the straggler)",
            )
        yield "Quit (q)", app.exit, "leave tracetui"

    async def discover(self) -> Hits:
        for title, call, text in self._commands():
            yield Hit(1.0, title, call, help=text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, call, text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), call, help=text)


class TraceApp(App):
    """Orchestrates: start the load, show progress, switch to the main screen, route view keys."""

    CSS_PATH = "app.tcss"
    TITLE = "tracetui"
    COMMANDS = App.COMMANDS | {ViewCommands}
    BINDINGS = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("question_mark", "help", "Help", key_display="?", id="app.help"),
        *(
            Binding(str(k), f"view('{name}')", f"{name.title()} view", show=False, id=f"app.view_{name}")
            for k, name in enumerate(VIEWS, 1)
        ),
    ]

    def __init__(self, paths: list[str], use_cache: bool = True, compare: bool = False) -> None:
        super().__init__()
        from .model.load.parts import prepare_workers

        prepare_workers(paths)  # before Textual captures stderr
        self.paths, self.use_cache, self.compare = paths, use_cache, compare
        self.load_error: Exception | None = None

    def on_mount(self) -> None:
        self.push_screen(LoadingScreen(" vs ".join(Path(p).name for p in self.paths)))
        if self.compare:
            self.load_pair(self.paths[0], self.paths[1])
        else:
            self.load(self.paths[0])

    def _reporter(self, phase: str, offset: float = 0.0, scale: float = 1.0):
        """A progress callback for one phase: rate-limited messages, and a stop when cancelled."""
        worker, last = get_current_worker(), [0.0]

        def progress(fraction: float) -> None:
            if worker.is_cancelled:  # the user quit while loading: stop at the next chunk
                raise LoadCancelled
            now = time.perf_counter()
            if now - last[0] >= PROGRESS_EVERY_S or fraction >= 1:
                last[0] = now
                self.post_message(LoadProgress(phase, offset + scale * fraction))

        return progress

    def _run_load(self, job) -> None:
        """Run job() in the worker; post what it returns, or LoadFailed."""
        try:
            message = job()
        except LoadCancelled:
            return
        except Exception as exc:  # noqa: BLE001 - reported by the CLI as one line
            message = LoadFailed(exc)
        self.post_message(message)

    @work(thread=True, exclusive=True, group="load", description="Loading trace")
    def load(self, path: str) -> None:
        from .model.analyses.results import Results
        from .model.load import load_trace
        from .model.view.lanes import LaneIndex

        def job() -> TraceLoaded:
            start = time.perf_counter()
            analysis = Results(load_trace(path, use_cache=self.use_cache, progress=self._reporter("decode")))
            nested = self._reporter("nest")
            nested(0.0)
            hide = analysis.frame_levels > FRAME_LEVELS_SHOWN  # deep Python stacks would bury the ops
            lanes = LaneIndex(analysis.frameless if hide else analysis)  # nests the events: all the first paint needs
            nested(1.0)
            return TraceLoaded(analysis, lanes, time.perf_counter() - start, hide)

        self._run_load(job)

    @work(thread=True, exclusive=True, group="load", description="Loading two traces")
    def load_pair(self, a: str, b: str) -> None:
        from .model.analyses.diff import diff
        from .model.analyses.results import Results
        from .model.load import load_trace

        def job() -> CompareLoaded:
            first = Results(load_trace(a, use_cache=self.use_cache, progress=self._reporter("decode", 0.0, 0.5)))
            second = Results(load_trace(b, use_cache=self.use_cache, progress=self._reporter("decode", 0.5, 0.5)))
            return CompareLoaded(diff(first, second), (a, b))

        self._run_load(job)

    def on_compare_loaded(self, message: CompareLoaded) -> None:
        from .screens.compare import CompareScreen  # imported when needed: the first paint waits for no more

        self.switch_screen(CompareScreen(message.diff, message.labels))

    def on_load_progress(self, message: LoadProgress) -> None:
        if isinstance(self.screen, (LoadingScreen, MainScreen)):
            self.screen.progress(message.phase, message.fraction)

    def on_trace_loaded(self, message: TraceLoaded) -> None:
        warning = message.analysis.trace.report.warning()
        self.switch_screen(MainScreen(message.analysis, message.lanes, self.paths[0], message.hide_python))
        self.sub_title = f"{self.paths[0]} · loaded in {message.seconds:.2f}s"
        if warning:
            self.notify(warning, title="salvaged", severity="warning", timeout=8)

    def on_load_failed(self, message: LoadFailed) -> None:
        self.load_error = message.error
        self.exit(return_code=2)

    def action_view(self, name: str) -> None:
        if isinstance(self.screen, MainScreen):
            self.screen.show_view(name)
        elif hasattr(self.screen, "action_tab") and name in ("timeline", "tree", "ops", "kernels"):
            self.screen.action_tab({"timeline": "summary", "tree": "steps"}.get(name, name))

    def action_help(self) -> None:
        from .screens.help import HelpScreen, binding_rows

        if isinstance(self.screen, HelpScreen):
            return
        chain = list(reversed(self.screen.focused.ancestors_with_self)) if self.screen.focused else []
        nodes = [n for n in reversed(chain) if getattr(n, "BINDINGS", None)]
        self.push_screen(HelpScreen(binding_rows(nodes + [self.screen, self])))
