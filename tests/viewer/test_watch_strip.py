"""watch's strip on a folder of captures: the panel, d and o act on the highlighted capture, ↑/↓ move it, a new
capture does not pull a user who went up away from the one they look at, and a change within the runs' own spread
reads as no change. On tests/data/noise/same (three captures of one unchanged run)."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import until
from textual.widgets import DataTable, Static

from tui.app import TraceApp
from tui.screens.main import MainScreen

SAME = sorted((Path(__file__).parents[1] / "data" / "noise" / "same").iterdir())


def panel(screen) -> str:
    return str(screen.query_one("#watch-shown", Static).render())


async def test_the_panel_keys_d_and_o_follow_the_highlighted_capture(tmp_path, result_delay):
    folder = tmp_path / "run"
    folder.mkdir()
    for f in SAME[:2]:
        shutil.copy(f, folder / f.name)
    app = TraceApp([], use_cache=False, watch=folder, interval=0.1)
    async with app.run_test(size=(80, 24)) as pilot:
        strip_screen = app.screen
        strip = strip_screen.query_one(DataTable)
        await until(pilot, lambda: strip.row_count == 2 and strip.cursor_row == 1, "both captures, the newest shown")
        await until(pilot, lambda: panel(strip_screen).startswith(SAME[1].name), "the newest capture's panel")
        assert "no change (" in str(strip.get_row_at(1)[3])  # within the runs' own spread

        await pilot.press("up")
        await until(pilot, lambda: panel(strip_screen).startswith(SAME[0].name), "↑: the older capture's panel")
        shutil.copy(SAME[2], folder / SAME[2].name)  # training writes the next capture meanwhile
        await until(pilot, lambda: strip.row_count == 3, "the third capture in the strip")
        await pilot.pause(0.2)
        assert strip.cursor_row == 0 and panel(strip_screen).startswith(SAME[0].name)  # not pulled to the new one

        await pilot.press("down")
        await pilot.press("d")
        want = f"A: {SAME[0].name}\nB: {SAME[1].name}"
        await until(
            pilot, lambda: panel(strip_screen).startswith(want), "d: the highlighted capture and the one before"
        )
        assert "within the runs' own spread of ±" in panel(strip_screen)

        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, MainScreen), "o: the viewer")
        assert app.screen.title_text == str(folder / SAME[1].name)  # the highlighted capture, not the newest
        await pilot.press("q")
        await until(pilot, lambda: app.screen is strip_screen, "q: back to the strip")
        assert strip.cursor_row == 1


async def test_a_slow_panel_never_lands_over_the_one_the_user_moved_to(tmp_path):
    from tui.screens.watch import WatchScreen

    folder = tmp_path / "run"
    shutil.copytree(SAME[0].parent, folder)
    app = TraceApp([], use_cache=False, watch=folder, interval=0.1)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        strip = screen.query_one(DataTable)
        await until(pilot, lambda: strip.row_count == 3, "the captures")
        await until(pilot, lambda: panel(screen).startswith(SAME[2].name), "the newest's panel")
        screen._body("a panel for the first capture, late", 0)  # a worker's result for a row no longer highlighted
        assert panel(screen).startswith(SAME[2].name)
