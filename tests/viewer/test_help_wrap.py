"""The help wraps what the keys do to the box, on every view, at 80x24 and 160x45: at 80 columns it cut its
sentences mid-word ("fit the widt", "top ops an", "the typical step (or o", "what fusin", "ranks, th")."""

from __future__ import annotations

import pytest
from conftest import SAMPLES, press_settled, until, wait_for_main
from rich.cells import cell_len

from tui.app import TraceApp
from tui.screens.help import KEYS_LEAST, HelpScreen, HelpTable, wrapped
from tui.views.registry import MAIN
from tui.widgets.lazy_table import frozen_room


def _words_in_full(table: HelpTable, screen: HelpScreen) -> None:
    """Nothing of a row is off to the right, the keys are not cut, and the wrapped lines read each description
    whole, word for word."""
    width = table.scrollable_content_region.width
    assert table._max_side() == 0 and table.widths[0] <= frozen_room(width)
    last = len(table.source.headers) - 1
    shown = " ".join(table.source.cell(r, last) for r in range(len(table.source))).split()
    said = " ".join(what for _, rows in screen.sections for _, what, _ in rows).split()
    assert shown == said


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_every_views_help_wraps_its_words_to_the_box(size):
    app = TraceApp([str(SAMPLES / "h100-bert-small.json.gz")], use_cache=False)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_main(pilot)
        for spec in MAIN:
            await press_settled(pilot, spec.key)
            await press_settled(pilot, "question_mark")
            await until(pilot, lambda: isinstance(app.screen, HelpScreen), f"the help of {spec.title}")
            help_screen = app.screen
            assert isinstance(help_screen, HelpScreen)
            table = help_screen.query_one(HelpTable)
            _words_in_full(table, help_screen)
            await press_settled(pilot, "i")  # the ids between: narrower room, still wrapped
            assert len(table.source.headers) == 3
            _words_in_full(table, help_screen)
            await press_settled(pilot, "escape")
            await until(pilot, lambda: app.screen is screen, "the help closed")


async def test_the_help_rewraps_when_the_terminal_is_resized():
    app = TraceApp([str(SAMPLES / "h100-bert-small.json.gz")], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for_main(pilot)
        await press_settled(pilot, "question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        table = help_screen.query_one(HelpTable)
        wide = len(table.source)
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: len(table.source) > wide, "the rows rewrapped to 80 columns")
        _words_in_full(table, help_screen)


def test_wrapping_keeps_every_word_and_blanks_the_keys_of_further_lines():
    rows = [["Section", ""], ["  e", "Every column, in full (← → scroll) / fit the width"]]
    out = wrapped(["Keys", "What they do"], rows, 40)  # 30 columns left of 40 for the words (8 for the keys)
    assert out == [["Section", ""], ["  e", "Every column, in full (← →"], ["", "scroll) / fit the width"]]


async def test_the_keys_column_is_as_wide_as_the_keys_and_a_sections_name_runs_across():
    """GIVEN a table view at 80x24 WHEN ? opens its help THEN the keys' column is as wide as its longest keys, not as
    its longest section's name ("Moving in a table" made it 18 with the gap, for keys of 8), so the words start
    further left; each section's name still reads whole across its row."""
    app = TraceApp([str(SAMPLES / "h100-bert-small.json.gz")], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_main(pilot)
        await press_settled(pilot, "3", "question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        table = help_screen.query_one(HelpTable)
        keys = [keys for _, rows in help_screen.sections for keys, _, _ in rows]
        assert table.widths[0] == max(KEYS_LEAST, *(cell_len(f"  {k}") for k in keys)) < cell_len("Moving in a table")
        lines = [table.render_line(y).text for y in range(table.size.height)]
        assert lines[1].strip() == help_screen.sections[0][0] == "Moving in a table"
        calls = next(line for line in lines if "Sort by calls" in line)
        assert calls.index("Sort by calls") == table.widths[0] + 2  # the words right after the keys and the gap
