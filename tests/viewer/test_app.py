"""Pilot tests: drive the real app with keys on real traces and assert its state."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from conftest import SAMPLES, press_settled, until, wait_for_main

from tui.app import TraceApp
from tui.model.cats import Cat
from tui.model.load.args import event_args
from tui.screens.help import HelpScreen
from tui.screens.main import MainScreen
from tui.widgets.kernels_view import KernelsView
from tui.widgets.ops_view import OpsView
from tui.widgets.range_panel import RangePanel
from tui.widgets.timeline import Timeline
from tui.widgets.tree_view import CallTreeView

BERT = str(SAMPLES / "h100-bert-small.json.gz")


async def started(pilot) -> MainScreen:
    screen = await wait_for_main(pilot)
    assert isinstance(screen, MainScreen)
    return screen


@pytest.fixture
def app():
    return TraceApp([BERT], use_cache=False)


async def test_zoom_keeps_the_cursor_time_in_place_and_pan_moves_by_an_eighth(app):
    async with app.run_test(size=(160, 45)) as pilot:
        tl = (await started(pilot)).timeline
        full = tl.view
        center = (full.t0 + full.t1) // 2
        await pilot.press("w")
        assert tl.view.bucket == full.bucket // 2
        assert abs(tl.view.col_of(center) - full.col_of(center)) <= 1
        zoomed = tl.view
        await pilot.press("d")
        assert tl.view.t0 == zoomed.t0 + (zoomed.width // 8) * zoomed.bucket
        await pilot.press("A")
        assert tl.view.t0 == zoomed.t0 + (zoomed.width // 8) * zoomed.bucket * (1 - 4)
        await pilot.press("s", "s")
        assert tl.view == full  # out no further than the whole trace
        await pilot.press("0")
        assert tl.view == full
        assert tl.lanes.t_min >= full.t0 and tl.lanes.t_max <= full.t1


async def test_w_and_s_keep_the_selection_at_its_column_and_come_back(app):
    """GIVEN a kernel selected four fifths along the step at 80x24 WHEN w is pressed until the kernel is wider than
    the view, then s as often THEN its middle stays within half a cell of the column it was at (it slid 4 cells right
    on the way in, 7 by the way out: each press rounded the view down a cell), and s undoes w exactly."""
    async with app.run_test(size=(80, 24)) as pilot:
        tl = (await started(pilot)).timeline
        a = tl.analysis
        kernels = [int(i) for i in a.nesting.order if a.trace.x.cat[i] == Cat.KERNEL]
        kernel = kernels[len(kernels) * 4 // 5]
        tl.select(kernel)
        await pilot.pause()
        start = tl.view
        middle = (int(a.trace.x.ts[kernel]) + int(a.end[kernel])) // 2
        column = start.col_of(middle)
        views = [start]
        while int(a.end[kernel]) - int(a.trace.x.ts[kernel]) < 2 * (tl.view.t1 - tl.view.t0):  # past its width
            await pilot.press("w")
            assert abs(tl.view.col_of(middle) - column) <= 0.5, ("w", len(views), tl.view.col_of(middle), column)
            views.append(tl.view)
        for back in views[-2::-1]:
            await pilot.press("s")
            assert abs(tl.view.col_of(middle) - column) <= 0.5 and tl.view == back  # s gives back the view before w


async def test_the_wheel_keeps_the_time_under_the_pointer_and_comes_back(app):
    from textual import events

    async with app.run_test(size=(80, 24)) as pilot:
        tl = (await started(pilot)).timeline
        start, x = tl.view, tl.name_cols + 20
        under = start.time_at(20.5)

        def wheel(kind) -> events.MouseEvent:
            return kind(tl, x, 5, 0, 0, 0, False, False, False, screen_x=x, screen_y=5)

        for kind in [events.MouseScrollUp] * 6 + [events.MouseScrollDown] * 6:
            tl.post_message(wheel(kind))
            await pilot.pause()
            assert 20 <= tl.view.col_of(under) <= 21  # still in the pointer's cell
        assert tl.view == start


async def test_selection_moves_along_the_row_and_to_parent_and_child(app):
    async with app.run_test(size=(160, 45)) as pilot:
        tl = (await started(pilot)).timeline
        a = tl.analysis
        await pilot.press("l")  # nothing selected yet: selects the first visible event
        assert tl.selected >= 0
        first = int(next(i for i in a.nesting.order if a.trace.x.cat[i] == Cat.KERNEL))
        tl.select(first)
        await pilot.press("l")
        second = tl.selected
        row = a.nesting.row
        assert a.trace.x.track[second] == a.trace.x.track[first] and row[second] == row[first]
        assert a.trace.x.ts[second] > a.trace.x.ts[first]
        await pilot.press("h")
        assert tl.selected == first
        # go to an op with children, then down and up
        op = int(np.flatnonzero(np.array([a.trace.names[n] == "aten::linear" for n in a.trace.x.name]))[0])
        tl.select(op)
        await pilot.press("j")
        child = tl.selected
        assert a.nesting.parent[child] == op
        await pilot.press("k")
        assert tl.selected == op


async def test_bracket_follows_launch_to_kernel_and_back(app):
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await started(pilot)
        tl = screen.timeline
        trace = tl.analysis.trace
        launch = int(next(i for i in tl.analysis.nesting.order if trace.name_of(i) == "cudaLaunchKernel"))
        tl.select(launch)
        await pilot.press("]")
        kernel = tl.selected
        assert trace.x.cat[kernel] == Cat.KERNEL
        assert event_args(trace, kernel)["correlation"] == event_args(trace, launch)["correlation"]
        assert screen.query_one("#details").details.launch[0] == launch
        await pilot.press("[")
        assert tl.selected == launch


async def test_search_highlights_matches_and_n_walks_them(app):
    async with app.run_test(size=(160, 45)) as pilot:
        tl = (await started(pilot)).timeline
        await pilot.press("/")
        await pilot.press(*"aten::(mm|addmm)$", "enter")
        names = [tl.analysis.trace.name_of(i) for i in tl.matches]
        expected = sum(1 for n in tl.analysis.trace.x.name if tl.analysis.trace.names[n] in ("aten::mm", "aten::addmm"))
        assert len(names) == expected > 0 and set(names) <= {"aten::mm", "aten::addmm"}
        assert tl.selected == tl.matches[0]
        await pilot.press("n")
        assert tl.selected == tl.matches[1]
        await pilot.press("N", "N")
        assert tl.selected == tl.matches[-1]


async def test_mark_aggregates_the_range(app):
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await started(pilot)
        tl = screen.timeline
        a = tl.analysis
        step = int(next(i for i in a.nesting.order if a.trace.name_of(i) == "ProfilerStep#6"))
        tl.select(step)
        await pilot.press("m")
        panel = screen.query_one(RangePanel)
        assert panel.display and tl.mark == (int(a.trace.x.ts[step]), int(a.end[step]))
        inside = [i for i in a.nesting.order if a.trace.x.ts[i] >= tl.mark[0] and a.end[i] <= tl.mark[1]]
        linear = [i for i in inside if a.trace.name_of(i) == "aten::linear"]
        row = next(r for r in panel.cells() if r[0] == "aten::linear")
        assert int(row[1]) == len(linear)
        await pilot.press("m")
        assert tl.mark is None and not panel.display


async def test_help_lists_the_keys_that_work_here_in_words(app):
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await started(pilot)
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        help_screen = pilot.app.screen
        assert isinstance(help_screen, HelpScreen)
        sections = dict(help_screen.sections)
        assert list(sections)[0] == "Timeline" and "Everywhere" in sections
        assert not any("Screen" in where or "App" in where for where in sections)  # words, not class names
        ids = {row[2] for rows in sections.values() for row in rows}
        off = {"timeline.next_rank", "timeline.prev_rank", "timeline.only_rank", "timeline.no_flow"}  # (links here)
        shown = {b.id for b in Timeline.BINDINGS} - off
        assert shown <= ids and {"app.quit", "view.tree", "view.code"} <= ids
        assert not ids & {"timeline.next_rank", "timeline.only_rank", "main.compare_ranks"}  # one trace: no rank keys
        assert len(ids & {"main.hide_python", "main.show_python"}) == (1 if screen.analysis.frame_levels else 0)
        assert all(row[1] for rows in sections.values() for row in rows)
        keys = [row[0] for rows in sections.values() for row in rows]
        assert "← h" in keys and "?" in keys
        assert help_screen.query("#help-legend")  # the timeline's legend, with the timeline's keys
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, MainScreen)
        await pilot.press("3")  # the ops view: its keys, no legend of bars and lanes it does not draw
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(pilot.app.screen, HelpScreen) and "Timeline" not in dict(pilot.app.screen.sections)
        assert not pilot.app.screen.query("#help-legend")
        enter = [(where, row) for where, rows in pilot.app.screen.sections for row in rows if row[0] == "Enter"]
        assert enter == [("Ops table", ("Enter", "Show the row's calls on the timeline", "table.jump"))]  # not the
        await pilot.press("escape")  # table's own "Select row": it hands the row to the view, which jumps


async def test_ops_view_sorts_filters_groups_and_jumps(app):
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await started(pilot)
        await pilot.press("3")
        ops = screen.query_one(OpsView)
        await pilot.press("c")
        counts = [r.count for r in ops.shown]
        assert counts == sorted(counts, reverse=True)
        await pilot.press("s")
        assert [r.self_cpu_us for r in ops.shown] == sorted((r.self_cpu_us for r in ops.shown), reverse=True)
        await pilot.press("/", *"^aten::", "enter")
        assert ops.shown and all(r.name.startswith("aten::") for r in ops.shown)
        await pilot.press("b")
        assert ops.by_shape and any(r.input_shapes for r in ops.shown)
        await pilot.press("enter")
        assert screen.active_view == "timeline"
        await until(pilot, lambda: len(screen.timeline.matches) > 0, "the row's calls")
        assert len(screen.timeline.matches) == ops.shown[0].count  # that shape's calls, not every call of the op


async def test_kernels_view_sorts_and_shows_the_footprint(app):
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await started(pilot)
        await pilot.press("4")
        view = screen.query_one(KernelsView)
        await pilot.press("c")
        assert [r.count for r in view.shown] == sorted((r.count for r in view.shown), reverse=True)
        grid = view.footprint.arg(view.shown[0].example, "grid")
        assert grid.startswith("[")


async def test_tree_expands_lazily_and_follows_the_selection(app):
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await started(pilot)
        tl = screen.timeline
        a = tl.analysis
        kernel = int(next(i for i in a.nesting.order if a.trace.x.cat[i] == Cat.KERNEL and a.links.launcher[i] >= 0))
        tl.select(kernel)
        await pilot.press("2")
        await pilot.pause()
        await pilot.pause()
        tree = screen.query_one(CallTreeView)
        node = tree.cursor_node
        assert node is not None and kernel in node.data.events.tolist()
        assert node.data.kind == "gpu"
        root = tree.root.children[0]
        assert root.data.name == "ProfilerStep#6" and root.is_expanded


async def test_overview_says_the_verdict_in_words(app):
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await started(pilot)
        await pilot.press("5")
        from rich.console import Console

        console = Console(width=160, record=True, file=open("/dev/null", "w"))
        console.print(screen.query_one("#overview-body").content)
        body = console.export_text()
        assert "Verdict: overhead-bound" in body
        flat = " ".join(body.split())
        assert "The critical path of ProfilerStep#6 (the typical step, 4.43 ms) is 100% CPU work" in flat
        # 72.3 us of CPU per kernel against a 5.5 us call: the work around each launch, not the call (launch=0 saves 8%)
        assert "The CPU work around each launch (Python, dispatch, the op's own code) is the cost" in flat
        # the figures once, in the launches' reading: the path's CPU per kernel beside the call's own
        assert (
            flat.count("comes to 72.3 us per kernel launched") == 1
            and "A launch call in ProfilerStep#6 takes 5.5 us" in flat
        )
        assert "ProfilerStep#6 ████" in body


async def test_narrow_terminal_still_works():
    app = TraceApp([str(SAMPLES / "a100-train-control.json.gz")], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await started(pilot)
        tl = screen.timeline
        assert tl.name_cols < 24 and tl.cells_width + tl.name_cols == 80 - 1  # 1 for the scrollbar
        await pilot.press("w", "l", "enter", "3", "4", "5", "1")
        assert tl.selected >= 0


async def test_bad_file_reports_an_error_and_exits():
    app = TraceApp(["/nonexistent.json"], use_cache=False)
    async with app.run_test() as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    assert app.load_error is not None and "no such file" in str(app.load_error)


async def test_details_show_the_explain_note_and_overview_lists_findings():
    app = TraceApp([str(SAMPLES / "b300-moe-small.json.gz")], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await started(pilot)
        a = screen.timeline.analysis
        abr = int(next(i for i in range(a.trace.n) if a.trace.name_of(i) == "Activity Buffer Request"))
        screen.timeline.select(abr)
        await pilot.pause()
        from rich.console import Console

        console = Console(width=160, record=True, file=open("/dev/null", "w"))
        console.print(screen.query_one("#details-body").content)
        assert "profiler overhead" in console.export_text()
        await pilot.press("5")
        console.print(screen.query_one("#overview-body").content)
        text = console.export_text()
        assert "What this trace shows" in text and "Profiler buffer request" in text


def test_every_binding_has_an_id_and_a_description():
    from tui.app.bindings import bound_classes

    classes = bound_classes(TraceApp)
    for cls in classes:
        for b in cls.BINDINGS:
            assert b.id and b.description, (cls.__name__, b.key)
    ids = [b.id for cls in classes for b in cls.BINDINGS]
    assert len(ids) == len(set(ids))


async def test_quit_while_loading():
    app = TraceApp([str(SAMPLES / "a100-train-control.json.gz")], use_cache=False)
    async with app.run_test() as pilot:
        await pilot.press("q")
    assert app.return_code == 0 and app.load_error is None


async def test_click_selects_and_wheel_zooms(app):
    from textual import events

    async with app.run_test(size=(160, 45)) as pilot:
        tl = (await started(pilot)).timeline
        a = tl.analysis
        kernel = int(next(i for i in a.nesting.order if a.trace.x.cat[i] == Cat.KERNEL))
        track, row = int(a.trace.x.track[kernel]), int(a.nesting.row[kernel])
        line = tl._line_of_track[track] + row
        col = int(tl.view.col_of(int(a.trace.x.ts[kernel]))) + tl.name_cols
        expected = tl.event_at(col, line - tl.scroll_offset.y)
        await pilot.click(Timeline, offset=(col, line - tl.scroll_offset.y))
        assert tl.selected == expected >= 0
        before = tl.view.bucket
        tl.post_message(events.MouseScrollUp(tl, col, 2, 0, 0, 0, False, False, False, screen_x=col, screen_y=2))
        await pilot.pause()
        assert tl.view.bucket == before // 2


async def test_app_loads_with_worker_processes(tmp_path, force_workers):
    """Big traces decode in worker processes; starting them under the app's captured stderr must work."""
    import gzip

    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress((SAMPLES / "a100-ddp-nccl.json.gz").read_bytes()))
    calls = force_workers
    app = TraceApp([str(plain)], use_cache=False)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await started(pilot)
        assert screen.timeline.analysis.trace.n == 26933
    assert calls == [2]


async def test_search_highlights_every_match_even_past_200k():
    """A search matching 250 k events highlights them all (it once stopped at 200 k without saying so)."""
    from textual.app import App

    from benchmarks.tile import tile_columns
    from tui.model import load_trace
    from tui.model.analyses.results import Results
    from tui.model.view.lanes import LaneIndex

    analysis = Results(tile_columns(load_trace(BERT), 100))
    lanes = LaneIndex(analysis)

    class Host(App):
        def on_mount(self) -> None:
            self.push_screen(MainScreen(analysis, lanes, "tiled"))

    async with Host().run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        screen = pilot.app.screen
        assert screen.search(".")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        tl = screen.timeline
        assert len(tl.matches) > 200_000
        assert tl.match_mask is not None and int(tl.match_mask.sum()) == len(tl.matches)
        last = int(tl.matches[-1])
        tl.select(int(tl.matches[0]))  # the last match is no longer the selection: only its match colour marks it
        from tui.widgets.paint import MATCH, _fill

        assert _fill(last, tl._event_name, tl.selected, tl.match_mask) == MATCH


async def test_a_view_says_computing_until_its_data_is_ready(monkeypatch):
    """The ops tab opens at once with a note while the table is computed in the background."""
    import threading

    import tui.model.analyses.results as results

    gate = threading.Event()
    real = results.ops_table

    def slow_ops(*args, **kwargs):
        gate.wait(20)
        return real(*args, **kwargs)

    monkeypatch.setattr(results, "ops_table", slow_ops)
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(120, 35)) as pilot:
        try:
            screen = await wait_for_main(pilot, settled=False)  # once waited for the gated analyses too
            await pilot.press("3")
            notes = [str(n.render()) for n in screen.query("ViewPane#ops .computing")]
            assert notes and "computing" in notes[0] and "ops" in notes[0], notes
            assert not screen.query(OpsView)
            await pilot.press("1", "l", "w")  # the rest of the app keeps answering meanwhile
            assert screen.active_view == "timeline" and screen.timeline.selected >= 0
        finally:
            gate.set()  # a failure above must not leave the analyses waiting
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("3")
        await pilot.pause()
        assert screen.query(OpsView) and not screen.query(".computing")


async def test_no_analysis_runs_on_the_ui_thread(monkeypatch):
    """Every key of every view, while and after the background work runs: the heavy work is never on the UI thread."""
    import threading

    import tui.model.analyses.results as results
    import tui.model.analysis as analysis
    import tui.model.view.navigate as navigate

    on_ui: list[str] = []

    def watch(module, name):
        real = getattr(module, name)

        def wrapped(*args, **kwargs):
            if threading.current_thread() is threading.main_thread():
                on_ui.append(name)
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapped)

    for module, name in [
        (analysis, "nest"),
        (analysis, "link"),
        (analysis, "subtree_sum"),
        (results, "ops_table"),
        (results, "op_times"),
        (results, "summarize"),
        (results, "explain"),
        (results, "kernel_rows"),
        (navigate, "search"),
    ]:
        watch(module, name)
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for_main(pilot, settled=False)
        for key in ["l", "j", "k", "]", "[", "m", "/", "a", "t", "e", "n", "enter", "2", "3", "4", "5", "1", "m"]:
            await pilot.press(key)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        for key in ["l", "j", "]", "[", "m", "2", "3", "b", "4", "5", "1"]:
            await pilot.press(key)
        await pilot.app.workers.wait_for_complete()
    assert on_ui == []


def test_long_kernel_names_are_folded_in_the_details_panel():
    from tui.text.names import short_name

    name = (
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor"
        "<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >"
        "(at::TensorIteratorBase&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast)"
    )
    assert short_name(name) == "void at::native::elementwise_kernel<…>(…)"
    assert short_name("aten::mm") == "aten::mm"
    assert short_name("x" * 300).endswith("...") and len(short_name("x" * 300)) == 100


@pytest.mark.parametrize("size", [(160, 45), (80, 24)])
async def test_ops_view_fits_the_terminal_and_keeps_the_calls_column(size):
    from tui.widgets.lazy_table import LazyTable

    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=size) as pilot:
        screen = await started(pilot)
        await press_settled(pilot, "3")
        ops = screen.query_one(OpsView)
        table = ops.query_one(LazyTable)
        header = table.render_line(0).text
        assert "# of Calls" in header and "Self CPU" in header and "CUDA total" in header
        assert len(header.rstrip()) <= table.scrollable_content_region.width
        if size[0] == 80:
            assert ops.fitted is not None and ops.fitted.dropped and "e shows every column" in ops.status()
        n = min(10, table.row_count)
        names = [table.render_line(1 + k).text.split("  ")[0].strip() for k in range(n)]
        assert len(set(names)) >= len({r.name for r in ops.shown[:n]})  # cut names still tell the rows apart
        assert any(name.endswith(" (GPU)") for name in names)  # and a step's GPU row from its CPU row
        await press_settled(pilot, "e")
        assert ops.fitted is not None and not ops.fitted.dropped


async def test_a_failed_analysis_stays_in_its_pane_and_the_rest_works(monkeypatch):
    """The kernels table raises: its tab says so in one line with the log's path; the timeline and ops carry on."""
    import tui.model.analyses.results as results
    from tui.appkit import faults

    def broken(*args, **kwargs):
        raise RuntimeError("boom in the kernels table")

    monkeypatch.setattr(results, "kernel_rows", broken)
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(120, 35)) as pilot:
        screen = await started(pilot)
        await pilot.press("4")
        await pilot.pause()
        note = screen.query_one("ViewPane#kernels .pane-note")
        text = str(note.render())
        assert "Could not compute the kernels: RuntimeError: boom in the kernels table" in text
        assert str(faults.log_path()) in text and "boom in the kernels table" in faults.log_path().read_text()
        await pilot.press("3")
        await pilot.pause()
        assert screen.query(OpsView)
        await pilot.press("1", "l", "w", "enter")
        assert app.is_running and screen.timeline.selected >= 0


async def test_a_failed_worker_is_one_line_not_an_exit(monkeypatch):
    import tui.screens.main as main

    def broken(*args, **kwargs):
        raise ValueError("the search fell over")

    monkeypatch.setattr(main.navigate, "search", broken)
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(120, 35)) as pilot:
        await started(pilot)
        await press_settled(pilot, "/", "a", "enter")
        assert app.is_running
        assert any("the search fell over" in str(n.message) for n in app._notifications)


@pytest.mark.parametrize("fit_here", [10, 10_000])  # the tables fitted in a worker, and on the UI thread
async def test_a_table_that_cannot_be_fitted_is_one_line_not_an_exit(monkeypatch, fit_here):
    import tui.widgets.rows_view as rows_view

    def broken(*args, **kwargs):
        raise ValueError("the table would not fit")

    monkeypatch.setattr(rows_view, "fitted_table", broken)
    monkeypatch.setattr(rows_view, "FIT_HERE_ROWS", fit_here)
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(120, 35)) as pilot:
        await started(pilot)
        await press_settled(pilot, "3")
        await press_settled(pilot, "4")
        await press_settled(pilot, "1", "l")
        assert app.is_running and isinstance(app.screen, MainScreen)
        assert any("the table would not fit" in str(n.message) for n in app._notifications)


async def test_a_view_with_nothing_to_show_says_why():
    app = TraceApp([str(SAMPLES / "cpu" / "matmul_add_64_warm_eager.json.gz")], use_cache=False)
    async with app.run_test(size=(120, 35)) as pilot:
        screen = await started(pilot)
        await pilot.press("4")
        await pilot.pause()
        assert "No GPU activity in this trace" in str(screen.query_one("ViewPane#kernels .pane-note").render())
        await pilot.press("6")
        await pilot.pause()
        assert "with_stack" in str(screen.query_one("ViewPane#code .pane-note").render())


async def test_the_kernels_view_of_a_gpu_trace_cut_before_its_gpu_records_says_they_may_be_lost(tmp_path):
    cut = tmp_path / "cut.json"  # the BERT sample's first 300 KB: CPU events only, the GPU's are written after them
    cut.write_bytes(gzip.decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes())[:300_000])
    app = TraceApp([str(cut)], use_cache=False)
    async with app.run_test(size=(120, 35)) as pilot:
        screen = await started(pilot)
        await pilot.press("4")
        await pilot.pause()
        said = str(screen.query_one("ViewPane#kernels .pane-note").render())
        assert "No GPU activity in the part of the file that was read; the file is cut short" in said
        assert "CPU only" not in said


async def test_a_keymap_file_remaps_a_binding_and_help_shows_it(tmp_path, monkeypatch):
    config = tmp_path / "config"
    config.mkdir()
    (config / "keymap.toml").write_text('"timeline.zoom_in" = "i"\n"no.such.binding" = "x"\n')
    monkeypatch.setenv("TRACETUI_CONFIG_DIR", str(config))
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await started(pilot)
        before = screen.timeline.view.bucket
        await pilot.press("i")
        assert screen.timeline.view.bucket == before // 2
        assert app.keymap_problem and "no.such.binding" in app.keymap_problem
        await pilot.press("question_mark")
        await pilot.pause()
        rows = [r for _, rs in pilot.app.screen.sections for r in rs]
        assert ("i", "Zoom in", "timeline.zoom_in") in rows


async def test_the_palette_lists_each_view_once_and_no_duplicates():
    from textual.command import CommandList, CommandPalette

    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await started(pilot)
        await pilot.press("ctrl+p")

        def options() -> list:
            palette = pilot.app.screen
            return list(palette.query_one(CommandList).options) if isinstance(palette, CommandPalette) else []

        await until(pilot, lambda: len(options()) > 8, "the palette's commands listed")
        titles = [str(o.prompt).split("\n")[0] for o in options()]
        await pilot.press("escape")
    assert len(titles) == len(set(titles)), titles
    views = [t for t in titles if t.startswith("Show the ")]
    assert len(views) == 9 and "Show the code view (6)" in views and "Show the roofline view (7)" in views
    assert "Show the path view (8)" in views and "Show the sequences view (9)" in views
    assert "Keys and legend" in titles and "Quit" in titles and "Help: keys (?)" not in titles


def test_every_worker_reports_its_failure_instead_of_ending_the_app():
    import re
    from pathlib import Path

    import tui

    root = Path(tui.__file__).parent
    for path in root.rglob("*.py"):
        for decorator in re.findall(r"@work\((.*?)\)\n", path.read_text(), re.S):
            assert "exit_on_error=False" in decorator, path


async def test_the_theme_picker_restyles_the_timeline(app):
    from tui.widgets import paint

    async with app.run_test(size=(120, 35)) as pilot:
        screen = await started(pilot)
        tl = screen.timeline
        dark_lane, dark_header = paint.LANES[0].lane_bg, tl._component("header")
        pilot.app.theme = "textual-light"
        restyled = lambda: paint.LANES[0].lane_bg != dark_lane and tl._component("header") != dark_header  # noqa: E731
        await until(pilot, restyled, "the lanes and the header in the light theme's colours")
        line = tl.render_line(0)
        assert line.text.strip()  # still draws


async def test_a_cpu_only_trace_offers_no_cuda_sort_keys():
    app = TraceApp([str(SAMPLES / "cpu" / "matmul_add_64_warm_eager.json.gz")], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await started(pilot)
        await press_settled(pilot, "3")
        ops = screen.query_one(OpsView)
        assert "CUDA" not in ops.status() and "self CPU" in ops.status()
        before = ops.sort_key
        await pilot.press("u")  # sort by CUDA total: not offered here
        assert ops.sort_key == before


async def test_names_with_brackets_are_shown_as_text_not_markup():
    """b300-moe's annotations read like markup (moe_layer[E=16, ...]); the ops view once ended the app on them."""
    app = TraceApp([str(SAMPLES / "b300-moe-small.json.gz")], use_cache=False)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await started(pilot)
        await pilot.press("3", "/", *"moe", "enter")
        await pilot.pause()
        ops = screen.query_one(OpsView)
        assert app.is_running and ops.shown and any("[" in r.name for r in ops.shown)
        assert "moe" in str(ops.query_one(".table-status").render())


async def test_every_notification_is_plain_text_whoever_sends_it():
    """Names from the trace go into notifications; `[/b]` or an unclosed `[E=16` must read as text, not end the app."""
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(120, 35)) as pilot:
        screen = await started(pilot)
        screen.timeline.notify("no match for /moe_layer[E=16/")  # a widget's notify goes through the app's
        app.notify("[/b] closes nothing", markup=True)
        await pilot.pause()
        mine = [n for n in app._notifications if "E=16" in n.message or "closes nothing" in n.message]
        assert len(mine) == 2 and not any(n.markup for n in mine) and app.is_running
        await pilot.press("slash", "ctrl+c")  # in the search box ctrl+c does not quit: a hint, as text
        await pilot.pause()
        hint = [n for n in app._notifications if "quits" in n.message]
        assert [n.message for n in hint] == ["Esc leaves the text box, then Ctrl+C or q quits"] and app.is_running
        assert not any(n.markup for n in hint)


async def test_every_tab_fits_the_bar_short_at_80_columns_and_full_when_wider(app):
    """GIVEN nine views WHEN the terminal is 80 columns THEN the tab bar shows every tab, whole, with short titles
    (it would scroll and hide the last otherwise); WHEN it grows to 160 THEN the full titles come back."""
    from textual.widgets import Tab

    def labels() -> list[str]:
        return [str(t.label) for t in pilot.app.screen.query(Tab)]

    def all_inside(width: int) -> bool:
        return all(0 <= t.region.x and t.region.right <= width for t in pilot.app.screen.query(Tab))

    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_main(pilot, settled=False)
        await until(pilot, lambda: "9 Seqs" in labels() and all_inside(80), "short titles inside 80 columns")
        assert "1 Time" in labels() and len(labels()) == 9
        await pilot.resize_terminal(160, 45)
        await until(pilot, lambda: "9 Sequences" in labels() and "1 Timeline" in labels(), "full titles at 160")
