"""Enter on a row of the ops grouped by shape highlights that shape's calls on the timeline, not every call of the op
(it searched the op's name alone)."""

from __future__ import annotations

from collections import Counter

from conftest import SAMPLES, until, wait_for_main

from tui.app import TraceApp
from tui.model.analyses.ops import shape_label
from tui.widgets.ops_view import OpsView


async def test_enter_on_a_shape_row_highlights_that_shapes_calls():
    app = TraceApp([str(SAMPLES / "h100-bert-small.json.gz")], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        await pilot.press("3")
        await until(pilot, lambda: bool(screen.query(OpsView)) and bool(screen.query_one(OpsView).shown), "the ops")
        ops = screen.query_one(OpsView)
        await pilot.press("b")
        await until(pilot, lambda: ops.by_shape and bool(ops.shown), "grouped by shape")
        per_name = Counter(r.name for r in ops.shown if not r.is_device)
        k = next(i for i, r in enumerate(ops.shown) if not r.is_device and per_name[r.name] > 1)  # an op at 2+ shapes
        row = ops.shown[k]
        ops.table_widget.move_cursor(k)
        await pilot.press("enter")
        t = screen.timeline
        await until(pilot, lambda: screen.active_view == "timeline" and len(t.matches) > 0, "the shape's calls")
        trace = screen.analysis.trace
        names = {trace.names[trace.x.name[e]] for e in t.matches.tolist()}
        shapes = {shape_label(trace.shapes[s]) if s >= 0 else "[]" for s in trace.x.shape[t.matches].tolist()}
        assert names == {row.name} and shapes == {row.input_shapes}
        assert len(t.matches) == row.count  # every call at that shape, and no other
