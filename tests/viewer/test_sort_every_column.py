"""Every number a user sees in the ops, kernels and critical path tables sorts by a key: the most first, ties in the
table's own order, rows without a value ("-") last; the column sorted by is shown at 80 columns."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from conftest import SAMPLES, press_settled, wait_for_main

from tui.app import TraceApp
from tui.widgets.critical_view import CriticalPathTable
from tui.widgets.kernels_view import KernelsView
from tui.widgets.ops_view import OpsView
from tui.widgets.rows_view import RowsView

BERT = str(SAMPLES / "h100-bert-small.json.gz")  # memory recorded (CPU and CUDA, frees among it); a memcpy: no args
GRAPHS = str(SAMPLES / "v100-cudagraph-test.json.gz")  # kernels replayed from graphs: no launch call, no latency

UNITS = {"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "us": 1, "ms": 1e3, "s": 1e6, "%": 1}
TEXT = {"Kind", "Role", "Runs on", "Grid", "Block", "Bound by", "Input Shapes"}  # words, not numbers


def number(cell: str) -> float | None:
    """What a cell says as a number ("27.41 MiB", "-19.23 MiB", "12.627us", "48.4%", "231424"); None for "-"."""
    if cell.strip() == "-":
        return None
    found = re.fullmatch(r"\s*(-?[\d,.]+)\s*([A-Za-z%]*)\s*", cell)
    assert found, cell
    return float(found.group(1).replace(",", "")) * UNITS[found.group(2)]


def shown(view: RowsView, header: str) -> list[str]:
    """The column's cells as the table shows them, top to bottom."""
    table = view.table_widget
    col = list(table.source.headers).index(header)
    return [table.source.cell(k, col) for k in table.order]


def assert_most_first(view: RowsView, header: str, key: str) -> None:
    """The column reads the most first and "-" last, with ties in the rows' own order (a stable sort)."""
    values = [number(c) for c in shown(view, header)]
    known = [v for v in values if v is not None]
    assert len(set(known)) > 1, (header, values)  # there is an order to check
    assert values == known + [None] * (len(values) - len(known)), (header, values)
    assert all(a >= b for a, b in pairwise(known)), (header, values)
    spec, order = view.SORTS[key], view.table_widget.order
    for a, b in pairwise(order):
        if spec.value(view.rows[a]) == spec.value(view.rows[b]):
            assert a < b, (header, view.rows[a].name, view.rows[b].name)


async def sorts(pilot, view: RowsView, cases: list[tuple[str, str, str, bool]]) -> None:
    """Press each key at 80x24: the rows are ordered by its column, which is shown, and the line says so."""
    for letter, header, words, blank in cases:
        await press_settled(pilot, letter)
        key = view.sort_key
        assert view.fitted is not None and header in view.fitted.headers, (letter, view.fitted and view.fitted.headers)
        assert f"sorted by {words} ·" in view.status() and not view.reversed
        assert_most_first(view, header, key)
        assert ("-" in [c.strip() for c in shown(view, header)]) == blank, header  # the "-" rows, where there are


def every_number_sorts(view: RowsView) -> None:
    """Each column of numbers the view has names a sort key it offers."""
    for c in view.columns():
        if c.name or c.header in TEXT:
            continue
        assert c.sort in view.SORTS and view.check_action("sort", (c.sort,)), c.header


@pytest.mark.parametrize(
    "path, cases",
    [
        (
            BERT,
            [
                ("E", "Regs", "registers per thread", True),
                ("M", "Shared mem", "shared memory", True),
                ("O", "Occupancy %", "estimated occupancy", True),
                ("L", "Launch→start p95", "launch latency p95", False),
            ],
        ),
        (GRAPHS, [("L", "Launch→start p95", "launch latency p95", True)]),
    ],
    ids=["bert", "graphs"],
)
async def test_the_kernels_sort_by_their_footprint_and_latency_tail(path, cases):
    app = TraceApp([path], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "4")
        view = screen.query_one(KernelsView)
        every_number_sorts(view)
        await sorts(pilot, view, cases)
        if path == BERT:  # bytes per block, in the details panel's units (231424 read as 226.00 KiB)
            await press_settled(pilot, "M")
            cells = [c.strip() for c in shown(view, "Shared mem")]
            assert all(c == "-" or re.fullmatch(r"\d+(\.\d\d)? (B|KiB|MiB)", c) for c in cells), cells
            assert any(c.endswith("KiB") for c in cells), cells
            await press_settled(pilot, cases[-1][0])
        await press_settled(pilot, cases[-1][0])  # again: the least first, "-" still last
        values = [number(c) for c in shown(view, cases[-1][1])]
        known = [v for v in values if v is not None]
        assert view.reversed and values == sorted(known) + [None] * (len(values) - len(known))


async def test_the_ops_sort_by_the_memory_they_allocated_and_freed():
    """BERT recorded memory: the four memory columns sort, the most allocated first and the most freed last."""
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "3")
        view = screen.query_one(OpsView)
        every_number_sorts(view)
        await sorts(
            pilot,
            view,
            [
                ("S", "Self CPU Mem", "self CPU memory", False),
                ("T", "CPU Mem", "CPU memory", False),
                ("G", "Self CUDA Mem", "self device memory", False),
                ("U", "CUDA Mem", "device memory", False),
            ],
        )
        assert "# of Calls" not in view.fitted.headers  # U pinned CUDA Mem: at 80 the calls gave way, and the line
        assert "not shown to fit: # of Calls," in view.status()  # names them first, not among "and 9 more"
        await press_settled(pilot, "G", "G")
        assert view.reversed and shown(view, "Self CUDA Mem")[0].strip().startswith("-")  # the most freed first
        await press_settled(pilot, "b", "S")  # grouped by shape, the same keys
        assert view.by_shape and "Self CPU Mem" in view.fitted.headers
        assert_most_first(view, "Self CPU Mem", "self_cpu_memory")


async def test_the_path_s_share_sorts_as_its_time():
    """Share is each group's time over the path's: o orders it, the most first."""
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        await pilot.app.workers.wait_for_complete()
        await press_settled(pilot, "8")
        view = screen.query_one(CriticalPathTable)
        every_number_sorts(view)
        await press_settled(pilot, "c")  # by calls first: Share out of order
        values = [number(c) for c in shown(view, "Share")]
        assert values != sorted(values, reverse=True)
        await sorts(pilot, view, [("o", "Share", "time on the path", False)])


async def test_a_cpu_trace_offers_no_sort_by_a_roof_it_has_none_of():
    """No peaks for a CPU: % of roof is "-" on every row, so r is not offered; TFLOP/s, measured, is (R)."""
    app = TraceApp([str(SAMPLES / "cpu" / "linear_fwd.json.gz")], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        await pilot.app.workers.wait_for_complete()
        await press_settled(pilot, "3")
        view = screen.query_one(OpsView)
        assert view.achieved is not None  # the roofline was made: its columns are there
        assert not view.check_action("sort", ("roof",)) and view.check_action("sort", ("tflops",))
        assert "r % of roof" not in view.status() and "R achieved FLOP/s" in view.status()


async def test_an_occupancy_of_none_made_is_said_under_the_kernels():
    """BERT's GEMMs (cutlass, cuBLAS) carry an occupancy estimate of 0: "-" in the column, and the line says why."""
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "4", "O")  # sorted by it: shown
        view = screen.query_one(KernelsView)
        dashes = sum(c.strip() == "-" for c in shown(view, "Occupancy %"))
        args = [view.footprint.arg(r.example, "est. achieved occupancy %") for r in view.rows]
        zeros = sum(str(a) in ("0", "0.0") for a in args)
        assert zeros and dashes >= zeros  # (a memcpy has no args at all: "-" too, and no estimate to explain)
        assert f"Occupancy % -: the trace estimates 0% for {zeros} kernels, that is none made" in view.status()
