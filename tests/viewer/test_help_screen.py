"""The help at 80x24: PageDown turns the page (it moved only the cursor to the page's last row, so the first press
scrolled nothing), and no stray block is drawn (the rows wider than the box drew a horizontal scrollbar whose thumb
was one '▉' below the table)."""

from __future__ import annotations

import pytest
from conftest import SAMPLES, screen_text, until, wait_for_main

from tui.app import TraceApp
from tui.screens.help import HelpScreen, HelpTable


async def test_pagedown_scrolls_the_help_and_nothing_stray_is_drawn():
    app = TraceApp([str(SAMPLES / "h100-bert-small.json.gz")], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_main(pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        table = app.screen.query_one(HelpTable)
        assert app.screen.focused is table and table.row_count > 2 * table.scrollable_content_region.height
        assert "▉" not in app.export_screenshot()
        await pilot.press("pagedown")
        await pilot.pause()
        first = table.scroll_offset.y
        assert first > 0 and table.cursor_row >= first  # the rows moved a page, the cursor with them
        await pilot.press("pagedown")
        await pilot.pause()
        assert table.scroll_offset.y > first
        await pilot.press("pageup", "pageup")
        await pilot.pause()
        assert table.scroll_offset.y == 0 and table.cursor_row == 0


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_help_tables_headers_keep_a_column_from_the_border(size):
    """A fresh-eyes run: the table's headers ("Keys  What they do") and its sections' names sat against the box's
    left border, while the title and the legend above were inset by a column; the table is inset the same."""
    app = TraceApp([str(SAMPLES / "h100-bert-small.json.gz")], use_cache=False)
    async with app.run_test(size=size) as pilot:
        await wait_for_main(pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        await pilot.pause()
        lines = screen_text(app).splitlines()
        title = next(line for line in lines if "Keys that work here" in line)
        head = next(line for line in lines if "What they do" in line)
        section = next(line for line in lines if line.strip("│ ").startswith("Timeline"))
        assert title.index("│ Keys that work here") == head.index("│ Keys ") == section.index("│ Timeline"), head
        key = next(line for line in lines if "Previous event" in line)
        assert "│   ← h" in key  # a key under its section's name, two columns in
        table = app.screen.query_one(HelpTable)
        assert table.styles.padding.left == 1 == table.styles.padding.right
