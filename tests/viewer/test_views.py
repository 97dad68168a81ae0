"""The registry of views: one entry drives the tabs, keys, palette, focus and help; results are asked for by descriptor."""

from __future__ import annotations

import pytest
from conftest import SAMPLES, until, wait_for_main

from tui.app import TraceApp
from tui.model.analyses.results import Results
from tui.model.analysis import PHASES, Analysis, derived
from tui.model.load import load_trace
from tui.screens.main import MainScreen
from tui.views.planner import plan
from tui.views.registry import COMPARE, MAIN, key_bindings

BERT = str(SAMPLES / "h100-bert-small.json.gz")


@pytest.mark.parametrize("specs", [MAIN, COMPARE], ids=["main", "compare"])
def test_each_view_has_one_name_one_key_and_public_results(specs):
    assert len({s.name for s in specs}) == len(specs) and len({s.key for s in specs}) == len(specs)
    assert [s.key for s in specs] == [str(k) for k in range(1, len(specs) + 1)]
    for spec in specs:
        assert spec.title and spec.about
        for result in spec.needs:
            assert isinstance(result, derived) and not result.name.startswith("_"), (spec.name, result)
            assert getattr(Results, result.name) is result and result.phase in PHASES


def test_the_number_keys_come_from_the_registry():
    ids = [b.id for b in key_bindings(MAIN)]
    assert ids == [f"view.{s.name}" for s in MAIN]
    assert {b.id for b in MainScreen.BINDINGS} >= set(ids)


def test_a_result_is_asked_for_by_its_descriptor_never_by_a_string():
    a = Results(load_trace(BERT, use_cache=False))
    with pytest.raises(TypeError, match="descriptor"):
        a.ready("kernels")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="has no result"):
        a.frameless.ready(Results.kernels)  # the nesting without frames holds no tables
    assert not a.ready(Results.kernels) and a.peek(Results.kernels) is None
    a.compute(Results.kernels)
    assert a.ready(Results.kernels) and a.peek(Results.kernels) is a.kernels


def test_the_planner_orders_by_phase_and_puts_the_first_view_first():
    a = Results(load_trace(BERT, use_cache=False))
    jobs = plan(a, a, next(s for s in MAIN if s.name == "code"))
    phases = [PHASES.index(r.phase) for _, r in jobs]
    assert phases == sorted(phases)
    aggregate = [r for _, r in jobs if r.phase == "aggregate"]
    assert aggregate[0] is Results.code  # the view shown first gets its table first
    wanted = {r for s in MAIN for r in s.needs}
    assert wanted <= {r for _, r in jobs}
    assert len(jobs) == len({(id(src), r.name) for src, r in jobs})  # each result once per nesting
    frameless = plan(a, a.frameless, MAIN[0])
    assert (a.frameless, Analysis.child_index) in frameless and (a, Analysis.gpu_below) in frameless


async def test_the_tabs_are_the_registry():
    from textual.widgets import Tab

    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        titles = [str(t.label) for t in screen.query(Tab)]
        assert titles == [f"{s.key} {s.title}" for s in MAIN]
        for spec in MAIN:
            await pilot.press(spec.key)
            await pilot.pause()
            assert screen.active_view == spec.name
            # beside the views that have it, the panel or (not opened there: Enter opens it) a line naming the selection
            shown = screen.details.display or screen.query_one("SelectionLine").display
            assert shown == spec.details and screen.details.display == (spec.name in screen.details_open)


async def test_the_compare_screen_shows_its_registry_tabs():
    from textual.widgets import Tab

    from tui.screens.compare import CompareScreen

    pair = [str(SAMPLES / "cpu" / f"matmul_add_64_warm_{k}.json.gz") for k in ("eager", "compiled")]
    app = TraceApp(pair, use_cache=False, compare=True)
    async with app.run_test(size=(120, 35)) as pilot:
        screen = await wait_for_main(pilot)
        assert isinstance(screen, CompareScreen)
        assert [str(t.label) for t in screen.query(Tab)] == [f"{s.key} {s.title}" for s in COMPARE]
        await pilot.press("3")
        await pilot.pause()
        assert screen.query_one("TabbedContent").active == "ops"


async def test_the_palette_switches_between_the_captures_of_a_folder():
    from pathlib import Path

    from tui.model.load.folder import list_captures

    folder = Path(__file__).parents[1] / "data" / "tb-repeat2"
    newest, older = list_captures(folder)[:2]
    app = TraceApp([str(newest)], use_cache=False)
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for_main(pilot)
        assert older in app.captures
        app.open_capture(older)
        screen = await wait_for_main(pilot)
        assert isinstance(screen, MainScreen) and screen.title_text == str(older)


async def test_a_settled_trace_is_out_of_the_collectors_sight_until_the_app_ends():
    """Full collections walked the whole loaded trace on random keys (30-55 ms on 1 GB): once the background
    analyses are done, what is alive is frozen; when the app ends it is handed back."""
    import gc

    gc.unfreeze()
    app = TraceApp([str(SAMPLES / "h100-bert-small.json.gz")], use_cache=False)
    async with app.run_test(size=(120, 35)) as pilot:
        await wait_for_main(pilot)
        # the analyses' worker freezes as its last step
        await until(pilot, lambda: gc.get_freeze_count() > 0, "what is alive frozen")
    assert gc.get_freeze_count() == 0
