"""GPU annotation spans in the ops table: torch's rule, checked against the table torch printed for the series' run.

torch (_parse_kineto_results) gives a CPU op, as CUDA time, the device events whose linked correlation id is
the op's id: kernels, copies and sets launched under it. Kineto links a gpu_user_annotation to no op, so
the step and the record_function block count their kernels once, and the GPU-side annotation is a row of
its own timed by its span.
"""

from __future__ import annotations

import re

import pytest
from conftest import SAMPLES
from matmul_add import ADD, LARGE, SMALL, matmul_add
from torch_numbers import assert_close

from tui.model.analyses.results import Results
from tui.model.load import load_trace
from tui.tables import ops as O
from tui.tables.base import fit

BERT = SAMPLES / "h100-bert-small.json.gz"  # ProfilerStep#N has a GPU-side annotation span
CPU = SAMPLES / "cpu" / "linear_fwd.json.gz"


def _rows(a: Results) -> dict[tuple[str, bool], object]:
    return {(r.name, r.is_device): r for r in a.ops.rows}


@pytest.mark.parametrize("run", [SMALL, LARGE], ids=["64", "4096"])
def test_the_series_matmul_add_gives_torchs_own_table(tmp_path, run):
    """The figures of torch's key_averages().table() for the 64 and 4096 bf16 runs on an H100."""
    rows = _rows(Results(load_trace(matmul_add(tmp_path, run), use_cache=False)))
    step, block, gpu_block = rows["ProfilerStep*", False], rows["matmul_add", False], rows["matmul_add", True]
    unit = "ms" if run.cuda_total_us >= 1000 else "us"  # as torch printed them
    assert_close(step.device_total_us, run.cuda_total_us, 6, "ProfilerStep* CUDA total", unit)  # 3 mm + 3 add
    assert_close(block.device_total_us, run.cuda_total_us, 6, "matmul_add CUDA total", unit)
    assert step.self_device_us == block.self_device_us == 0
    assert gpu_block.self_device_us == gpu_block.device_total_us
    assert_close(gpu_block.self_device_us, run.gpu_block_us, 3, "matmul_add on the GPU", unit)
    assert gpu_block.count == 3 and gpu_block.is_gpu_annotation and not block.is_gpu_annotation


def test_a_kernel_left_from_warm_up_counts_in_its_kernels_row_only(tmp_path):
    a = Results(load_trace(matmul_add(tmp_path), use_cache=False))
    rows = _rows(a)
    assert rows[ADD, True].count == 4 and rows["aten::add", False].count == 3  # torch: 4 calls against 3
    assert rows["aten::add", False].device_total_us == pytest.approx(0.86 * 3, abs=1e-3)
    kernels = sum(r.self_device_us for r in a.ops.rows if r.is_device and not r.is_annotation)
    assert a.ops.self_device_total_us == pytest.approx(kernels) == pytest.approx(8.385 + 0.7, abs=1e-3)


@pytest.fixture(scope="module")
def bert() -> Results:
    return Results(load_trace(str(BERT), use_cache=False))


def test_a_step_counts_its_kernels_once_and_its_gpu_copy_is_a_row_of_its_own(bert):
    t = bert.ops
    host, device = (next(r for r in t.rows if r.name == "ProfilerStep*" and r.is_device == d) for d in (False, True))
    gpu = sum(r.total_us for r in bert.kernels)
    assert host.device_total_us == pytest.approx(gpu) == pytest.approx(t.self_device_total_us)
    assert host.self_device_us == 0 and not host.is_gpu_annotation
    assert device.is_gpu_annotation and device.self_device_us == device.device_total_us > gpu  # its span
    assert [r.name for r in t.spans] == ["ProfilerStep*"]


def test_the_viewer_shows_torchs_numbers_and_says_span_for_a_gpu_annotation(bert):
    t = bert.ops
    viewer, headless = (fit(O.columns(t, False, viewer=v), t.rows, t, 0) for v in (True, False))
    k = viewer.headers.index("Self CUDA %")
    shares = [row[k] for row in viewer.cells]
    assert shares.count("span") == 1
    assert all(float(s.rstrip("%")) <= 100 for s in shares if s != "span")
    assert any(float(row[k].rstrip("%")) > 100 for row in headless.cells)  # torch's 1262.88% for the span
    for col in ("Self CUDA", "CUDA total", "CUDA time avg"):
        j = viewer.headers.index(col)
        assert [row[j] for row in viewer.cells] == [row[j] for row in headless.cells]
    names = [(row[0], h[0]) for row, h in zip(viewer.cells, headless.cells, strict=True) if row[0] != h[0]]
    assert names == [("ProfilerStep* (GPU)", "ProfilerStep*")], (
        "the viewer tells the GPU row of a step from its CPU row"
    )
    narrow = fit(O.columns(t, False, viewer=True), t.rows, t, 60)
    assert sum(row[0].endswith(" (GPU)") for row in narrow.cells) == 1  # also where its columns do not fit


def test_the_headless_footnote_says_what_torch_does_only_when_spans_are_there(bert):
    note = next(f for f in O.footers(bert.ops) if f.startswith("(ProfilerStep* on the GPU"))
    assert re.search(r"timed by the span it covers on the GPU", note)
    assert "CPU op's CUDA time counts only the kernels, copies and sets launched under it" in note
    assert "includes GPU-side annotation spans" not in note  # the old, wrong belief
    cpu = Results(load_trace(str(CPU), use_cache=False))
    assert not cpu.ops.spans and not any("span" in f for f in O.footers(cpu.ops))


def test_the_viewer_note_is_short_and_names_what_it_shows(bert):
    note = next(line for line in O.footers(bert.ops, viewer=True) if "on the GPU" in line)
    assert note == "ProfilerStep* on the GPU: annotation spans, not work (Self CUDA % says span)"
