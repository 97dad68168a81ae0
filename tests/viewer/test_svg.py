"""A few deterministic SVG snapshots of the app on a small real trace."""

from __future__ import annotations

import pytest
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


# ---- every view at 80x24, the size a laptop's split terminal gives ----------------------------------------


@pytest.fixture
def legend_seen(isolated_cache):
    """The first-open legend was read: the 80x24 snapshots show the view, not the toast over it."""
    from tui.app.keymap import SEEN, config_dir

    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / SEEN).touch()


BERT = str(SAMPLES / "h100-bert-small.json.gz")  # with stacks, for the code view


async def _settled_on(pilot, *keys: str) -> None:
    await _loaded(pilot)
    await pilot.press(*keys)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def _at_80x24(snap_compare, *keys: str, trace: str = MOE) -> bool:  # with legend_seen
    async def run_before(pilot):
        await _settled_on(pilot, *keys)

    return snap_compare(TraceApp([trace], use_cache=False), terminal_size=(80, 24), run_before=run_before)


def test_timeline_80x24_snapshot(snap_compare, legend_seen):
    assert _at_80x24(snap_compare, "l", "l", "j")


def test_timeline_mark_and_details_80x24_snapshot(snap_compare, legend_seen):
    assert _at_80x24(snap_compare, "l", "l", "k", "m")  # six lane rows, the range's numbers, the details


def test_timeline_selection_line_80x24_snapshot(snap_compare, legend_seen):
    assert _at_80x24(snap_compare, "l", "l", "j", "escape")  # the details closed: one line names the selection


def test_tree_80x24_snapshot(snap_compare, legend_seen):
    assert _at_80x24(snap_compare, "2")


def test_ops_80x24_snapshot(snap_compare, legend_seen):
    assert _at_80x24(snap_compare, "3")


def test_kernels_80x24_snapshot(snap_compare, legend_seen):
    assert _at_80x24(snap_compare, "4", trace=BERT)  # sibling elementwise kernels told apart


def test_sequences_80x24_snapshot(snap_compare, legend_seen):
    assert _at_80x24(snap_compare, "9", trace=BERT)  # BERT-small's layer and its parts, what fusing each saves


def test_code_80x24_snapshot(snap_compare, legend_seen):
    assert _at_80x24(snap_compare, "6", trace=BERT)  # eight table rows, the icicle below


def test_roofline_80x24_snapshot(snap_compare, legend_seen):
    assert _at_80x24(snap_compare, "7")


def test_critical_path_80x24_snapshot(snap_compare, legend_seen):
    assert _at_80x24(snap_compare, "8")  # the breakdown's bars, then the path to walk
