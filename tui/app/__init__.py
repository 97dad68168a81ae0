"""The Textual app: it loads in a worker, then hands the analysis to the main screen."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.widgets import Input
from textual.worker import get_current_worker

from ..appkit import pace
from ..appkit.messages import CompareLoaded, LoadFailed, LoadProgress, TraceLoaded
from ..appkit.palette import ListedCommands
from ..screens.loading import LoadingScreen, lanes_first
from ..screens.main import FRAME_LEVELS_SHOWN, MainScreen
from ..text.sanitize import visible
from ..widgets.failures import ReportsFailedWorkers
from ..widgets.plain import PlainNotifications
from ..widgets.visible import VisibleText
from .keymap import legend_seen, mark_legend_seen

if TYPE_CHECKING:
    from ..model.loading import Notice

PROGRESS_EVERY_S = 0.1


class LoadCancelled(Exception):
    """Raised from the progress callback to abandon a load the user no longer wants."""


def captures_beside(path: str) -> list[Path]:
    """The captures in the folder of a trace file, newest first ([] when its folder is not a set of captures)."""
    from ..model.load.folder import list_captures

    parent = Path(path).parent
    return list_captures(parent) if Path(path).is_file() else []


def _is_snapshot(path: str) -> bool:
    from ..model.snapshot.read import is_snapshot

    return is_snapshot(path)


class ViewCommands(ListedCommands):
    """The command palette: the current screen's views (from the registry) and the ranks of a job."""

    def _commands(self):
        from ..views.registry import COMPARE, MAIN

        app = cast("TraceApp", self.app)  # the palette of this app only: its paths, captures and open_capture
        screen = next((s for s in reversed(app.screen_stack) if hasattr(s, "action_view")), None)  # under the palette
        if screen is None:
            return
        specs = MAIN if isinstance(screen, MainScreen) else COMPARE
        for spec in specs:
            yield (
                f"Show the {spec.title.lower()} view ({spec.key})",
                lambda n=spec.name: screen.action_view(n),
                spec.about,
            )
        shown = Path(app.paths[0]).resolve()
        for capture in app.captures if isinstance(screen, MainScreen) else []:
            if capture.resolve() != shown:
                yield (
                    f"Open capture {capture.name}",
                    lambda c=capture: app.open_capture(c),
                    "another capture in this folder",
                )
        for rank in screen.ranks if isinstance(screen, MainScreen) else []:
            yield f"Go to rank {rank}", lambda r=rank: screen.go_to_rank(r), "its lanes at the top of the timeline"
            yield (
                f"Compare rank {rank}",
                lambda r=rank: screen.action_compare_ranks(r),
                "side by side with a typical rank (C: the straggler)",
            )


class TraceApp(VisibleText, PlainNotifications, ReportsFailedWorkers, App):
    """Orchestrates: start the load, show progress, switch to the main screen, route view keys."""

    CSS_PATH = "app.tcss"
    TITLE = "tracetui"
    COMMANDS = App.COMMANDS | {ViewCommands}
    HELP_NAME = "Everywhere"
    BINDINGS = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding(  # how people leave a terminal program (over SSH above all); Textual's ctrl+c only said "press q"
            "ctrl+c",
            "quit_unless_typing",
            "Quit",
            show=False,
            priority=True,  # over a modal screen too (the help), whose bindings end the chain; check_action yields
            tooltip="Quit, as q does (in a text box Ctrl+C copies the selected text)",
            id="app.quit_ctrl_c",
        ),
        Binding(  # in a text box with nothing selected: what to do
            "ctrl+c", "help_quit", "How to quit from a text box", show=False, system=True, id="app.ctrl_c_in_text"
        ),
        Binding("question_mark", "help", "Help: keys and legend", key_display="?", id="app.help"),
        Binding(
            "ctrl+p",
            "command_palette",
            "Command palette: views, other captures, ranks, the theme, a screenshot",
            show=False,
            id="app.palette",
        ),
    ]

    def __init__(
        self,
        paths: list[str],
        use_cache: bool = True,
        compare: bool = False,
        initial_view: str = "timeline",
        graph_capture: str | None = None,
        watch: str | Path | None = None,
        interval: float = 2.0,
        screenshot_dir: str | None = None,
    ) -> None:
        super().__init__()
        from ..model.load.parts import prepare_workers

        prepare_workers([*paths, *([str(watch)] if watch else [])])  # before Textual captures stderr
        self.paths, self.use_cache, self.compare = paths, use_cache, compare
        self.watch_folder = Path(watch) if watch else None  # watch: the strip is the home
        self.interval = interval
        self.screenshot_dir = screenshot_dir  # where the palette's Screenshot saves (None: the working directory)
        self.initial_view, self.graph_capture = initial_view, graph_capture
        self.notices: list[Notice] = []  # what the load has to say (salvaged, a graph capture refused, ...)
        self.captures: list[Path] = []  # the other captures of the folder the trace is in (the palette opens them)
        self.load_error: Exception | None = None
        self.keymap_problem: str | None = None
        self.keymap_overrides: dict[str, str] = {}

    def on_unmount(self) -> None:
        from ..process.gcpolicy import release

        release()

    def on_mount(self) -> None:
        from .bindings import known_ids
        from .keymap import load_keymap

        self.keymap_overrides, self.keymap_problem = load_keymap(known_ids(type(self)))
        if self.keymap_overrides:
            self.set_keymap(self.keymap_overrides)
        if self.watch_folder is not None:
            from ..screens.watch import WatchScreen

            self.push_screen(WatchScreen(self.watch_folder, self.use_cache, self.interval))
            return
        if not self.compare and _is_snapshot(self.paths[0]):  # an allocator snapshot: its own screen loads it
            from ..screens.snapshot import SnapshotScreen

            self.push_screen(SnapshotScreen(self.paths[0], self.use_cache))
            return
        self.push_screen(LoadingScreen(" vs ".join(Path(p).name for p in self.paths)))
        if self.compare:
            self.load_pair(self.paths[0], self.paths[1])
        else:
            self.load(self.paths[0])

    def get_system_commands(self, screen):
        """Textual's commands less the ones ours replace (its key panel: our help has the legend and the words)."""
        for command in super().get_system_commands(screen):
            if command.title not in ("Keys", "Quit", "Screenshot"):
                yield command
        where = self.screenshot_dir or "the working directory"
        yield SystemCommand("Screenshot", f"save an SVG of the screen in {where}", self.save_screenshot_here)
        yield SystemCommand(
            "Keys and legend", "every key that works here, in words, and what the colours mean", self.action_help
        )
        yield SystemCommand("Quit", "leave tracetui", self.exit)

    def save_screenshot_here(self) -> Path | None:
        """Save an SVG of the screen in the screenshot folder; the notice names the file, or why it could not."""
        folder = Path(self.screenshot_dir or os.getcwd()).expanduser()
        name = f"tracetui-{time.strftime('%Y%m%d-%H%M%S')}.svg"
        try:
            saved = Path(self.save_screenshot(filename=name, path=str(folder)))
        except OSError as exc:
            reason = exc.strerror or str(exc)
            self.notify(f"could not save the screenshot in {folder}: {reason}", title="Screenshot", severity="error")
            return None
        self.notify(f"saved {saved}", title="Screenshot", timeout=6)
        return saved

    def _reporter(self, phase: str, offset: float = 0.0, scale: float = 1.0):
        """A progress callback for one phase: rate-limited messages, and a stop when cancelled."""
        worker, last = get_current_worker(), [0.0]

        def progress(fraction: float) -> None:
            if worker.is_cancelled:  # the user quit while loading: stop at the next chunk
                raise LoadCancelled
            now = time.perf_counter()
            if now - last[0] >= PROGRESS_EVERY_S or fraction >= 1:
                last[0] = now
                self.post_message(LoadProgress(phase, fraction if fraction < 0 else offset + scale * fraction))

        return progress

    def _run_load(self, job) -> None:
        """Run job() in the worker; post what it returns, or LoadFailed."""
        try:
            message = job()
        except LoadCancelled:
            return
        except Exception as exc:  # noqa: BLE001 - reported by the CLI as one line
            message = LoadFailed(exc)
        pace.post(self, message)

    @work(thread=True, exclusive=True, group="load", description="Loading trace", exit_on_error=False)
    def load(self, path: str) -> None:
        from ..model.errors import SAID
        from ..model.loading import Notice, open_trace
        from ..model.view.lanes import LaneIndex

        def job() -> TraceLoaded:
            start = time.perf_counter()
            progress = self._reporter("decode")
            said = len(SAID)
            with lanes_first(self):  # the loading screen paints the lanes decoded so far
                opened = open_trace(path, cache=self.use_cache, graph_capture=self.graph_capture, progress=progress)
            self.notices = opened.notices + [Notice("note", text) for text in SAID[said:]]  # (stderr is not seen)
            self.captures = captures_beside(opened.capture or path)
            analysis = opened.results
            nested = self._reporter("nest")
            nested(0.0)
            hide = analysis.frame_levels > FRAME_LEVELS_SHOWN  # deep Python stacks would bury the ops
            lanes = LaneIndex(analysis.frameless if hide else analysis)  # nests the events: all the first paint needs
            nested(1.0)
            return TraceLoaded(analysis, lanes, time.perf_counter() - start, hide)

        self._run_load(job)

    @work(thread=True, exclusive=True, group="load", description="Loading two traces", exit_on_error=False)
    def load_pair(self, a: str, b: str) -> None:
        from ..model.analyses.diff import diff
        from ..model.loading import open_trace

        def job() -> CompareLoaded:
            first = open_trace(a, cache=self.use_cache, progress=self._reporter("decode", 0.0, 0.5)).results
            second = open_trace(b, cache=self.use_cache, progress=self._reporter("decode", 0.5, 0.5)).results
            return CompareLoaded(diff(first, second), (a, b))

        self._run_load(job)

    def on_compare_loaded(self, message: CompareLoaded) -> None:
        from ..screens.compare import CompareScreen  # imported when needed: the first paint waits for no more

        self.switch_screen(CompareScreen(message.diff, message.labels))

    def on_load_progress(self, message: LoadProgress) -> None:
        if isinstance(self.screen, (LoadingScreen, MainScreen)):
            self.screen.progress(message.phase, message.fraction)

    def on_trace_loaded(self, message: TraceLoaded) -> None:
        legend = None
        if not legend_seen():  # the legend, once: in the details panel under the lanes (a toast covered them at 80x24)
            from ..screens.help import LEGEND

            legend = LEGEND
        notes: list[tuple[str, str]] = [
            (notice.level, notice.text) for notice in self.notices
        ]  # salvaged, a graph capture refused, a job
        main = MainScreen(
            message.analysis, message.lanes, self.paths[0], message.hide_python, self.initial_view, legend, notes
        )
        self.switch_screen(main)
        self.sub_title = visible(f"{self.paths[0]} · loaded in {message.seconds:.2f}s")  # a file name: data
        if self.keymap_problem:
            self.notify(self.keymap_problem, title="keymap", severity="warning", timeout=8)

    def on_details_panel_legend_shown(self) -> None:
        """The legend is on screen: marked seen now, not when the trace loaded (it may open on a view without it)."""
        mark_legend_seen()

    def on_load_failed(self, message: LoadFailed) -> None:
        if self.home() is not None:  # a capture opened from the watch strip: say why, and go on watching
            self.notify(f"could not open it: {message.error}", severity="error", timeout=10)
            self.back_home()
            return
        self.load_error = message.error
        self.exit(return_code=2)

    def open_capture(self, path: Path) -> None:
        """Show another capture of the same folder (from the palette), or one from the watch strip (over it)."""
        self.paths = [str(path)]
        loading = LoadingScreen(path.name)
        if self.home() is self.screen:
            self.push_screen(loading)
        else:
            self.switch_screen(loading)
        self.load(str(path))

    def home(self):
        """The watch strip under the viewer, when tracetui was started by `watch` (else None)."""
        from ..screens.watch import WatchScreen

        return next((s for s in self.screen_stack if isinstance(s, WatchScreen)), None)

    def back_home(self) -> None:
        """Close the viewer (and whatever is over it) and show the watch strip again; a load under way stops."""
        home = self.home()
        self.workers.cancel_group(self, "load")
        while self.screen is not home and len(self.screen_stack) > 1:
            self.pop_screen()

    async def action_quit(self) -> None:
        """q: from a capture opened from the watch strip, back to the strip; anywhere else, leave tracetui."""
        home = self.home()
        if home is not None and self.screen is not home:
            self.back_home()
        else:
            self.exit()

    async def action_quit_unless_typing(self) -> None:
        """Ctrl+C: what q does, on every screen. A text box with the focus keeps Ctrl+C, and so does text selected
        with the mouse (check_action): Textual copies the selection; in a text box with nothing selected the key
        falls to help_quit, which says how to leave."""
        await self.action_quit()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "quit_unless_typing":  # the search box, a table's filter, the palette's
            return not isinstance(self.focused, Input) and not self.screen.get_selected_text()
        return super().check_action(action, parameters)

    def action_help_quit(self) -> None:
        """Ctrl+C in a text box with nothing selected (Textual's hint would say "press q", which types a q there)."""
        self.notify("Esc leaves the text box, then Ctrl+C or q quits", title="Ctrl+C here copies the selected text")

    def action_help(self) -> None:
        from ..screens.help import HelpScreen, help_sections

        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(help_sections(self.screen, self.keymap_overrides)))
