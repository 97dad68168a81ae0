"""Ctrl+C quits, as q does: over SSH it is how people leave a terminal program, and Textual's own Ctrl+C only said
"Do you want to quit? Press q or ctrl+q". A text box with the focus keeps Ctrl+C: it copies the selected text, and
with nothing selected it says how to leave (Esc, then Ctrl+C or q), never quits under the user's typing."""

from __future__ import annotations

import shutil

from conftest import SAMPLES, until, wait_for_main
from textual.selection import Selection
from textual.widgets import Input

from tui.app import TraceApp
from tui.screens.help import HelpScreen, help_sections

BERT = str(SAMPLES / "h100-bert-small.json.gz")


def _asked_to_press_q(app) -> bool:
    return any("to quit" in n.message for n in app._notifications)


async def test_ctrl_c_quits_from_a_view_and_copies_text_selected_with_the_mouse():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        body = screen.query_one("#details-body")  # the legend, under the lanes
        screen.selections = {body: Selection(None, None)}  # as a drag over it selects
        await pilot.press("ctrl+c")  # Textual's copy of the selection, not quit
        await pilot.pause()
        assert app.is_running and "Reading the timeline" in app.clipboard
        screen.clear_selection()
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.is_running, "the app ended")
        assert not _asked_to_press_q(app)
    assert app.return_code == 0


async def test_ctrl_c_quits_from_the_help_and_the_help_says_so():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for_main(pilot)
        rows = [row for _, section in help_sections(app.screen, {}) for row in section]
        assert any(keys == "Ctrl+C" and words.startswith("Quit") for keys, words, _ in rows), rows
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        shown = [row for _, section in app.screen.sections for row in section]
        assert ("Ctrl+C", "Quit, as q does (in a text box Ctrl+C copies the selected text)", "app.quit_ctrl_c") in shown
        await pilot.press("ctrl+c")  # a modal screen: the app's key still quits (no "Do you want to quit?")
        await until(pilot, lambda: not app.is_running, "the app ended")
        assert not _asked_to_press_q(app)
    assert app.return_code == 0


async def test_ctrl_c_in_the_search_box_copies_or_says_how_to_leave_then_quits_outside_it():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        await pilot.press("slash", *"linear")
        box = screen.query_one("#search", Input)
        await until(pilot, lambda: box.has_focus and box.value == "linear", "the search box, typed in")
        box.action_select_all()
        await pilot.press("ctrl+c")  # Textual's Input: the selected text copied
        await pilot.pause()
        assert app.is_running and app.clipboard == "linear" and box.has_focus
        box.action_end()  # nothing selected: the key falls through the box, and a hint says how to leave
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and box.has_focus and box.value == "linear"
        assert [n.message for n in app._notifications if "quits" in n.message] == [
            "Esc leaves the text box, then Ctrl+C or q quits"
        ]
        await pilot.press("escape")
        await until(pilot, lambda: not box.has_focus, "the search box left")
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.is_running, "the app ended")
    assert app.return_code == 0


async def test_ctrl_c_over_the_watch_strip_goes_back_to_it_as_q_does_then_quits(tmp_path):
    from textual.widgets import DataTable

    from tui.screens.main import MainScreen

    folder = tmp_path / "run"
    shutil.copytree(SAMPLES.parent / "tests" / "data" / "noise" / "same", folder)
    app = TraceApp([], use_cache=False, watch=folder, interval=0.1)
    async with app.run_test(size=(80, 24)) as pilot:
        strip_screen = app.screen
        strip = strip_screen.query_one(DataTable)
        await until(pilot, lambda: strip.row_count == 3, "the captures")
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, MainScreen), "o: the viewer")
        await pilot.press("ctrl+c")
        await until(pilot, lambda: app.screen is strip_screen, "ctrl+c: back to the strip, as q")
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.is_running, "ctrl+c on the strip: the app ended")
    assert app.return_code == 0
