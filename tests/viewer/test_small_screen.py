"""80x24 is a first-class size: the lanes keep six rows, tables keep their numbers, the selection stays in sight."""

from __future__ import annotations

import pytest
from conftest import SAMPLES, press_settled, screen_text, until, wait_for_main

from tui.app import TraceApp
from tui.views.room import MIN_DETAILS, MIN_LANES, share
from tui.widgets.code_view import TABLE_ROWS, FramesTable
from tui.widgets.details import DetailsPanel
from tui.widgets.icicle import IcicleView
from tui.widgets.lazy_table import LazyTable
from tui.widgets.range_panel import RangePanel
from tui.widgets.selection_line import SelectionLine

BERT = str(SAMPLES / "h100-bert-small.json.gz")


@pytest.mark.parametrize("height", range(14, 60, 3))
@pytest.mark.parametrize("bars", [0, 2])
@pytest.mark.parametrize("marked", [False, True])
@pytest.mark.parametrize("searching", [False, True])
def test_the_lanes_keep_six_rows_whatever_else_is_open(height, bars, marked, searching):
    rows = share(height, bars, timeline=True, marked=marked, searching=searching)
    if height - 3 - bars - 2 - (3 if searching else 0) - (5 if marked else 0) - 1 >= MIN_LANES:
        assert rows.lanes >= MIN_LANES, rows
    assert rows.details == 0 or rows.details >= MIN_DETAILS
    assert rows.details <= max(int(height * 0.4), MIN_DETAILS)
    if marked and height >= 24:
        assert rows.range >= 5


def test_at_80x24_with_a_mark_the_details_panel_still_shows():
    rows = share(24, 2, timeline=True, marked=True, searching=False)
    assert rows.details >= MIN_DETAILS and rows.lanes >= MIN_LANES


def lane_rows(screen) -> int:
    return screen.timeline.scrollable_content_region.height


async def test_mark_and_details_at_80x24_leave_six_lane_rows_and_the_range_keeps_its_numbers():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        tl = screen.timeline
        step = int(next(i for i in tl.analysis.nesting.order if tl.analysis.trace.name_of(i) == "ProfilerStep#6"))
        tl.select(step)
        await press_settled(pilot, "m")
        panel = screen.query_one(RangePanel)
        assert panel.display and screen.details.display
        assert lane_rows(screen) >= MIN_LANES
        header = panel.render_line(0).text
        assert all(h in header for h in ("Count", "Self CPU", "Self GPU", "Total")), header
        rows = panel.cells()
        linear = next(r for r in rows if r[0] == "aten::linear")
        assert linear[1] == "26" and linear[2].endswith("s") and len(panel.render_line(1).text.rstrip()) <= 80
        await press_settled(pilot, "m", "escape")
        assert not screen.details.display and lane_rows(screen) >= MIN_LANES


async def test_esc_leaves_a_line_naming_the_selection_and_enter_opens_the_details_at_their_top():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        line = screen.query_one(SelectionLine)
        assert screen.details.display and not line.display
        await press_settled(pilot, "l", "l", "j", "escape")
        tl = screen.timeline
        a = tl.analysis
        assert not screen.details.display and line.display
        name = a.trace.name_of(tl.selected)
        assert line.text.split(" · ")[0].strip("…") in name or name.startswith("void")
        assert " · GPU 0 stream 7 · " in line.text or " · CPU " in line.text
        await press_settled(pilot, "l")  # h/l with the panel closed: the line follows the selection
        assert a.trace.name_of(tl.selected)[:8] in line.text or "…" in line.text
        screen.details.scroll_end(animate=False)  # the previous event's panel scrolled to its bottom
        await press_settled(pilot, "enter")
        assert screen.details.display and screen.details.scroll_y == 0 and not line.display


async def test_on_a_short_terminal_enter_opens_the_details_over_the_timeline():
    from tui.screens.details_overlay import DetailsOverlay

    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(80, 17)) as pilot:  # a tmux split, with a mark: no room below the lanes
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "l", "m")
        assert not screen.details.display and screen.query_one(SelectionLine).display  # no room: one line
        assert lane_rows(screen) >= MIN_LANES
        await press_settled(pilot, "enter")
        assert isinstance(app.screen, DetailsOverlay)
        overlay = app.screen.query_one(DetailsPanel)
        assert overlay.details is not None and overlay.details.index == screen.timeline.selected
        await press_settled(pilot, "escape")
        assert app.screen is screen and screen.focused is screen.timeline


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
async def test_the_code_view_keeps_eight_table_rows_and_the_icicle_gives_way(size):
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "6")
        table = screen.query_one(FramesTable).query_one(LazyTable)
        await until(pilot, lambda: table.size.height > 0, "the code table laid out")
        assert table.scrollable_content_region.height - 1 >= TABLE_ROWS  # its header, then the rows
        icicle = screen.query_one(IcicleView)
        if size[1] >= 45:
            assert icicle.display and icicle.size.height == 12


@pytest.mark.parametrize("zoomed", [False, True])
async def test_a_resize_keeps_the_span_of_time_shown(zoomed):
    """From 80 to 160 columns a 5.5 ms trace said "11.1ms shown", then "5.57ms" for a whole view of 5.17 ms (the whole
    trace's bucket was quantized, its room after the end changing with the width): the same span stays, to a cell
    of the narrower view, the whole trace still whole."""
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        tl = screen.timeline
        if zoomed:
            await press_settled(pilot, "l", "w", "w")
        before = tl.view
        span = before.t1 - before.t0
        await pilot.resize_terminal(160, 45)
        await pilot.pause()
        after = tl.view
        assert after.width > before.width
        assert abs(after.t1 - after.t0 - span) <= before.bucket
        assert after.t0 <= (before.t0 + before.t1) // 2 <= after.t1  # around the same time
        if not zoomed:
            assert after == tl.whole_view(after.width)
            assert after.t0 <= tl.lanes.t_min and tl.lanes.t_max <= after.t1
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert tl.view == before


def _screen_text(app) -> list[str]:
    """What the terminal shows, line by line (the app's own export)."""
    import re

    svg = app.export_screenshot()
    rows: dict[float, list[tuple[float, str]]] = {}
    for m in re.finditer(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', svg):
        rows.setdefault(float(m[2]), []).append((float(m[1]), m[3]))
    from html import unescape

    return ["".join(unescape(t) for _, t in sorted(r)).replace("\xa0", " ").rstrip() for _, r in sorted(rows.items())]


async def test_at_80x24_the_value_lane_legends_and_the_views_headers_are_whole():
    """Issue 36, 7: the memory and launch-queue legends ended mid-word ("each lane fr"), the code view's status
    mid-figure ("309.437us of"), the roofline's point line mid-number ("90.")."""
    from tui.widgets.roofline_view import RooflineView
    from tui.widgets.timeline import SERIES_TITLES, header_text

    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        tl = screen.timeline
        await until(pilot, lambda: {"memory", "queue"} <= {s.kind for s in tl.series}, "the value lanes")
        width = tl.scrollable_content_region.width - 1
        for kind in ("memory", "queue"):
            said = header_text(SERIES_TITLES[kind][0], width)
            assert said in SERIES_TITLES[kind] and len(said) <= width and said != SERIES_TITLES[kind][-1]
        await press_settled(pilot, "6")
        status = screen.query_one(FramesTable).status()
        assert "GPU time launched from Python: 309.437us of 309.437us (100.00%)" in status
        assert sum(max(-(-len(line) // 78), 1) for line in status.split("\n")) <= 5  # whole: nothing cut off
        await press_settled(pilot, "7")
        view = screen.query_one(RooflineView)
        lines = [line for line in _screen_text(app) if "FLOP/byte" in line or "memory-bound" in line]
        assert any(line.strip().endswith("FLOP/byte") and "FLOP/byte (log)" not in line for line in lines), lines
        assert view.size.width == 80


async def test_at_80x24_a_search_says_its_matches_in_the_key_bar_not_over_the_details():
    from tui.widgets.keybar import KeyBar

    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        screen.search("addmm")
        await until(pilot, lambda: len(screen.timeline.matches) > 0, "the matches")
        await pilot.pause()
        assert not [n for n in app._notifications if "match(" in n.message or "matches" in n.message]  # no toast
        assert screen.query_one(KeyBar).text().startswith(f"n match 1/{len(screen.timeline.matches)}")
        screen.search("no_such_op_anywhere")
        await until(pilot, lambda: screen.timeline.match_pattern == "no_such_op_anywhere", "the empty search")
        await pilot.pause()
        assert "/ no match /no_such_op_anywhere/" in screen.query_one(KeyBar).text()


async def test_at_80x24_same_named_lanes_keep_what_tells_them_apart():
    """The gloo sample's three main-thread lanes read `CPU main thread (tid…` alike at 80 columns."""
    app = TraceApp([str(SAMPLES / "cpu-only-gloo.json.gz")], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        tl = screen.timeline
        rows = [line for line in tl.lines if line.kind == "row" and line.depth == 0]
        gutters = [tl._gutter(line).text.rstrip("│").strip() for line in rows]
        assert len(rows) == 3 and len(set(gutters)) == 3, gutters
        assert all(g.endswith(("tid 1074", "tid 3553", "tid 3554")) for g in gutters) and "…" not in "".join(gutters)


@pytest.mark.parametrize("first", ["overview", "ops"])
async def test_the_legend_waits_for_the_timeline_when_the_trace_opens_elsewhere(first):
    """GIVEN tracetui's first trace opening on a view without the details panel (profile opens on the overview)
    WHEN the user reaches the timeline THEN the legend is there, under the lanes; it is marked seen only then (it
    was marked on load, and never shown)."""
    from tui.app.keymap import SEEN, config_dir
    from tui.screens.help import LEGEND

    app = TraceApp([BERT], use_cache=False, initial_view=first)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        panel = screen.query_one(DetailsPanel)
        assert screen.view_name == first and not panel.display and not (config_dir() / SEEN).exists()
        await press_settled(pilot, "1")
        said = " ".join(str(panel.query_one("#details-body").render()).split())
        assert panel.display and LEGEND in said and (config_dir() / SEEN).exists()


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
async def test_the_first_opens_legend_sits_under_the_lanes_until_a_selection(size):
    """GIVEN tracetui opening its first trace WHEN the lanes are drawn THEN nothing covers them (at 80x24 the legend's
    toast covered the CPU lanes from column 40): the legend is in the details panel below, whole, until an event is
    selected; it is said once."""
    from textual.widgets._toast import Toast

    from tui.screens.help import LEGEND

    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=size, notifications=True) as pilot:  # toasts drawn, as in a terminal
        screen = await wait_for_main(pilot)
        await pilot.pause()
        lanes = screen.timeline.region
        assert not [t for t in app.screen.query(Toast) if t.region.overlaps(lanes)]
        panel = screen.query_one(DetailsPanel)
        said = str(panel.query_one("#details-body").render())
        assert panel.display and panel.region.y >= lanes.bottom and LEGEND in " ".join(said.split())
        assert panel.max_scroll_y == 0 and lane_rows(screen) >= MIN_LANES  # whole, and the lanes keep their rows
        await press_settled(pilot, "l")
        assert "A bar is an event" not in str(panel.query_one("#details-body").render())
        await press_settled(pilot, "escape", "escape")
    again = TraceApp([BERT], use_cache=False)
    async with again.run_test(size=size) as pilot:
        screen = await wait_for_main(pilot)
        assert "A bar is an event" not in str(screen.query_one(DetailsPanel).query_one("#details-body").render())


@pytest.mark.parametrize("size", [(80, 24), (120, 35), (160, 45)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_details_panel_stays_with_the_view_that_opened_it(size):
    """A fresh-eyes run at 80x24: the details panel opened on the timeline stayed open over the tree (about the
    timeline's event) until Esc. The panel is the view's that opened it: the tree fills the screen, a line names
    its node; Enter there opens the tree's own, about its node; the timeline's is still open, about its event."""
    from tui.widgets.tree_view import CallTreeView

    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_main(pilot)
        line = screen.query_one(SelectionLine)
        await press_settled(pilot, "l", "enter")  # an event; Enter: its details (into the panel when open)
        event = screen.timeline.selected
        assert event >= 0 and screen.details.display and screen.details.details.index == event
        rows = [row.split("│")[-1].strip() for row in screen_text(app).splitlines()]
        where = next(row for row in rows if row.startswith("where "))  # the timeline's event's, in its panel

        await press_settled(pilot, "2")
        tree = screen.query_one(CallTreeView)
        await until(pilot, lambda: screen.focused is tree, "the focus in the tree")
        assert not screen.details.display and line.display  # not carried over: one line instead
        assert where not in screen_text(app)
        assert tree.region.bottom == line.region.y  # the tree down to the line: nothing over it

        await press_settled(pilot, "down")
        node = tree.cursor_node
        assert node is not None and node.data is not None and not screen.details.display
        opened = node.is_expanded
        await press_settled(pilot, "enter")  # the tree's own panel, about its node
        assert screen.details.display and screen.details.details.index == int(node.data.events[0])
        assert screen.focused is tree and node.is_expanded == opened  # Enter opened the panel, not the node
        await press_settled(pilot, "space")  # Space opens or closes the node
        assert node.is_expanded != opened and screen.focused is tree
        await press_settled(pilot, "escape")  # Esc closes the tree's
        assert not screen.details.display and line.display and screen.focused is tree

        await press_settled(pilot, "1")  # the timeline's panel as it was left: open, about its event
        assert screen.details.display and screen.details.details.index == event and not line.display
        assert where in screen_text(app)
        await press_settled(pilot, "escape")
        assert not screen.details.display and line.display
        await press_settled(pilot, "2")
        await until(pilot, lambda: screen.focused is tree, "the focus in the tree")
        assert not screen.details.display  # the tree's stays closed, as Esc left it
