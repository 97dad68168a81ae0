"""The details panel's "your code" is the same whether the trace was parsed or read back from the cache.

With deep Python stacks the viewer hides the frames, so the timeline nests without them; the code stack
in the details comes from the nesting with the frames. On a fresh open the tables computed that nesting
on their way; on a cached open they are read back and nothing nested the frames, so "your code" was lost
(a CPU-only with_stack trace: no memory curves either, which nest them too).
"""

from __future__ import annotations

from conftest import SAMPLES, wait_for_main

from tui.app import TraceApp
from tui.model.analyses.results import Results
from tui.model.analysis import Analysis
from tui.model.loading import open_trace
from tui.screens.main import FRAME_LEVELS_SHOWN, MainScreen
from tui.views.planner import plan
from tui.views.registry import MAIN

SDPA = str(SAMPLES / "cpu" / "attn_sdpa_math.json.gz")  # CPU-only, with_stack, 15 frames deep: frames hidden
OP = "aten::scaled_dot_product_attention"


async def _your_code(path: str) -> list[str]:
    """The details' code stack of the first OP, in the viewer once its analyses are done."""
    app = TraceApp([path], use_cache=True)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        assert isinstance(screen, MainScreen) and screen.hide_python  # the trigger: frames hidden
        t = screen.analysis.trace
        assert t.store is not None  # opened through the cache
        screen.timeline.select(next(i for i in range(t.n) if t.name_of(i) == OP))
        await pilot.pause()
        details = screen.shown_details[0]
        assert details is not None and details.name == OP and details.self_ns is not None  # full details
        return list(details.stack)


async def test_your_code_survives_a_cached_open():
    fresh = await _your_code(SDPA)  # an empty cache: parsed, then kept
    cached = await _your_code(SDPA)  # read back from the cache entry
    assert fresh and fresh[-1].endswith(": attn")
    assert cached == fresh


def test_the_planner_nests_the_frames_when_the_timeline_hides_them():
    first = open_trace(SDPA).results
    first.code  # noqa: B018 - keeps the tables in the cache entry
    first.gpu_below  # noqa: B018
    results = open_trace(SDPA).results  # the cached open: tables read back
    assert results.frame_levels > FRAME_LEVELS_SHOWN
    jobs = plan(results, results.frameless, MAIN[0])
    assert (results, Analysis.nesting) in jobs
    for where, what in jobs:
        where.compute(what)
    assert results.ready(Results.nesting)
