"""Lane summaries and the viewport arithmetic: pure model functions, no Textual."""

from __future__ import annotations

import numpy as np
from conftest import SAMPLES, X, write_trace

from tui.model import load_trace
from tui.model.analyses.results import Results
from tui.model.view.lanes import BUSY, EMPTY, LaneIndex, lane_cells, layout_lines, quantize
from tui.model.view.viewport import fit, pan, zoom


def _lanes(tmp_path, events):
    return LaneIndex(Results(load_trace(write_trace(tmp_path / "t.json", events), use_cache=False)))


def test_cells_empty_single_and_busy(tmp_path):
    # one row of three kernels: [0,8) [8,9) [9,10) us, then a gap, then [20,36) us
    events = [
        X("k", 0, 8, cat="kernel", pid=0, tid=7),
        X("a", 8, 1, cat="kernel", pid=0, tid=7),
        X("b", 9, 1, cat="kernel", pid=0, tid=7),
        X("big", 20, 16, cat="kernel", pid=0, tid=7),
    ]
    lanes = _lanes(tmp_path, events)
    row = next(iter(lanes.rows.values()))
    t0 = lanes.t_min
    cells = lane_cells(row, t0, 4_000, 10)  # 4 us per cell, 40 us shown
    assert cells.event[:2].tolist() == [0, 0]  # the 8 us kernel fills two cells
    assert cells.event[2] == BUSY and cells.count[2] == 2  # two 1 us kernels share cell 2: merged, not one of them
    assert cells.cover[2] == 0.5
    assert cells.event[3] == EMPTY and cells.event[4] == EMPTY  # the gap is visibly empty
    assert cells.event[5:9].tolist() == [3, 3, 3, 3]


def test_partial_cells_give_eighth_block_fractions(tmp_path):
    lanes = _lanes(tmp_path, [X("k", 0, 10, cat="kernel", pid=0, tid=7)])
    row = lanes.row(0, 0)
    cells = lane_cells(row, lanes.t_min - 2_000, 8_000, 2)  # cells [-2, 6) and [6, 14) us; the event is [0, 10)
    assert cells.head[0] == 0.25 and cells.tail[0] == 0  # starts 2/8 into cell 0
    assert cells.head[1] == 0 and cells.tail[1] == 0.5  # ends 4/8 before the end of cell 1


def test_cell_cost_depends_on_width_not_events():
    a = Results(load_trace(SAMPLES / "a100-train-control.json.gz"))
    lanes = LaneIndex(a)
    row = max(lanes.rows.values(), key=lambda r: len(r.events))
    bucket = quantize(lanes.t_max - lanes.t_min, 100)
    cells = lane_cells(row, lanes.t_min, bucket, 100)
    assert len(cells.event) == 100 and len(row.events) > 1000
    assert lane_cells(row, lanes.t_min, bucket, 100) is cells  # cached


def test_layout_puts_gpu_streams_first_and_collapses(tmp_path):
    events = [X("op", 0, 10, pid=5, tid=5), X("child", 1, 2, pid=5, tid=5), X("k", 3, 1, cat="kernel", pid=0, tid=7)]
    lanes = _lanes(tmp_path, events)
    lines = layout_lines(lanes)
    kinds = [(line.kind, line.label) for line in lines]
    assert kinds[0][0] == "process" and kinds[1] == ("row", "GPU 0 stream 7")
    assert [line.depth for line in lines if line.label == "" or line.kind == "row"][-2:] == [0, 1]
    cpu_track = next(t.id for t in lanes.analysis.trace.tracks if t.pid == 5)
    assert len(layout_lines(lanes, frozenset({cpu_track}))) == len(lines) - 1


def test_quantize_and_zoom_keep_powers_of_two_and_the_anchor():
    assert quantize(1000, 10) == 112 and quantize(1, 10) == 1 and quantize(30, 10) == 3  # 112 = 7 * 16
    for span in (1000, 12345, 10**9, 7 * 10**10):
        b = quantize(span, 100)
        assert b * 100 >= span and b * 100 < 1.34 * span + 400  # a fit wastes little of the screen
    v = fit(1_000_000, 2_000_000, 100)
    assert v.t0 % v.bucket == 0
    assert v.t0 <= 1_000_000 and v.t1 >= 2_000_000
    anchor = 1_500_000
    z = zoom(v, anchor, -1)
    assert z.bucket == v.bucket // 2 and abs(z.col_of(anchor) - v.col_of(anchor)) <= 1
    assert zoom(z, anchor, 1).bucket == v.bucket
    assert pan(v, 3).t0 == v.t0 + 3 * v.bucket


def test_find_returns_the_event_under_a_time(tmp_path):
    lanes = _lanes(tmp_path, [X("a", 0, 5, cat="kernel", pid=0, tid=7), X("b", 10, 5, cat="kernel", pid=0, tid=7)])
    t0 = lanes.t_min
    assert lanes.find(0, 0, t0 + 12_000) == 1
    assert lanes.find(0, 0, t0 + 7_000) == -1
    assert np.array_equal(lanes.row(0, 0).events, [0, 1])


def test_icicle_lays_children_out_by_their_share_widest_first():
    from tui.model.analyses.code import FrameTree
    from tui.model.view.icicle import ALL, Icicle

    # main (91) -> model (60), data (30), tiny (1), speck (0); model -> layer (50)
    names = ["main", "data", "model", "tiny", "layer", "speck"]
    tree = FrameTree([-1, 0, 0, 0, 2, 0], names, [1] * 6, [100] * 6, [91, 30, 60, 1, 50, 0])
    ice = Icicle(tree)
    rows = [
        [(s.start, s.end, names[s.node] if s.node >= 0 else "all") for s in row] for row in ice.rows(ALL, 91, "device")
    ]
    assert rows[0] == [(0, 91, "all")] and rows[1] == [(0, 91, "main")]
    assert rows[2] == [(0, 60, "model"), (60, 90, "data"), (90, 91, "tiny")]  # speck has no time: no column
    assert rows[3] == [(0, 50, "layer")]
    zoomed = ice.rows(2, 90, "device")
    assert [(s.start, s.end) for s in zoomed[1]] == [(0, 75)]  # layer is 50/60 of model
