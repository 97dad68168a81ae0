"""The first five minutes, key by key: each journey a new user takes, asserting what every key does.

Every journey runs at 160x45 and at 80x24, and with each worker's result posted at once or held back
(tui/appkit/pace.py, the result_delay fixture), so the orders a busy machine produces (a key before the view's
data, a view ready after the user moved on) run on every test run. A step presses keys as a user does,
without waiting for the background work, then waits (`until`) for the answer to show: the view changed
and the focus in it, the selection moved, the zoom changed, the rows reordered.
"""

from __future__ import annotations

import pytest
from conftest import SAMPLES, until, wait_for_main

from tui.app import TraceApp
from tui.model.analyses.results import Results
from tui.model.analysis import Analysis
from tui.model.cats import Cat
from tui.model.load.args import event_args
from tui.screens.main import MainScreen
from tui.widgets.code_view import FramesTable
from tui.widgets.kernels_view import KernelsView
from tui.widgets.lazy_table import LazyTable
from tui.widgets.ops_view import OpsView
from tui.widgets.overview import OverviewView
from tui.widgets.roofline_view import RooflineView
from tui.widgets.timeline import Timeline
from tui.widgets.tree_view import CallTreeView

BERT = str(SAMPLES / "h100-bert-small.json.gz")  # H100, with stacks, memory and shapes
SIZES = [(160, 45), (80, 24)]
pytestmark = pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")


def focused_in(screen, kind) -> bool:
    """The focus is on (or inside) a widget of this kind, in the view shown."""
    node = screen.focused
    return node is not None and any(isinstance(n, kind) for n in node.ancestors_with_self)


async def go(pilot, key: str, view: str, kind) -> MainScreen:
    """A number key: its view shown with the focus in it, once its data is ready."""
    screen = pilot.app.screen
    await pilot.press(key)
    assert screen.active_view == view  # at once, computing or not
    await until(pilot, lambda: focused_in(screen, kind), f"{key}: the focus in the {view} view")
    assert screen.query_one("TabbedContent").active == view
    return screen


def text_of(renderable, width: int = 160) -> str:
    from rich.console import Console

    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text()


def descending(values: list) -> bool:
    return values == sorted(values, reverse=True)


async def test_open_timeline_kernel_launch_caller_tree_tables_overview_code_roofline(size, result_delay):
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_main(pilot, settled=False)  # the analyses still run (held back when slowed)
        tl = screen.timeline
        assert screen.active_view == "timeline" and screen.focused is tl

        # the timeline: select, move along the row, zoom
        x = tl.analysis.trace.x
        await pilot.press("l")
        assert tl.selected >= 0  # nothing selected: the first event in view
        bucket = tl.view.bucket  # a lane that comes late does not narrow the lanes: the scrollbar's room is kept
        await pilot.press("w")
        assert tl.view.bucket == bucket // 2

        # a kernel, found by name: then to its launch and up to the Python code that called it
        await pilot.press("/", *"Kernel2", "enter")
        await until(pilot, lambda: tl.selected >= 0 and x.cat[tl.selected] == Cat.KERNEL, "/ selects a kernel")
        kernel = tl.selected
        await pilot.press("l")
        assert x.track[tl.selected] == x.track[kernel] and x.ts[tl.selected] > x.ts[kernel]  # the next on its stream
        await pilot.press("h")
        assert tl.selected == kernel
        await until(pilot, lambda: tl.analysis.ready(Analysis.links), "the launches linked")
        await pilot.press("[")
        launch = tl.selected
        assert x.cat[launch] == Cat.RUNTIME
        assert (
            event_args(tl.analysis.trace, launch)["correlation"] == event_args(tl.analysis.trace, kernel)["correlation"]
        )
        assert screen.hide_python  # deep stacks start hidden: p shows the frames, the selection stays
        await pilot.press("p")
        await until(pilot, lambda: not screen.hide_python, "p shows the Python frames")
        assert tl.selected == launch and screen.focused is tl
        seen = []
        for _ in range(30):
            await pilot.press("k")
            seen.append(tl.selected)
            if x.cat[tl.selected] == Cat.PYTHON:
                break
        assert x.cat[seen[-1]] == Cat.PYTHON, "k climbs from the launch to a Python frame"
        assert int(tl.analysis.nesting.parent[launch]) == seen[0]
        caller = tl.selected

        # the tree opens at the selection
        await go(pilot, "2", "tree", CallTreeView)
        tree = screen.query_one(CallTreeView)
        await until(
            pilot, lambda: tree.cursor_node is not None and caller in tree.cursor_node.data.events, "tree at it"
        )

        # ops: sort by calls, then filter
        await go(pilot, "3", "ops", OpsView)
        ops = screen.query_one(OpsView)
        await pilot.press("c")
        assert ops.sort_key == "count" and descending([r.count for r in ops.shown])
        await pilot.press("s")
        assert descending([r.self_cpu_us for r in ops.shown])
        await pilot.press("/", *"^aten::", "enter")
        assert ops.shown and all(r.name.startswith("aten::") for r in ops.shown)
        assert isinstance(screen.focused, LazyTable)

        # kernels: the same letters, and min
        await go(pilot, "4", "kernels", KernelsView)
        kernels = screen.query_one(KernelsView)
        await pilot.press("m")
        assert kernels.sort_key == "min" and descending([r.min_us for r in kernels.shown])
        await pilot.press("c")
        assert descending([r.count for r in kernels.shown])

        await go(pilot, "5", "overview", OverviewView)
        body = text_of(screen.query_one("#overview-body").content)
        assert "Verdict" in body

        await go(pilot, "6", "code", FramesTable)
        frames = screen.query_one(FramesTable)
        await pilot.press("c")
        assert frames.sort_key == "count" and descending([r.count for r in frames.shown])

        await go(pilot, "7", "roofline", RooflineView)
        roof = screen.query_one(RooflineView)
        before = roof.current
        await pilot.press("l")
        assert roof.current is not None and roof.current is not before

        await go(pilot, "1", "timeline", Timeline)
        assert tl.selected == caller  # the selection waited on the timeline


async def test_every_view_key_while_the_results_arrive(size, result_delay):
    """Keys pressed before the data of their view: each view still ends shown with the focus in it, and p
    pressed in the middle leaves the focus where the last view key put it."""
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_main(pilot, settled=False)
        await pilot.press("3", "4", "2", "p", "1", "l", "m", "p")
        assert screen.active_view == "timeline"
        await until(pilot, lambda: screen.timeline.selected >= 0, "l selects")
        await pilot.press("2")
        await until(pilot, lambda: focused_in(screen, CallTreeView), "2: the tree, focused")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.active_view == "tree" and focused_in(screen, CallTreeView)
        for key, view, kind in [("3", "ops", OpsView), ("4", "kernels", KernelsView), ("1", "timeline", Timeline)]:
            await go(pilot, key, view, kind)


async def test_profile_opens_on_the_overview_with_its_keys_live(size, result_delay):
    """`tracetui profile` opens the viewer on the overview (CaptureReader.open): shown, focused, and 1 then
    the timeline keys answer at once."""
    trace = str(SAMPLES / "cpu" / "attn_sdpa_math.json.gz")  # a CPU capture with stacks, as profile writes
    app = TraceApp([trace], use_cache=False, initial_view="overview")
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_main(pilot, settled=False)
        assert screen.active_view == "overview" and screen.query_one("TabbedContent").active == "overview"
        await until(pilot, lambda: focused_in(screen, OverviewView), "the overview, focused")
        await go(pilot, "1", "timeline", Timeline)
        tl = screen.timeline
        await pilot.press("l")
        assert tl.selected >= 0
        bucket = tl.view.bucket  # a lane that comes late does not narrow the lanes: the scrollbar's room is kept
        await pilot.press("w")
        assert tl.view.bucket == bucket // 2
        await go(pilot, "5", "overview", OverviewView)


async def test_compare_two_traces(size, result_delay):
    from tui.screens.compare import CompareScreen

    pair = [str(SAMPLES / "cpu" / f"matmul_add_64_warm_{k}.json.gz") for k in ("eager", "compiled")]
    app = TraceApp(pair, use_cache=False, compare=True)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_main(pilot, settled=False)
        assert isinstance(screen, CompareScreen) and screen.active_view == "summary"
        assert focused_in(screen, LazyTable) and screen.pane("summary") in screen.focused.ancestors
        for key, view in [("3", "ops"), ("2", "steps"), ("4", "kernels"), ("1", "summary")]:
            await pilot.press(key)
            assert screen.active_view == view and screen.query_one("TabbedContent").active == view
            assert screen.pane(view) in screen.focused.ancestors  # the key after goes to this view's table
        table = screen.focused
        await pilot.press("down")
        assert table.cursor_row == 1


async def test_compare_ranks_and_back(size, result_delay):
    """A job of ranks: C opens the straggler beside a typical rank; Esc comes back to the timeline, focused."""
    from tui.screens.compare import CompareScreen

    app = TraceApp([str(SAMPLES / "hta-2rank")], use_cache=False)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_main(pilot, settled=False)
        await until(pilot, lambda: screen.analysis.peek(Results.job) is not None, "the ranks summarized")
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, CompareScreen), "C: the compare screen")
        compare = app.screen
        await until(pilot, lambda: focused_in(compare, LazyTable), "the compare screen's table focused")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen, "Esc: back to the main screen")
        await until(pilot, lambda: screen.focused is screen.timeline, "the timeline focused again")


async def test_watch_open_a_capture_and_come_back(size, result_delay, tmp_path):
    """watch is a home: o opens the shown capture over the strip, Esc (once nothing else is open) or q comes
    back to the strip, which kept following the folder meanwhile; q on the strip quits."""
    import os
    import shutil
    from pathlib import Path

    from textual.widgets import DataTable

    from tui.screens.watch import WatchScreen

    tb = Path(__file__).parents[1] / "data" / "tb-repeat2"
    older, newer = sorted(tb.iterdir())
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copy(older, folder / older.name)
    app = TraceApp([], use_cache=False, watch=folder, interval=0.1)
    async with app.run_test(size=size) as pilot:
        strip_screen = app.screen
        assert isinstance(strip_screen, WatchScreen)
        strip = strip_screen.query_one(DataTable)
        await until(pilot, lambda: strip.row_count == 1, "the capture in the strip")
        assert strip_screen.focused is strip

        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, MainScreen), "o: the viewer")
        viewer = app.screen
        assert viewer.title_text == str(folder / older.name) and viewer.focused is viewer.timeline
        await pilot.press("l")
        assert viewer.timeline.selected >= 0
        shutil.copy(newer, folder / newer.name)  # training writes the next capture meanwhile
        os.utime(folder / newer.name, (1_000_000_000, 1_000_000_000))
        await until(pilot, lambda: strip.row_count == 2, "the strip follows the folder under the viewer")
        await pilot.press("q")
        assert app.screen is strip_screen and app.is_running and strip_screen.focused is strip

        strip.move_cursor(row=1)
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, MainScreen), "o: the newer capture")
        assert app.screen.title_text == str(folder / newer.name)
        viewer = app.screen
        await until(pilot, lambda: viewer.focused is viewer.timeline, "the timeline focused")
        for _ in range(3):  # Esc closes what is open first (the details panel), then comes back
            if app.screen is strip_screen:
                break
            await pilot.press("escape")
        assert app.screen is strip_screen and app.is_running
        await pilot.press("q")
    assert app.return_code == 0


async def test_a_sort_key_pressed_again_turns_the_order_round_and_says_so(size):
    """Pressing c twice left the ops sorted by calls, most first, with nothing to say which way (a user looked
    for the fewest calls). The second press turns the order round; another key starts again at its own way."""
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_main(pilot)
        screen = await go(pilot, "3", "ops", OpsView)
        ops = screen.query_one(OpsView)
        await pilot.press("c")
        counts = [r.count for r in ops.shown]
        assert descending(counts) and not ops.reversed and "reversed" not in ops.status()
        await pilot.press("c")
        assert [r.count for r in ops.shown] == sorted(counts) and ops.reversed
        assert "sorted by calls, reversed" in ops.status().lower()
        await pilot.press("s")
        assert not ops.reversed and descending([r.self_cpu_us for r in ops.shown])
