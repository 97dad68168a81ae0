"""The sequences view (9): the recurring kernel sequences, and Enter marking one's occurrences on the timeline as a
search marks its matches."""

from __future__ import annotations

from contextlib import asynccontextmanager

import numpy as np
import pytest
from conftest import SAMPLES, SHARED, press_settled, screen_text, until, wait_for_main

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
        timeline = screen.timeline
        x = a.trace.x
        stops = timeline.matches
        assert stops.tolist() == sorted(layer.occurrences, key=lambda e: x.ts[e])  # one stop per occurrence: its op
        assert len(stops) == 4 and timeline.selected == int(stops[0])
        marked = np.flatnonzero(timeline.match_mask)
        assert sorted(marked.tolist()) == sorted(layer.occurrences + layer.activities)
        assert len(marked) == 4 * (1 + 12)  # each layer's module frame and its 12 kernels, all highlighted
        seen = [timeline.selected]
        for _ in range(4):
            await press_settled(pilot, "n")
            seen.append(timeline.selected)
        assert seen == [*stops.tolist(), int(stops[0])]  # n: the next occurrence, and round to the first


async def test_a_graphs_repeats_are_marked_one_stop_a_layer():
    """SGLang's decode replays 48 layers of 14 kernels under one cudaGraphLaunch: Enter on its row stops n and N at
    each layer's first kernel, all 672 highlighted; the status says how the replay is counted."""
    path = SHARED / "tracelens-2026-06-b300-sglang-qwen3moe-decode-cudagraph"
    if not path.is_dir():
        pytest.skip("the shared traces are not here")
    app = TraceApp([str(next(path.glob("*.json.gz")))], use_cache=False)
    async with app.run_test(size=(140, 36)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "9")
        view = screen.query_one(SequencesView)
        assert "1 graph launch replayed 676 device activities" in view.rows_said()
        (row,) = view.shown
        await press_settled(pilot, "enter")
        await until(pilot, lambda: screen.view_name == "timeline", "the timeline shown")
        assert len(screen.timeline.matches) == 48 and int(screen.timeline.match_mask.sum()) == 48 * 14


@asynccontextmanager
async def _training_sequences():
    """The sequences view of a100-train-control at 140x36, as a user reaches it (key 9): (the pilot, the view)."""
    app = TraceApp([str(SAMPLES / "a100-train-control.json.gz")], use_cache=False)
    async with app.run_test(size=(140, 36)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "9")
        yield pilot, screen.query_one(SequencesView)


async def test_the_saving_columns_sort_most_first_as_every_figure_does():
    """GIVEN a training step whose sequences save different amounts (a100-train-control) WHEN f, then F, is pressed
    in the sequences view THEN the rows are ordered by Fused saves, then by From launches, the most first and the
    unsolved rows last, and the status says so; the same key again turns the order round."""
    async with _training_sequences() as (pilot, view):
        by_device = [r.ranked_device_ns for r in view.shown]

        def most_first(values: list) -> list:
            return sorted((v for v in values if v is not None), reverse=True) + [v for v in values if v is None]

        for key, attr, words in (("f", "saving_ns", "fused saving"), ("F", "launch_saving_ns", "saving from launches")):
            await press_settled(pilot, key)
            values = [getattr(r, attr) for r in view.shown]
            assert values == most_first(values) and f"sorted by {words}" in view.status()
            assert [r.ranked_device_ns for r in view.shown] != by_device  # the order moved: not the device sort
        await press_settled(pilot, "F")
        values = [r.launch_saving_ns for r in view.shown if r.launch_saving_ns is not None]
        assert values == sorted(values) and "sorted by saving from launches, reversed" in view.status()


async def test_k_sorts_by_the_kernel_count_most_first_and_again_the_other_way():
    """GIVEN a training step's 50 sequences, 3 to 43 kernels long (a100-train-control) WHEN k is pressed THEN the
    rows are ordered by their Kernels column, the longest first, and the status says so; k again turns it round."""
    async with _training_sequences() as (pilot, view):
        lengths = [r.length for r in view.shown]
        assert lengths != sorted(lengths, reverse=True)  # the device sort does not already order them
        await press_settled(pilot, "k")
        assert [r.length for r in view.shown] == sorted(lengths, reverse=True)
        assert "sorted by kernels in the sequence" in view.status()
        await press_settled(pilot, "k")
        assert [r.length for r in view.shown] == sorted(
            lengths
        ) and "kernels in the sequence, reversed" in view.status()


async def test_at_80x24_the_sequence_column_stays_under_every_sort():
    """GIVEN the sequences view at 80x24 WHEN each sort key is pressed THEN the Sequence column (what the table is
    about) and the column sorted by are shown, the count or total giving way instead (sorted by Mean or From
    launches, the sorted column made one more column never dropped, and the rightmost such, Sequence, gave way)."""
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "9")
        view = screen.query_one(SequencesView)
        headers = {c.sort: c.header for c in view.columns() if c.sort}
        for binding, (key,) in view._sort_bindings():
            await press_settled(pilot, binding.key)
            assert view.sort_key == key and view.fitted is not None
            shown = view.fitted.headers
            assert "Sequence" in shown and headers[key] in shown and "Fused saves" in shown, (key, shown)
            assert "Sequence" in screen_text(app)
