"""What a new user tripped on in the viewer (fresh-eyes trial, 2026-12-04): each fixed, each asserted here."""

from __future__ import annotations

import pytest
from conftest import SAMPLES, press_settled, until, wait_for_main

from tui.app import TraceApp
from tui.model.view.viewport import Viewport, frame, span_view
from tui.widgets.ops_view import OpsView

BERT = str(SAMPLES / "h100-bert-small.json.gz")  # H100: a 5.5 ms window, two ProfilerSteps
CPU = str(SAMPLES / "cpu-only-gloo.json.gz")
SIZES = [(160, 45), (80, 24)]


def shows_well(view: Viewport, start: int, end: int) -> bool:
    """Wholly in view, at least two cells wide."""
    return view.t0 <= start and end <= view.t1 and end - start >= 2 * view.bucket


# ---- 1. a jump zooms to the event when it is too narrow or too wide to see ----------------------


def test_a_jump_frames_a_narrow_or_wide_event_and_only_pans_to_one_well_visible():
    v = Viewport(0, 40_000, 136)  # 5.44 ms
    narrow = frame(v, 1_000_000, 1_005_970)  # a 5.97 us call: a sixth of a cell
    assert shows_well(narrow, 1_000_000, 1_005_970)
    assert narrow.t1 - narrow.t0 <= 4 * 5_970  # about a third of the view, not the whole trace
    zoomed = Viewport(0, 50, 136)  # 6.8 us
    wide = frame(zoomed, 10_000, 46_000)  # a 36 us op
    assert shows_well(wide, 10_000, 46_000)
    assert frame(v, 1_000_000, 2_000_000) == v  # well visible: unchanged
    far = frame(v, 9_000_000, 10_000_000)  # the right size, out of view: panned, not zoomed
    assert far.bucket == v.bucket and shows_well(far, 9_000_000, 10_000_000)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_search_and_next_match_show_the_event_found(size):
    """/cudaDeviceSynchronize from the whole 5.5 ms trace selected a 6 us call a sixth of a cell wide."""
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_main(pilot)
        tl = screen.timeline
        x, end = tl.analysis.trace.x, tl.analysis.end
        await pilot.press("/", *"cudaDeviceSynchronize", "enter")
        await until(pilot, lambda: len(tl.matches) == 2 and tl.selected >= 0, "the search selects a match")
        for _ in range(2):
            i = tl.selected
            assert shows_well(tl.view, int(x.ts[i]), int(end[i]))
            await press_settled(pilot, "n")
        # zoomed far in, a jump to a whole step zooms out to show it
        await press_settled(pilot, *"wwwwwwwwww")
        await pilot.press("/", *"^ProfilerStep#", "enter")
        await until(pilot, lambda: len(tl.matches) == 2, "two steps found")
        await until(pilot, lambda: shows_well(tl.view, int(x.ts[tl.selected]), int(end[tl.selected])), "step shown")


# ---- 2. Enter on the ops table's ProfilerStep* row finds the steps -------------------------------


async def test_enter_on_the_profiler_step_row_finds_every_step():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "3")
        ops = screen.query_one(OpsView)
        await until(pilot, lambda: bool(ops.shown), "the ops table")
        await pilot.press("/", *"^ProfilerStep", "enter")
        await until(pilot, lambda: {r.name for r in ops.shown} == {"ProfilerStep*"}, "the step rows alone")
        await pilot.press("enter")  # (its CPU op row, then its GPU annotation row)
        tl = screen.timeline
        await until(pilot, lambda: len(tl.matches) >= 2, "Enter finds the ProfilerStep#N")
        names = {tl.analysis.trace.name_of(int(i)) for i in tl.matches}
        assert names == {"ProfilerStep#6"}, names  # its CPU op and its GPU annotation


# ---- 3. a resize keeps the span of time shown ------------------------------------------------------


def test_a_view_drawn_at_a_width_comes_back_from_its_span():
    v = Viewport(1_000_000 // 28 * 28, 28, 136)
    assert span_view(v.t0, v.t1, 136) == v
    narrow = span_view(v.t0, v.t1, 56)
    assert v.t1 - v.t0 <= narrow.t1 - narrow.t0 < v.t1 - v.t0 + narrow.bucket


async def test_resizing_back_and_forth_keeps_the_zoomed_span_exactly():
    """After f then w, four round trips between 160x45 and 80x24 drifted from 4.1 us to 8.19 us."""
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        tl = screen.timeline
        await press_settled(pilot, "l", "f", "w")
        before = tl.view
        span = before.t1 - before.t0
        for _ in range(4):
            await pilot.resize_terminal(80, 24)
            await pilot.pause()
            small = tl.view
            assert small.width < before.width
            assert span <= small.t1 - small.t0 < span + small.bucket  # the same span, to a cell
            await pilot.resize_terminal(160, 45)
            await pilot.pause()
            assert tl.view == before


# ---- 4. ] and [ on a trace without links: not offered, and say why when pressed -------------------


async def test_flow_keys_on_a_cpu_only_trace_are_not_offered_and_say_why():
    app = TraceApp([CPU], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        offered = {k for e in screen.query_one("KeyBar").shown for k in e.keys}
        assert "/" in offered and not {"]", "["} & offered
        assert not screen.timeline.check_action("flow", (True,))
        await press_settled(pilot, "l", "]")
        assert any("no launch or kernel links" in str(n.message) for n in app._notifications)


async def test_flow_keys_on_a_cuda_trace_are_offered():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        assert screen.timeline.check_action("flow", (True,)) is True
        assert screen.timeline.check_action("no_flow", ()) is False


# ---- 5. the code view of a CPU-only capture: CPU time, no device sort ----------------------------

CPU_STACKS = str(SAMPLES / "cpu" / "attn_sdpa_math.json.gz")  # CPU only, with Python frames


async def test_the_code_view_of_a_cpu_only_capture_is_by_cpu_time():
    from tui.widgets.code_view import CodeView, FramesTable
    from tui.widgets.icicle import IcicleView

    app = TraceApp([CPU_STACKS], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "6")
        await until(pilot, lambda: bool(screen.query(FramesTable)), "the code view")
        table, icicle = screen.query_one(FramesTable), screen.query_one(IcicleView)
        assert icicle.by == "cpu" and icicle._rows and icicle._rows[0]  # the icicle is drawn, by CPU time
        status = str(screen.query_one("#icicle-status").render())
        assert "of CPU time" in status and "device time launched" not in status
        assert table.sort_key == "self_cpu"
        assert table.check_action("sort", ("self_device",)) is False
        assert table.check_action("sort", ("self_cpu",)) is True
        assert screen.query_one(CodeView).check_action("icicle_width", ()) is False
        offered = {k for e in screen.query_one("KeyBar").shown for k in e.keys}
        assert "g" not in offered and "v" not in offered


# ---- 6. kernels at 80 columns: the sorted column stays; every column cuts names in the middle -------


async def test_kernels_at_80_columns_keep_the_sorted_column_and_tell_names_apart():
    from tui.widgets.kernels_view import KernelsView
    from tui.widgets.lazy_table import LazyTable

    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "4")
        kernels = screen.query_one(KernelsView)
        await until(pilot, lambda: kernels.fitted is not None, "the kernels table fitted")
        assert "Min" not in kernels.fitted.headers  # dropped to fit 80 columns
        await press_settled(pilot, "m")
        await until(pilot, lambda: "Min" in kernels.fitted.headers, "m keeps the Min column shown")
        assert "sorted by min" in kernels.status()
        await press_settled(pilot, "e")
        table = kernels.query_one(LazyTable)
        await until(pilot, lambda: kernels.fitted is not None and not kernels.fitted.dropped, "every column")
        frozen = table._frozen_width(table.scrollable_content_region.width)
        names = [kernels.fitted.cells[k][0] for k in table.order]
        assert len(names) > 5 and all(len(n) <= frozen for n in names)  # cut to the room, never by the table
        shown = [table.render_line(1 + k).text[:frozen] for k in range(len(names))][: table.size.height - 1]
        assert len(set(shown)) == len(shown)  # no two rows read alike


# ---- 7. the details panel's full names are whole ------------------------------------------------


def plain(renderable, width: int) -> str:
    from rich.console import Console

    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return "".join(console.export_text().split())  # wrapped over lines: compared without the white space


@pytest.mark.parametrize("full", [False, True])
def test_a_kernels_full_name_in_the_details_is_whole_at_any_width(full):
    from tui.model.analyses.details import describe
    from tui.model.analyses.results import Results
    from tui.model.cats import Cat
    from tui.model.load import load_trace
    from tui.text.names import short_name
    from tui.widgets.details import details_renderable

    a = Results(load_trace(BERT, use_cache=False))
    x = a.trace.x
    kernel = max((i for i in range(a.trace.n) if x.cat[i] == Cat.KERNEL), key=lambda i: len(a.trace.name_of(i)))
    d = describe(a, kernel, a.trace.origin)
    assert short_name(d.name) != d.name and len(d.name) > 100
    text = plain(details_renderable(d, full=full), 60)
    assert "".join(d.name.split()) in text
    if full:  # f: the name row itself is the whole name, no second copy
        assert text.count("".join(d.name.split())) == 1


# ---- 11. tracetui critical on a CPU-only capture: CPU advice; a what-if that leaves no path ----------


def test_critical_on_a_cpu_only_capture_advises_on_cpu_work_and_handles_a_path_of_no_time():
    from tui.model.analyses.results import Results
    from tui.model.load import load_trace
    from tui.reports.critical import render_critical

    a = Results(load_trace(CPU, use_cache=False))  # the gloo rank: its step waits on gloo's all-reduce threads
    out = render_critical(a, "text")
    assert "no device activity" in out and "The CPU inside collective calls is 81% of the path" in out
    assert "GPU waits" not in out and "CUDA graphs" not in out
    a = Results(load_trace(SAMPLES / "cpu" / "linear_fwd.json.gz", use_cache=False))
    out = render_critical(a, "text", what_if=["cpu=0"])
    assert "no device activity" in out and "CPU work is 100% of the path" in out
    assert "GPU waits" not in out and "CUDA graphs" not in out
    assert "the window would take no time: nothing else is on its path" in out
    assert "runs mostly through \n" not in out + "\n" and "After" not in out and "Total: 0.0 us" not in out


def test_a_what_if_names_what_it_changes_first():
    from tui.model.analyses.critical.whatif import parse_spec
    from tui.tables.critical import _change

    assert _change(parse_spec("kernel:gemm=2"), ["a", "b"]) == "kernels matching /gemm/ 2× faster"


# ---- 10. the overview says what a launch buys once ------------------------------------------------


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_overview_says_what_each_launch_buys_once(size):
    from rich.console import Console

    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "5")
        await until(pilot, lambda: bool(screen.query("#overview-body")), "the overview")
        console = Console(width=200, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
        console.print(screen.query_one("#overview-body").content)
        text = " ".join(console.export_text().split())
        assert "Verdict" in text
        assert text.count("each launch buys") == 1 and text.count("per kernel launched") == 1


# ---- 9. the tree says that self holds the hidden Python frames' time -------------------------------


async def test_the_tree_says_self_includes_hidden_python_frames():
    from tui.views.registry import TREE_FRAMES_HIDDEN

    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        assert screen.hide_python  # BERT's deep stacks: frames hidden at first
        await press_settled(pilot, "2")
        await until(pilot, lambda: len(screen.query(".tree-note")) == 1, "the note above the tree")
        note = screen.query_one(".tree-note")
        assert str(note.render()) == TREE_FRAMES_HIDDEN and note.size.height == 1
        await press_settled(pilot, "p")
        await until(pilot, lambda: not screen.hide_python and not screen.query(".tree-note"), "frames shown: no note")


# ---- 8. help lists the command palette and itself ----------------------------------------------------


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_help_lists_ctrl_p_and_the_help_key(size):
    from tui.screens.help import HelpScreen

    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=size) as pilot:
        await wait_for_main(pilot)
        await press_settled(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        rows = {row[0]: row[1] for _, rows in app.screen.sections for row in rows}
        assert "Ctrl+P" in rows and "palette" in rows["Ctrl+P"].lower()
        assert "?" in rows and "help" in rows["?"].lower()


async def test_p_in_the_tree_leaves_the_focus_in_the_rebuilt_tree():
    """p rebuilds the tree; the focus went to the tab bar, so the arrows moved between tabs."""
    from tui.widgets.tree_view import CallTreeView

    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "2")
        await until(pilot, lambda: isinstance(screen.focused, CallTreeView), "the focus in the tree")
        await press_settled(pilot, "p")
        await until(pilot, lambda: not screen.hide_python and bool(screen.query(CallTreeView)), "frames shown")
        await until(pilot, lambda: isinstance(screen.focused, CallTreeView), "the focus back in the rebuilt tree")
