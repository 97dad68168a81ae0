"""The sequences view (9): the recurring kernel sequences, and Enter marking one's occurrences on the timeline as a
search marks its matches."""

from __future__ import annotations

import numpy as np
from conftest import SAMPLES, press_settled, until, wait_for_main

from tui.app import TraceApp
from tui.model.analyses.fusion import sequence_rows
from tui.widgets.sequences_view import SequencesView

BERT = str(SAMPLES / "h100-bert-small.json.gz")


async def test_enter_marks_a_sequences_occurrences_on_the_timeline():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(140, 36)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "9")
        view = screen.query_one(SequencesView)
        a = screen.analysis
        expected = sequence_rows(a, a.sequences, 3, 50, "device")
        assert [(r.op, r.count, r.kernels) for r in view.shown] == [(r.op, r.count, r.kernels) for r in expected]
        layer = view.shown[0]
        assert (layer.op, layer.count) == ("nn.Module: BertLayer", 4)  # BERT-small's 4 layers, one step
        await press_settled(pilot, "enter")
        await until(pilot, lambda: screen.view_name == "timeline", "the timeline shown")
        marked = screen.timeline.matches
        assert sorted(marked.tolist()) == sorted(layer.occurrences + layer.activities)
        assert len(marked) == 4 * (1 + 12)  # each layer's module frame and its 12 kernels
        x = a.trace.x
        assert np.all(np.diff(x.ts[marked]) >= 0)  # in time order: n and N walk them
        assert screen.timeline.selected == int(marked[0])
