"""`tracetui open SNAPSHOT`: the active-memory timeline, the segments, the tables, the details; bad input exits 2."""

from __future__ import annotations

import pickle
import re

import pytest
from allocator_snapshots import BASE, MB, Builder, at, fragmented, leak, no_history, write
from conftest import ROOT, press_settled, screen_text, until
from textual.widgets import Static

from tui.app import TraceApp
from tui.appkit import faults
from tui.model.errors import TraceError
from tui.model.snapshot.timeline import EMPTY
from tui.screens.snapshot import SnapshotScreen
from tui.widgets.snapshot_frames import FrameTable, SnapshotFrames
from tui.widgets.snapshot_segments import SnapshotSegments
from tui.widgets.snapshot_timeline import SnapshotTimeline

REAL = ROOT / "tests" / "data" / "snapshots" / "h200-gpt-train.pickle.gz"  # the shared one, gzipped


async def opened(pilot) -> SnapshotScreen:
    """The snapshot screen, once loaded and its timeline's first cells are drawn."""
    await until(pilot, lambda: isinstance(pilot.app.screen, SnapshotScreen) and pilot.app.screen.loaded, "loaded")
    screen = pilot.app.screen
    await until(pilot, lambda: bool(screen.query(SnapshotTimeline)), "the views")
    timeline = screen.query_one(SnapshotTimeline)
    if timeline.mem.curves is not None:
        await until(pilot, lambda: timeline.cells is not None and not timeline.stale, "the timeline's cells")
    await pilot.pause()
    return screen


def details(screen: SnapshotScreen) -> str:
    return str(screen.query_one("#snap-text", Static).content)


async def test_the_real_snapshot_opens_on_its_peak_and_an_allocation_shows_its_frames():
    app = TraceApp([str(REAL)], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await opened(pilot)
        timeline = screen.query_one(SnapshotTimeline)
        assert timeline.has_focus and "665.03 MiB live in 233 allocations" in timeline.status()
        assert not screen.has_class("narrow")
        await press_settled(pilot, "up")
        assert timeline.selected != EMPTY
        for _ in range(6):  # up the stack to an allocation the history made (its frames recorded)
            await press_settled(pilot, "up")
        text = details(screen)
        assert "requested" in text and "on stream" in text and "frame: " in text
        await press_settled(pilot, "c")
        assert screen.cpp
        await press_settled(pilot, "2")
        segments = screen.query_one(SnapshotSegments)
        await until(pilot, lambda: segments.state is not None and segments.entry == timeline.cursor_entry())
        assert segments.has_focus and "rebuilt from the history" in segments.head()
        await press_settled(pilot, "down")
        assert details(screen).startswith("Segment 0x") and "Held by" in details(screen)
        await press_settled(pilot, "e")
        assert "at the end" in segments.head() and "45 segments, 1.35 GiB reserved" in segments.head()
        await press_settled(pilot, "3")
        table = screen.query_one("#frames-peak", FrameTable)
        assert table.has_focus and table.row_count == 14
        await press_settled(pilot, "down", "enter")  # the second row: the optimizer's state
        assert timeline.highlight == "case_memory_snapshot (h200_capture.py:293)" and timeline.has_focus
        await press_settled(pilot, "x")
        assert timeline.highlight is None
    assert app.load_error is None and not faults.log_path().exists()


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
async def test_every_view_writes_sizes_in_the_memory_lanes_binary_units(size):
    """GIVEN the real snapshot WHEN its timeline, segments (one picked) and frames show THEN every size reads as the
    trace's memory lanes write it, KiB, MiB or GiB (the scale 665MiB, a segment 98MiB), never 665M or 1.35G."""
    app = TraceApp([str(REAL)], use_cache=False)
    async with app.run_test(size=size) as pilot:
        screen = await opened(pilot)
        shown = [screen_text(app)]
        await press_settled(pilot, "2")
        segments = screen.query_one(SnapshotSegments)
        await until(pilot, lambda: segments.state is not None, "the segments")
        await press_settled(pilot, "down")
        shown.append(screen_text(app))
        await press_settled(pilot, "3")
        shown.append(screen_text(app))
        text = "\n".join(shown)
        assert re.findall(r"\d[KMGT]\b", text) == []
        assert "665MiB│" in shown[0] and "98MiB" in shown[1] and "GiB" in shown[0]


async def test_a_taller_terminal_redraws_the_timeline_from_cells_of_the_old_height():
    """Growing the window draws rows the last cells do not have (blank until the worker makes taller ones);
    it raised IndexError from render_line, which ended the app."""
    app = TraceApp([str(REAL)], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(pilot)
        timeline = screen.query_one(SnapshotTimeline)
        before = timeline.cells_for
        await pilot.resize_terminal(160, 45)
        await pilot.pause()
        await until(pilot, lambda: timeline.cells_for not in (None, before) and not timeline.stale, "taller cells")
        assert timeline.cells is not None and timeline.cells.cells.shape[0] == timeline.chart_height > 8
        await pilot.resize_terminal(120, 30)
        await until(pilot, lambda: timeline.cells_for is not None and timeline.cells_for[1] == timeline.chart_height)
    assert app.load_error is None and app.return_code in (None, 0) and not faults.log_path().exists()


async def test_the_frames_tables_fit_the_width_and_say_what_they_left_out():
    """At 80 columns the Op column gives way (said under the table) and the frames are cut in the middle, not
    scrolled off; widened, the same table shows the Op again with the cursor on its row; numbers sit right."""
    app = TraceApp([str(REAL)], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(pilot)
        await press_settled(pilot, "3")
        table = screen.query_one("#frames-peak", FrameTable)
        headers = [str(c.label) for c in table.columns.values()]
        assert headers == ["", "Frame", "Bytes", "Count", "Share"]
        for each in screen.query(FrameTable):  # both tables, every column on screen
            assert 0 < each.virtual_size.width <= each.size.width, each.id
        left_out = screen.query_one("#frames-peak-left-out", Static)
        assert left_out.display and str(left_out.content) == "Left out to fit: Op (a wider terminal shows it)"
        assert str(table.get_row_at(1)[2]).lstrip() == "161.21 MiB" and table.get_row_at(1)[2].justify == "right"
        await press_settled(pilot, "down", "down")
        await pilot.resize_terminal(200, 45)
        await until(pilot, lambda: "Op" in [str(c.label) for c in table.columns.values()], "the Op column back")
        assert table.cursor_row == 2 and not screen.query_one("#frames-peak-left-out", Static).display
        names = [str(table.get_row_at(k)[1]) for k in range(table.row_count)]
        assert "case_memory_snapshot (h200_capture.py:293)" in names  # whole at this width
        for each in screen.query(FrameTable):
            assert 0 < each.virtual_size.width <= each.size.width, each.id


async def test_the_frames_cursor_stays_on_screen_and_its_row_is_told_in_the_details():
    """At 80x24 the pane scrolls with the cursor (the tables are as tall as their rows); the details say what the
    highlighted frame's allocations add up to and where the largest was made (they kept a segment's before)."""
    app = TraceApp([str(REAL)], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(pilot)
        await press_settled(pilot, "3")
        assert details(screen).startswith("(allocated before the history)\n163.00 MiB in 8 allocations, 24.5%")
        pane = screen.query_one(SnapshotFrames)
        table = screen.query_one("#frames-peak", FrameTable)
        await press_settled(pilot, *["down"] * 13)  # the last row of the first table
        row = table.region.y + table.header_height + table.cursor_row - round(table.scroll_y)
        assert table.cursor_row == 13 and pane.scroll_y > 0
        assert pane.region.y <= row < pane.region.bottom  # on screen
        text = details(screen)
        assert text.startswith("case_memory_snapshot (h200_capture.py:292)") and "4 B in 1 allocation," in text
        assert "Its largest allocation was made at (innermost first):" in text
        await press_settled(pilot, "tab")  # the never-freed table
        assert "never freed" in details(screen).splitlines()[2]
        await press_settled(pilot, *["up"] * 3)
        await press_settled(pilot, "shift+tab", *["up"] * 13)
        assert table.cursor_row == 0 and pane.scroll_y == 0
    assert app.load_error is None


async def test_the_keys_move_zoom_and_jump_on_a_built_snapshot(tmp_path):
    path = write(tmp_path / "oom.pickle", fragmented().snapshot())
    app = TraceApp([str(path)], use_cache=False)
    async with app.run_test(size=(120, 35)) as pilot:
        screen = await opened(pilot)
        timeline = screen.query_one(SnapshotTimeline)
        assert "1 OOM (o)" in str(screen.query_one("#snap-head", Static).content)
        view = timeline.view
        await press_settled(pilot, "w")
        assert timeline.view is not None and view is not None and timeline.view.bucket < view.bucket
        await press_settled(pilot, "0", "o")
        assert timeline.cursor_entry() == 10  # the OOM entry: the memory the request met
        await press_settled(pilot, "down")  # the top of the stack at the OOM: the last 4 MB block made
        top = timeline.selected
        assert top != EMPTY and int(timeline.mem.allocs.size[top]) == 4 * MB
        await press_settled(pilot, "[")
        assert timeline.cursor_entry() == int(timeline.mem.allocs.alloc_entry[top])
        await press_settled(pilot, "f")
        assert "never freed" in details(screen)
        await press_settled(pilot, "2")
        segments = screen.query_one(SnapshotSegments)
        await until(pilot, lambda: segments.state is not None)
        assert len(segments.state.seg_addr) == 1
        await press_settled(pilot, "question_mark")  # the snapshot's own legend, on every view of it
        assert "allocations alive at each moment" in str(pilot.app.screen.query_one("#help-legend", Static).content)
        await press_settled(pilot, "escape")
    assert app.load_error is None


async def test_a_snapshot_without_history_opens_on_its_segments(tmp_path):
    path = write(tmp_path / "state.pickle", no_history().snapshot(history=False))
    app = TraceApp([str(path)], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(pilot)
        assert screen.has_class("narrow")  # the details under the views at 80 columns
        segments = screen.query_one(SnapshotSegments)
        await until(pilot, lambda: segments.state is not None and segments.has_focus)
        assert "1 segments, 20.00 MiB reserved, 5.00 MiB used" in segments.head()
        await press_settled(pilot, "1")
        assert "No history" in screen.query_one(SnapshotTimeline).render_line(0).text
    assert app.load_error is None


async def test_a_refused_pickle_ends_the_viewer_with_its_line(tmp_path):
    import os

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {tmp_path / 'ran'}",))

    bad = tmp_path / "evil.pickle"
    bad.write_bytes(pickle.dumps({"segments": [Payload()]}))
    app = TraceApp([str(bad)], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.load_error is not None or not app.is_running, "the load failed")
    assert isinstance(app.load_error, TraceError) and "refused" in str(app.load_error)
    assert not (tmp_path / "ran").exists()


def test_open_compare_refuses_snapshots(tmp_path, capsys):
    from tui.cli import main

    path = write(tmp_path / "a.pickle", fragmented().snapshot())
    assert main(["open", str(path), str(path), "--compare"]) == 2
    assert "tracetui diff A B says what grew" in capsys.readouterr().err


def two_devices() -> dict:
    """Device 0 with the leak, device 1 with the fragmented segment: one snapshot."""
    a, b = leak().snapshot(), Builder(device=1)
    for k in range(5):
        b.alloc(BASE + 4 * k * MB, 4 * MB, at(20 + k))
    b.segments[BASE] = {"address": BASE, "total_size": 20 * MB, "stream": 0}
    one = b.snapshot()
    return {
        **a,
        "segments": a["segments"] + one["segments"],
        "device_traces": [a["device_traces"][0], one["device_traces"][1]],
    }


async def test_g_shows_the_next_gpu(tmp_path):
    path = write(tmp_path / "two.pickle", two_devices())
    app = TraceApp([str(path)], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await opened(pilot)
        head = lambda: str(screen.query_one("#snap-head", Static).content)  # noqa: E731
        assert "cuda:0 of 2" in head() and "allocated 3.00 MiB" in head()
        await press_settled(pilot, "g")
        screen = await opened(pilot)
        assert "cuda:1 of 2" in head() and "allocated 20.00 MiB" in head()
        await press_settled(pilot, "g")
        assert "cuda:0 of 2" in head()
    assert app.load_error is None


def snapshot_keys() -> list[str]:
    """Every key the snapshot screen and its widgets answer to, and what a user presses besides."""
    from textual.binding import Binding

    from tui.app.bindings import _snapshot_classes

    keys = {
        k.strip() for c in _snapshot_classes() for b in c.BINDINGS if isinstance(b, Binding) for k in b.key.split(",")
    }
    return sorted(keys) + ["tab", "escape", "question_mark", "escape", "pageup", "pagedown", "enter", "ctrl+p", "down"]


@pytest.mark.parametrize("size", [(160, 45), (80, 24)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_a_random_key_walk_never_ends_the_snapshot_viewer(tmp_path, size):
    import random

    path = write(tmp_path / "two.pickle", two_devices())
    rng = random.Random(size[0])
    keys = [rng.choice(snapshot_keys()) for _ in range(80)]
    app = TraceApp([str(path)], use_cache=False)
    quits: list[int] = []
    app.exit = lambda *a, **k: quits.append(1)  # type: ignore[method-assign]  # q is walked, not obeyed
    async with app.run_test(size=size) as pilot:
        await opened(pilot)
        for k, key in enumerate(keys):
            await pilot.press(key)
            if k % 10 == 9:
                await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert app.is_running and app._exception is None, keys
    assert not faults.log_path().exists(), (keys, faults.log_path().read_text()[-3000:])


async def test_a_snapshot_without_times_has_an_axis_of_entries(tmp_path):
    doc = fragmented().snapshot()
    for e in doc["device_traces"][0]:
        del e["time_us"]
    app = TraceApp([str(write(tmp_path / "old.pickle", doc))], use_cache=False)
    async with app.run_test(size=(120, 35)) as pilot:
        screen = await opened(pilot)
        timeline = screen.query_one(SnapshotTimeline)
        assert timeline.status().startswith(" entry 6 ·") and "#1" in timeline._ruler(0)
        assert "11 entries (no times)" in str(screen.query_one("#snap-head", Static).content)
    assert app.load_error is None


async def test_the_palette_offers_the_snapshots_views(tmp_path):
    from textual.command import CommandList, CommandPalette

    app = TraceApp([str(write(tmp_path / "two.pickle", two_devices()))], use_cache=False)
    async with app.run_test(size=(120, 35)) as pilot:
        screen = await opened(pilot)
        await pilot.press("ctrl+p")
        await until(
            pilot, lambda: isinstance(app.screen, CommandPalette) and app.screen.query_one(CommandList).option_count > 4
        )
        titles = [str(o.prompt).split("\n")[0] for o in app.screen.query_one(CommandList).options]
        assert titles[:4] == [
            "Show the timeline (1)",
            "Show the segments (2)",
            "Show the frames (3)",
            "Show the next GPU (g)",
        ]
        await pilot.press("down", "enter")  # the segments
        await until(pilot, lambda: app.screen is screen and screen.query_one(SnapshotSegments).has_focus, "segments")
    assert app.load_error is None and not faults.log_path().exists()
