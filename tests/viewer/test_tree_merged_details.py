"""A tree row can stand for many calls (`aten::linear  total 1.16ms · self 178us · GPU 198us ×26`); Enter showed
the details of its first call alone (`lasts 65.4us`), with nothing saying so. The panel now says what the row stands
for, its count and its figures as the tree shows them, and that the rows below are about the first of them (in
time: the one `t` shows on the timeline); a row of one call reads as before."""

from __future__ import annotations

from conftest import SAMPLES, until, wait_for_main
from rich.console import Console
from textual.widgets import Static

from tui.app import TraceApp
from tui.text.fmt import fmt_dur
from tui.widgets.details import DetailsPanel
from tui.widgets.tree_view import CallTreeView

BERT = str(SAMPLES / "h100-bert-small.json.gz")


def said(app) -> str:
    """The text of the details panel on screen (beside the tree, or over it on a short terminal), unwrapped."""
    panel = next(p for p in app.screen.query(DetailsPanel) if p.display)
    console = Console(width=400, record=True, file=open("/dev/null", "w"))  # noqa: SIM115 - the console keeps it
    console.print(panel.query_one("#details-body", Static).content)
    return console.export_text()


def figures(node) -> str:
    gpu = f" · GPU {fmt_dur(node.gpu_ns)}" if node.gpu_ns else ""
    return f"{node.count} calls: total {fmt_dur(node.total_ns)} · self {fmt_dur(node.self_ns)}{gpu}"


async def _in_the_tree(pilot) -> CallTreeView:
    screen = await wait_for_main(pilot)
    await pilot.press("2")
    await until(pilot, lambda: isinstance(screen.focused, CallTreeView), "2: the tree, focused")
    return screen.query_one(CallTreeView)


async def test_a_merged_rows_details_say_how_many_calls_and_their_totals_and_a_single_rows_do_not():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        tree = await _in_the_tree(pilot)
        await pilot.press("down", "down")  # ProfilerStep#6, then its hottest child: aten::linear ×26
        await until(pilot, lambda: tree.cursor_node is not None and tree.cursor_node.data.name == "aten::linear")
        node = tree.cursor_node.data
        assert node.count > 1
        await pilot.press("enter")
        await until(pilot, lambda: "aten::linear" in said(app), "Enter: the details panel beside the tree")
        text = said(app)
        assert figures(node) + "," in text and "each; below, the first of them" in text, text
        x, origin = tree.calltree.a.trace.x, app.screen.origin
        first = tree.first_event(node)
        assert int(x.ts[first]) == int(x.ts[node.events].min())  # the first in time
        assert f"starts {fmt_dur(int(x.ts[first]) - origin)} into the trace, lasts {fmt_dur(int(x.dur[first]))}" in text
        assert f"{fmt_dur(int(x.dur[node.events].min()))} to {fmt_dur(int(x.dur[node.events].max()))} each" in text

        single = next(c for c in tree.cursor_node.parent.children if c.data is not None and c.data.count == 1)
        tree.move_cursor(single)
        await until(pilot, lambda: single.data.name in said(app).split("\n")[0], "a row of one call's details")
        assert "tree row" not in said(app) and " calls: total" not in said(app)

        tree.move_cursor(tree.root.children[0].children[0])  # back on the merged row: t shows its first call
        await until(pilot, lambda: figures(node) in said(app), "the merged row again")
        await pilot.press("t")
        await until(pilot, lambda: app.screen.view_name == "timeline", "t: the timeline")
        await until(pilot, lambda: app.screen.timeline.selected == first, "t: the call the details were about")


async def test_on_a_short_terminal_the_details_over_the_tree_say_it_too_and_unmerged_rows_do_not():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        tree = await _in_the_tree(pilot)
        await pilot.press("down", "down")
        await until(pilot, lambda: tree.cursor_node is not None and tree.cursor_node.data.name == "aten::linear")
        node = tree.cursor_node.data
        await pilot.press("enter")
        await until(pilot, lambda: figures(node) in said(app), "Enter: the details, with what the row stands for")
        if app.screen is not tree.screen:  # the details over the tree (DetailsOverlay): Esc closes them
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is tree.screen, "Esc: the tree again")
        tree.focus()
        await pilot.press("m")  # merging off: a row per call, each row's details a single call's
        await until(pilot, lambda: not tree.calltree.merge and bool(tree.root.children), "m: unmerged")
        step = tree.root.children[0]
        await until(pilot, lambda: any(c.data.name == "aten::linear" for c in step.children), "the step's calls")
        one = next(c for c in step.children if c.data.name == "aten::linear")
        assert one.data.count == 1
        tree.move_cursor(one)
        await pilot.press("enter")
        await until(pilot, lambda: "aten::linear" in said(app), "the details of one aten::linear")
        assert " calls: total" not in said(app) and "tree row" not in said(app)
