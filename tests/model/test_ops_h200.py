"""The series on an H200 (sample_traces/cuda-h200): tracetui's ops against the table torch printed, and the lessons.

Each of the 23 captures was written by `tracetui profile` under torch 2.11 with the table torch printed beside it
(`key_averages().table(sort_by="cuda_time_total", row_limit=15)`, names cut at 55 characters). torch 2.11's
table has no Python-frame rows, so tracetui's default table is the one to compare, with_stack capture included.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import SAMPLES
from torch_numbers import parse_table

from tui.model import load_trace
from tui.model.analyses.ops import OpRow, OpsTable
from tui.model.analyses.results import Results
from tui.tables import ops as O
from tui.text.fmt import truncate

H200 = SAMPLES / "cuda-h200"
CAPTURES = sorted(p.name.removesuffix(".json.gz") for p in H200.glob("*.json.gz"))


@pytest.fixture(scope="module")
def results() -> dict[str, Results]:
    return {name: Results(load_trace(H200 / f"{name}.json.gz", use_cache=False)) for name in CAPTURES}


def test_the_series_is_here_whole():
    assert len(CAPTURES) == 23
    assert all((H200 / f"{name}.txt").is_file() for name in CAPTURES)
    assert {"README.md", "CHECKS.md"} <= {p.name for p in H200.iterdir()}


def _printed(row: OpRow, table: OpsTable) -> dict[str, str]:
    """A row's cells as tracetui prints them, by torch's column headers."""
    return {c.header: c.text(row, table, O.NAME_WIDTH) for c in O.columns(table, grouped=False)}


@pytest.mark.parametrize("name", CAPTURES)
def test_ops_is_the_table_torch_printed(results, name):
    """Every cell and both footers as torch printed them, to the last digit. tracetui's times are torch's floats added
    in torch's order, and the footers added in the printed order, which decides a figure on an exact half of its
    last digit: linear_fwd's aten::addmm, two calls of 245.221 us, averages 122.610 us in torch's float (from whole
    nanoseconds, 122.6105 printed 122.611), and attn_inplace's Self CUDA total of 2268.5 us prints 2.269ms when
    added up sorted by CUDA total, 2.268ms in the rows' first order."""
    text = (H200 / f"{name}.txt").read_text()
    printed, _ = parse_table(text)
    table, unmatched = O.sorted_table(results[name].ops, "device_total")  # torch's sort_by="cuda_time_total"
    assert len(printed) == min(15, len(unmatched))
    for row in printed:  # equal names (a CPU and a GPU-side row) are told apart by their figures
        found = next((r for r in unmatched if _printed(r, table) == row.cells), None)
        assert found is not None, (name, row.cells, [_printed(r, table) for r in unmatched if r.name == row.name])
        unmatched.remove(found)
    footers = [line for line in text.splitlines() if line.startswith(("Self CPU time total", "Self CUDA time total"))]
    assert O.footers(table)[: len(footers)] == footers


@pytest.mark.parametrize("name", CAPTURES)
def test_gpu_annotation_rows_are_timed_as_torch_timed_them(results, name):
    """Kineto's JSON writer widens each GPU annotation by 1 ns on either side (output_json.cpp); narrowed back to
    its kernels, a GPU annotation row's Self CUDA is torch's as printed, with no tolerance (read as written, it was
    2 ns a call longer: linear_fwd's 5.444us against torch's 5.440us)."""
    printed, _ = parse_table((H200 / f"{name}.txt").read_text())
    device_only = [p for p in printed if p.times["Self CPU"][0] == 0 and p.times["Self CUDA"][0] > 0]
    rows = [r for r in results[name].ops.rows if r.is_gpu_annotation and r.self_device_us > 0]
    compared = 0
    for row in rows:
        theirs = [p for p in device_only if p.name == truncate(row.name, O.NAME_WIDTH) and p.count == row.count]
        if theirs:
            us, unit = theirs[0].times["Self CUDA"]
            assert round(row.self_device_us, 3 if unit == "us" else 0) == pytest.approx(us, abs=1e-9), (name, row.name)
            compared += 1
    assert compared or not rows, name


def test_the_with_stack_capture_has_torch_2_11s_table_and_python_frames_lists_the_frames(results):
    a = results["matmul_add_64_warm_eager_stack"]
    assert a.ops.frame_events > 0 and not a.ops.has_python
    framed = a.op_table(python_frames=True)
    assert framed.has_python and framed.self_cpu_total_us == pytest.approx(a.ops.self_cpu_total_us, abs=1e-6)
    block, block_framed = (
        next(r for r in t.rows if r.name == "matmul_add" and not r.is_device) for t in (a.ops, framed)
    )
    assert block.self_cpu_us == pytest.approx(104.842, abs=1e-3)  # torch 2.11: the workload's frames are its own time
    assert block_framed.self_cpu_us < block.self_cpu_us - 10


def _names(a: Results) -> set[str]:
    return {r.name for r in a.ops.rows}


def test_compile_fuses_matmul_and_add_into_addmm(results):
    for name in CAPTURES:
        names = _names(results[name])
        if re.fullmatch(r"matmul_add_\d+_(cold|warm)_eager", name):
            assert {"aten::mm", "aten::add"} <= names and "aten::addmm" not in names, name
        if re.fullmatch(r"matmul_add_\d+_(cold|warm)_compiled", name):
            assert "aten::addmm" in names and "aten::mm" not in names, name


def test_reduce_overhead_replays_cuda_graphs(results):
    for name in CAPTURES:
        s = results[name].summary
        if name.endswith("reduce_overhead"):
            assert s.graph_launches > 0 and s.graph_kernels > 0, name
            assert "cudaGraphLaunch" in _names(results[name]), name
        elif "compiled" not in name:
            assert s.graph_launches == 0, name


def test_the_big_matmul_keeps_the_gpu_busy_and_the_small_one_does_not(results):
    """The GEMM's share of the window: the 4096 eager runs keep the GPU busy most of it, the 64 ones barely."""
    for size, busy in ((64, lambda u: u < 0.05), (4096, lambda u: u > 0.6)):
        for warm in ("cold", "warm"):
            s = results[f"matmul_add_{size}_{warm}_eager"].summary
            assert busy(s.gpu_utilization), (size, warm, s.gpu_utilization)


def test_h200_verdicts_from_the_typical_steps_critical_path(results):
    """The CHECKS.md lessons as verdicts, read from the typical step's critical path. Small matmul_add:
    overhead-bound (the path is the CPU's); big eager: compute-bound (its GEMM); reduce-overhead replays graphs."""
    for warm in ("cold", "warm"):
        assert results[f"matmul_add_64_{warm}_eager"].summary.verdict == "overhead-bound"
        assert results[f"matmul_add_4096_{warm}_eager"].summary.verdict == "compute-bound"
    assert results["matmul_add_64_warm_eager_stack"].summary.verdict == "overhead-bound"
    assert results["mlp_fwd_eager"].summary.verdict == "compute-bound"
    for name in ("matmul_add_4096_warm_compiled_reduce_overhead", "mlp_fwd_compiled_reduce_overhead"):
        assert results[name].summary.graph_launches == 2  # one replay a step


def test_checks_md_is_what_the_check_says_of_these_captures(results):
    """CHECKS.md (profiler_runner.capture_samples' check) names each capture with its verdict and fusion."""
    lines = (H200 / "CHECKS.md").read_text().splitlines()
    for name in CAPTURES:
        line = next(line for line in lines if line.startswith(f"- {name}.json.gz: "))
        a = results[name]
        assert f": {a.summary.verdict} (GPU busy {a.summary.gpu_utilization:.0%})" in line, line
        names = _names(a)
        fused = "aten::addmm" in names and "aten::mm" not in names
        assert line.endswith("addmm (fused)") == fused and line.endswith("mm+add") == (
            not fused and "aten::mm" in names
        )


def test_the_readme_says_where_the_captures_come_from():
    text = (H200 / "README.md").read_text()
    assert "torch 2.11" in text and "H200" in text
    assert "cuda-h200" in (SAMPLES / "ATTRIBUTION.md").read_text()
    assert Path(H200 / "matmul_add_64_warm_eager.txt").read_text().startswith("---")
