"""The roofline in the ops and kernels tables and the details panel: per op, per kernel and per event."""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import msgspec
import numpy as np
import pytest
from conftest import SAMPLES, press_settled, wait_for_main

from tui.model import load_trace
from tui.model.analyses.details import launched_events
from tui.model.analyses.results import Results
from tui.model.analyses.roofline.achieved import kernel_achieved, op_achieved, roofline_at, row_achieved
from tui.model.analyses.roofline.points import Roofline, with_device
from tui.model.cats import BUSY_CATS

BERT = SAMPLES / "h100-bert-small.json.gz"  # shapes, kernels, an H100
TRAIN = SAMPLES / "a100-train-control.json.gz"  # 356 rows, memcpy and memset among the launches
CPU = SAMPLES / "cpu" / "linear_fwd.json.gz"  # shapes, no device activity


@cache
def results(path) -> Results:
    return Results(load_trace(path, use_cache=False))


def close(a: float | None, b: float | None, rel: float = 1e-9) -> bool:
    return a is not None and b is not None and math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


@pytest.mark.parametrize("path", [BERT, TRAIN], ids=lambda p: p.name)
def test_kernel_attribution_adds_up_to_the_modelled_total(path):
    a = results(path)
    r = a.roofline
    by_kernel = kernel_achieved(r)
    assert r.rows and by_kernel
    assert close(sum(k.flops for k in by_kernel.values()), sum(row.flops for row in r.rows))
    assert close(sum(k.bytes for k in by_kernel.values()), sum(row.bytes for row in r.rows))
    assert close(sum(k.device_us for k in by_kernel.values()), sum(row.device_us for row in r.rows), 1e-6)
    assert set(by_kernel) <= {k.name for k in a.kernels}  # every name is a row of the kernels table
    table = {k.name: k.total_us for k in a.kernels}
    assert all(k.device_us <= table[name] + 1e-6 for name, k in by_kernel.items())  # only the modelled launches


def test_a_kernel_that_is_all_of_its_calls_work_runs_at_their_rate():
    """BERT's vocabulary projection: one addmm, one cutlass GEMM kernel; the kernel has the op's FLOPs and % of roof."""
    r = results(BERT).roofline
    row = next(x for x in r.rows if x.name == "aten::addmm" and x.input_shapes.startswith("[[30522]"))
    index = r.rows.index(row)
    only = [s for s in r.attribution.kernels if s.row == index]
    assert len(only) == 1 and close(only[0].calls, 1.0)
    kernel = kernel_achieved(r)[only[0].kernel]
    assert "gemm" in only[0].kernel
    assert close(kernel.flops, row.flops) and close(kernel.bytes, row.bytes)
    assert close(kernel.tflops, row.tflops, 1e-6) and close(kernel.pct_of_roof, row.pct_of_roof, 1e-6)
    assert 28 < kernel.pct_of_roof < 30  # 4.4 GFLOP in 41.3 us on an H100: 107 TFLOP/s, memory-bound


@pytest.mark.parametrize("path", [BERT, TRAIN], ids=lambda p: p.name)
def test_per_op_values_agree_with_the_roofline_rows(path):
    r = results(path).roofline
    for by_shape in (False, True):
        achieved = op_achieved(r, by_shape)
        for key, got in achieved.items():
            rows = [x for x in r.rows if (x.name, x.input_shapes) == key or x.name == key]
            assert close(got.flops, sum(x.flops for x in rows))
            assert close(got.tflops, sum(x.flops for x in rows) / (sum(x.device_us for x in rows) * 1e6), 1e-6)
            roofed = [x for x in rows if x.pct_of_roof is not None]
            mean = sum(x.pct_of_roof * x.device_us for x in roofed) / sum(x.device_us for x in roofed)
            assert close(got.pct_of_roof, mean, 1e-6)  # the device-time-weighted mean of the rows'
            if len(rows) == 1:
                assert close(got.tflops, rows[0].tflops, 1e-6) and close(got.pct_of_roof, rows[0].pct_of_roof, 1e-6)
    assert len(op_achieved(r, True)) == len({(x.name, x.input_shapes) for x in r.rows})
    assert len(op_achieved(r)) < len(r.rows)  # TRAIN and BERT have ops with several shapes


def test_an_op_calls_details_are_its_share_of_its_row():
    a = results(BERT)
    r = a.roofline
    row = next(x for x in r.rows if x.name == "aten::addmm" and x.count > 1)
    got = roofline_at(r, row.example)
    assert got is not None and got.row == row and not got.launched
    assert close(got.achieved.flops, row.flops / row.count) and close(got.achieved.bytes, row.bytes / row.count)
    assert close(got.achieved.device_us, float(a.gpu_below[row.example]) / 1000)
    roof_per_call = row.pct_of_roof * row.device_us / 100 / row.count
    assert close(got.achieved.pct_of_roof, 100 * roof_per_call / got.achieved.device_us, 1e-6)


def test_device_work_shares_its_calls_work_by_duration():
    """Each kernel, memcpy or memset launched under a call (as the details panel lists them) has its share."""
    a = results(TRAIN)
    r = a.roofline
    several = 0
    for row in r.rows[:60]:
        work = launched_events(a, row.example).tolist()
        call = roofline_at(r, row.example)
        parts = [roofline_at(r, g) for g in work]
        assert work and call is not None and all(p is not None and p.launched and p.row == row for p in parts)
        for g, part in zip(work, parts, strict=True):
            assert close(part.achieved.device_us, float(a.trace.x.dur[g]) / 1000, 1e-6)
        assert close(sum(p.share for p in parts), 1.0, 1e-9)
        assert close(sum(p.achieved.flops for p in parts), call.achieved.flops, 1e-9)
        assert close(sum(p.achieved.bytes for p in parts), call.achieved.bytes, 1e-9)
        several += len(work) > 1
    assert several  # calls with more than one launch among them


def test_unmodelled_events_have_no_roofline():
    a = results(BERT)
    r = a.roofline
    names = a.trace.names
    step = next(i for i in range(a.trace.n) if names[a.trace.x.name[i]].startswith("ProfilerStep"))
    index_select = next(i for i in range(a.trace.n) if names[a.trace.x.name[i]] == "aten::index_select")
    assert roofline_at(r, step) is None and roofline_at(r, index_select) is None
    kernels = np.flatnonzero(np.isin(a.trace.x.cat, [int(c) for c in BUSY_CATS]))
    modelled = [k for k in kernels.tolist() if roofline_at(r, k) is not None]
    assert 0 < len(modelled) < len(kernels)  # index_select's kernel (not modelled) among them


def test_without_peaks_rates_stay_and_percentages_go():
    r = with_device(results(BERT).roofline, None)
    kernel = kernel_achieved(r)
    assert all(k.pct_of_roof is None and k.tflops is not None for k in kernel.values())
    assert all(o.pct_of_roof is None for o in op_achieved(r).values())
    at = roofline_at(r, r.rows[0].example)
    assert at is not None and at.achieved.pct_of_roof is None and at.achieved.tflops


def test_a_cpu_capture_has_op_details_and_no_kernels():
    r = results(CPU).roofline
    assert r.on_cpu and r.rows and kernel_achieved(r) == {}
    got = roofline_at(r, r.rows[0].example)
    assert got is not None and close(got.achieved.flops, r.rows[0].flops / r.rows[0].count)


def test_the_attribution_survives_the_cache():
    """Roofline is a stored result: msgpack and back, the lookups answer the same."""
    r = results(BERT).roofline
    back = msgspec.msgpack.Decoder(Roofline).decode(msgspec.msgpack.encode(r))
    kernels = np.frombuffer(r.attribution.work, np.int64)
    for e in [row.example for row in r.rows] + kernels[:10].tolist():
        assert roofline_at(back, int(e)) == roofline_at(r, int(e))
    assert kernel_achieved(back) == kernel_achieved(r)
    assert row_achieved(back.rows[0]) == row_achieved(r.rows[0])


def _text(renderable) -> str:
    from rich.console import Console

    console = Console(width=400, record=True, file=open("/dev/null", "w"))
    console.print(renderable)
    return console.export_text()


async def test_the_tables_and_the_details_panel_show_the_roofline():
    from tui.app import TraceApp
    from tui.widgets.kernels_view import KernelsView
    from tui.widgets.ops_view import OpsView

    app = TraceApp([str(BERT)], use_cache=False)
    async with app.run_test(size=(200, 45)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "3")
        ops = screen.query_one(OpsView)
        headers = [c.header for c in ops.columns()]
        assert headers[-2:] == ["TFLOP/s", "% of roof"]
        addmm = next(row for row in ops.source_rows() if row.name == "aten::addmm")
        tflops, pct = (c.text(addmm, ops.context(), 100) for c in ops.columns()[-2:])
        assert tflops == "40.7" and pct == "11.6%"  # 8.1 GFLOP of 26 addmm calls in 198 us of device time on an H100
        await press_settled(pilot, "4")
        kernels = screen.query_one(KernelsView)
        assert [c.header for c in kernels.columns()][-2:] == ["TFLOP/s", "% of roof"]
        gemm = next(k for k in kernels.source_rows() if "s16816gemm_bf16" in k.name)
        assert kernels.columns()[-1].text(gemm, kernels.context(), 100) == "29.0%"
        assert kernels.fitted is not None and kernels.fitted.dropped[:2] == ["% of roof", "TFLOP/s"]  # first to go
        await press_settled(pilot, "e")  # every column, in full
        assert kernels.fitted is not None and kernels.fitted.headers[-2:] == ["TFLOP/s", "% of roof"]
        await pilot.press("1")
        screen.timeline.select(gemm.example)
        await pilot.pause()
        text = _text(screen.query_one("#details-body").content)
        assert "roofline" in text and "29.0% of roof (memory-bound, bf16)" in text and "4.4 GFLOP" in text
        assert "of the aten::addmm call that launched it" in text


async def test_a_narrow_terminal_drops_the_roofline_columns_first():
    from tui.app import TraceApp
    from tui.widgets.ops_view import OpsView

    app = TraceApp([str(BERT)], use_cache=False)
    async with app.run_test(size=(100, 35)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "3")
        ops = screen.query_one(OpsView)
        assert ops.fitted is not None and {"TFLOP/s", "% of roof"} <= set(ops.fitted.dropped)
        priority = {c.header: c.priority for c in ops.columns()}
        dropped = ops.fitted.dropped
        first = max(dropped.index("% of roof"), dropped.index("TFLOP/s"))
        assert dropped.index("% of roof") < dropped.index("TFLOP/s")  # the rightmost among equals first
        assert all(priority[h] >= 4 for h in dropped[:first])  # only memory columns (5) and Self Mem (4) go earlier
        assert any(priority[h] < 4 for h in dropped[first + 1 :])  # 100 columns: torch's own go too, after them


@pytest.mark.parametrize("view_key", ["3", "4"], ids=["ops", "kernels"])
async def test_r_and_R_sort_by_the_roof_columns_and_show_them_at_80_columns(view_key):
    """GIVEN BERT on its H100 at 80x24, where the TFLOP/s and % of roof columns are the first left out WHEN R, then
    r, is pressed in the ops or kernels view THEN the rows are ordered by the row's achieved TFLOP/s, then by its %
    of roof, the most first and the rows without modelled work last; the column sorted by is shown, the status says
    so, and the key again turns the order round."""
    from conftest import screen_text

    from tui.app import TraceApp
    from tui.widgets.rows_view import RowsView

    app = TraceApp([str(BERT)], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, view_key)
        view: Any = screen.pane(screen.view_name).query_one(RowsView)  # OpsView or KernelsView: achieved_of
        assert view.fitted is not None and "% of roof" not in view.fitted.headers  # no room for it unsorted
        for key, attr, header, words in (
            ("R", "tflops", "TFLOP/s", "achieved FLOP/s"),
            ("r", "pct_of_roof", "% of roof", "% of roof"),
        ):
            await press_settled(pilot, key)
            values = [getattr(view.achieved_of(r), attr, None) for r in view.shown]
            known = [v for v in values if v is not None]
            assert known and values == sorted(known, reverse=True) + [None] * (len(values) - len(known))
            assert header in view.fitted.headers and header in screen_text(app)
            assert f"sorted by {words}" in view.status()
        await press_settled(pilot, "r")
        values = [v.pct_of_roof for r in view.shown if (v := view.achieved_of(r)) and v.pct_of_roof is not None]
        assert values == sorted(values) and "% of roof, reversed" in view.status()


MI250 = SAMPLES / "mi250-rocm-train.json.gz"  # kernels at 0.0335 to 13.0 GFLOP/s


async def test_the_kernels_rate_column_reads_in_one_unit_at_80_columns():
    """GIVEN the MI250 training step, whose fastest kernel runs at 13.0 GFLOP/s and its slowest at 33.5 kFLOP/s, at 80x24
    WHEN R sorts the kernels view by achieved FLOP/s THEN the column is GFLOP/s, named once in its header, every cell a
    plain number (13.0, 0.0335; it mixed "0.0130" with "6.72 GFLOP/s" and "114 MFLOP/s", 12 cells wide), so the
    kernels keep their calls, total and average beside their names; the status names the sort by its words."""
    from conftest import screen_text

    from tui.app import TraceApp
    from tui.tables.rates import TINY
    from tui.widgets.kernels_view import KernelsView

    app = TraceApp([str(MI250)], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "4", "R")
        view = screen.query_one(KernelsView)
        fitted = view.fitted
        assert fitted is not None and fitted.headers[1:] == ["# of Calls", "Total", "Avg", "GFLOP/s"]
        rates = [fitted.cells[k][-1] for k in view.table_widget.order]  # as shown: the fastest first
        assert [r for r in rates if r != "-"][:2] == ["13.0", "6.72"] and "0.0335" in rates
        assert all(r in ("-", TINY) or float(r) > 0 for r in rates) and max(map(len, rates)) <= len("GFLOP/s")
        lines = screen_text(app).splitlines()
        assert any(line.rstrip().endswith("GFLOP/s") and line.startswith("Name") for line in lines)
        assert "sorted by achieved FLOP/s" in view.status()


async def test_a_trace_without_a_roofline_offers_no_roof_sort():
    """A CPU-only trace without shapes has no roof columns: r and R are not offered, and pressing them sorts nothing."""
    from tui.app import TraceApp
    from tui.widgets.ops_view import OpsView

    app = TraceApp([str(SAMPLES / "cpu-only-gloo.json.gz")], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "3")
        view = screen.query_one(OpsView)
        before = (view.sort_key, [r.name for r in view.shown])
        assert view.check_action("sort", ("tflops",)) is False and view.check_action("sort", ("roof",)) is False
        await press_settled(pilot, "R", "r")
        assert (view.sort_key, [r.name for r in view.shown]) == before and "% of roof" not in view.status()
