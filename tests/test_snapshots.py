"""A few deterministic SVG snapshots of the app on a small real trace."""

from __future__ import annotations

from conftest import SAMPLES, wait_for_main

from tui.app import TraceApp
from tui.screens.main import MainScreen

MOE = str(SAMPLES / "b300-moe-small.json.gz")


async def _loaded(pilot) -> None:
    assert isinstance(await wait_for_main(pilot), MainScreen)


def _app() -> TraceApp:
    return TraceApp([MOE], use_cache=False)


def test_timeline_snapshot(snap_compare):
    assert snap_compare(_app(), terminal_size=(120, 32), run_before=_loaded)


def test_timeline_selection_snapshot(snap_compare):
    async def select(pilot):
        await _loaded(pilot)
        await pilot.press("l", "l", "j")

    assert snap_compare(_app(), terminal_size=(120, 32), run_before=select)


def test_ops_snapshot(snap_compare):
    async def ops(pilot):
        await _loaded(pilot)
        await pilot.press("3")
        await pilot.app.workers.wait_for_complete()  # the table is fitted to the width in a worker
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=(140, 30), run_before=ops)


def test_overview_narrow_snapshot(snap_compare):
    assert snap_compare(_app(), terminal_size=(80, 24), run_before=_loaded, press=["5"])
