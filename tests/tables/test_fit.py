"""Tables fit: columns by priority, names cut in the middle, every text report within 80 and 120 columns."""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import SAMPLES, SHARED

from tui.model.analyses.diff import diff
from tui.model.analyses.results import Results
from tui.model.jobs import run_job
from tui.model.load import load_trace
from tui.reports import (
    render_code,
    render_diff,
    render_explain,
    render_kernels,
    render_memory,
    render_ops,
    render_ranks,
    render_summary,
)
from tui.tables import kernels as K
from tui.tables import ops as O
from tui.tables.base import KEEP, NO_LIMIT, Column, fit
from tui.text.fmt import fmt_number
from tui.text.names import ELLIPSIS, shorten_names

BERT = SAMPLES / "h100-bert-small.json.gz"  # with_stack and profile_memory: every report has something to say
RANKS = SAMPLES / "hta-2rank"
DIFF = (SAMPLES / "a100-train-control.json.gz", SAMPLES / "v100-cudagraph-test.json.gz")
WIDTHS = (80, 120)


@contextmanager
def columns(width: int):
    old = os.environ.get("TRACETUI_COLUMNS")
    os.environ["TRACETUI_COLUMNS"] = str(width)
    try:
        yield
    finally:
        os.environ.pop("TRACETUI_COLUMNS") if old is None else os.environ.__setitem__("TRACETUI_COLUMNS", old)


@pytest.fixture(scope="module")
def bert() -> Results:
    return Results(load_trace(str(BERT), use_cache=False))


@pytest.fixture(scope="module")
def job() -> Results:
    return Results(load_trace(str(RANKS), use_cache=False))


@pytest.fixture(scope="module")
def job_report():
    return run_job(str(RANKS), False, "local", "", 1)


@pytest.fixture(scope="module")
def pair():
    return diff(*(Results(load_trace(str(p), use_cache=False)) for p in DIFF))


def reports(bert, job, job_report, pair) -> dict[str, object]:
    """Every text report, as a function of nothing (the width comes from TRACETUI_COLUMNS)."""
    return {
        "ops": lambda: render_ops(bert, "text", None, 0, False),
        "ops by shape": lambda: render_ops(bert, "text", None, 0, True),
        "ops hide python": lambda: render_ops(bert, "text", None, 0, False, True),
        "kernels": lambda: render_kernels(bert, "text", None, 0),
        "code": lambda: render_code(bert.code, "text", None, 0),
        "code all frames": lambda: render_code(bert.code_all, "text", None, 0),
        "memory": lambda: render_memory(bert.memory, "text"),
        "explain": lambda: render_explain(bert, "text"),
        "summary": lambda: render_summary(bert, "text"),
        "ranks": lambda: render_ranks(job_report, "text"),
        "ranks summary": lambda: render_summary(job, "text"),
        "ranks ops": lambda: render_ops(job, "text", None, 0, False),
        "ranks kernels": lambda: render_kernels(job, "text", None, 0),
        "ranks explain": lambda: render_explain(job, "text"),
        "diff": lambda: render_diff(pair, "text", 20, (str(DIFF[0]), str(DIFF[1]))),
    }


@pytest.mark.parametrize("width", WIDTHS)
def test_every_text_report_fits_the_width(width, bert, job, job_report, pair):
    with columns(width):
        for name, render in reports(bert, job, job_report, pair).items():
            text = render()
            wide = [line for line in text.splitlines() if len(line) > width]
            assert not wide, f"{name} at {width}: {len(wide)} lines wider, e.g. {wide[0]!r}"
            assert text.count("\n") > 2, name
    with columns(width):
        diff_text = render_diff(pair, "text", 0, (str(DIFF[0]), str(DIFF[1])))
    marks = {r.status for r in pair.ops + pair.kernels} - {"both"}
    assert marks and all(f"[{m}]" in diff_text for m in marks)  # a cut name keeps its mark


@pytest.mark.parametrize("width", WIDTHS)
def test_cut_names_still_tell_rows_apart(width, bert, job):
    for a in (bert, job):
        for columns_, rows, context in (
            (O.columns(a.ops, False), a.ops.rows, a.ops),
            (K.columns(), a.kernels, None),
        ):
            fitted = fit(columns_, rows, context, width)
            pairs = {(r.name, cells[0]) for r, cells in zip(rows, fitted.cells, strict=True)}
            assert len({full for full, _ in pairs}) == len({short for _, short in pairs}), "two names became one"
            assert all(len(short) <= fitted.name_width for _, short in pairs)
            assert all(short == full or ELLIPSIS in short for full, short in pairs), "a cut without an ellipsis"


def test_the_ops_table_keeps_name_calls_self_and_total_and_says_what_it_dropped(bert):
    fitted = fit(O.columns(bert.ops, False), bert.ops.rows, bert.ops, 80)
    assert fitted.headers == ["Name", "Self CPU", "CPU total", "Self CUDA", "CUDA total", "# of Calls"]
    assert "Self CPU %" in fitted.dropped and "Self CUDA %" in fitted.dropped
    notes = " ".join(fitted.footer())
    assert NO_LIMIT in notes and "Self CUDA Mem" in fitted.dropped
    everything = fit(O.columns(bert.ops, False), bert.ops.rows, bert.ops, 0)
    assert len(everything.headers) == len(O.columns(bert.ops, False)) and not everything.footer()
    assert {r.name for r in bert.ops.rows} == {cells[0] for cells in everything.cells}  # 0: names in full


def test_the_kernels_kind_column_goes_when_every_row_is_a_kernel(bert):
    kernels = [r for r in bert.kernels if r.kind == "kernel"]
    fitted = fit(K.columns(), kernels, None, 200)
    assert "Kind" not in fitted.headers and ("Kind", "kernel") in fitted.constant
    assert "Kind" in fit(K.columns(), bert.kernels, None, 200).headers  # a memcpy row: kinds differ


@dataclass
class Row:
    name: str
    a: int
    b: int


def test_fit_drops_the_highest_priority_number_first_and_never_a_kept_column():
    cols = [
        Column("Name", lambda r, c, w: r.name, priority=KEEP, name=True, min_width=6),
        Column("Aaaaaaaaaa", lambda r, c, w: str(r.a), priority=2),
        Column("Bbbbbbbbbb", lambda r, c, w: str(r.b), priority=1),
        Column("Kept", lambda r, c, w: str(r.a + r.b), priority=KEEP),
    ]
    rows = [Row("alpha_one_long_name", 1, 2), Row("alpha_two_long_name", 3, 4)]
    assert fit(cols, rows, None, 200).headers == ["Name", "Aaaaaaaaaa", "Bbbbbbbbbb", "Kept"]
    assert fit(cols, rows, None, 30).headers == ["Name", "Bbbbbbbbbb", "Kept"]
    narrow = fit(cols, rows, None, 14)
    assert narrow.headers == ["Name", "Kept"] and narrow.dropped == ["Aaaaaaaaaa", "Bbbbbbbbbb"]
    short = [c[0] for c in narrow.cells]
    assert len(set(short)) == 2 and all(ELLIPSIS in s and len(s) <= narrow.name_width for s in short), short


@pytest.mark.parametrize("width", [None, 0, 60])
def test_a_row_without_the_longest_tag_keeps_its_room_at_every_width(width):
    """A name column's tag (never cut) takes room from the rows that have it only: the others' names keep the
    room the longest tag would take (without a terminal, as at 60 columns)."""
    cols = [
        Column("Name", lambda r, c, w: r.name, priority=KEEP, name=True, tag=lambda r: r.tag),
        Column("Kept", lambda r, c, w: str(r.a), priority=KEEP),
    ]
    long_name = "split_embedding_codegen_forward_unweighted_kernel_with_a_long_tail"
    rows = [Row(long_name, 1, 0), Row(long_name + "_2", 2, 0)]
    rows[1].tag = " (the gap before it)"
    rows[0].tag = ""
    fitted = fit(cols, rows, None, width, name_width=40 if width is None or width == 0 else 0)
    plain, tagged = (c[0] for c in fitted.cells)
    assert tagged.endswith(" (the gap before it)") and len(tagged) <= len(plain) + len(" (the gap before it)")
    assert len(plain) >= len(tagged) - 4, (plain, tagged)  # the untagged name takes the tag's room (cuts are at
    # separators: a few characters short of it at most)


def test_names_are_cut_in_the_middle_keeping_what_differs():
    names = [
        "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8>(Params)",
        "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_64x3_tn_align2>(Params)",
        "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(Params)",
    ]
    for width in (16, 24, 40, 60):
        short = shorten_names(names, width)
        assert len(set(short)) == 3 and all(len(s) <= width and ELLIPSIS in s for s in short), short
    short = shorten_names(names, 40)
    assert all(not s.startswith("void cutlass::Kernel2<cutlass_80_") for s in short)  # not the common prefix
    assert "align2" in short[1] and "relu" in short[0] and "wmma" in short[2]
    assert shorten_names(["aten::mm"], 20) == ["aten::mm"]


def test_footprint_values_are_rounded():
    assert fmt_number(4.272727) == "4.27" and fmt_number(128) == "128" and fmt_number(12.5) == "12.5"


QWEN = SHARED / "tracelens-2025-07-h100-qwen1.5-0.5b" / "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
KERNEL_TRACES = (QWEN, BERT, SAMPLES / "a100-train-control.json.gz", SAMPLES / "mi250-rocm-train.json.gz")
_OUTER = re.compile(r"void (?:\w+::|\(anonymous namespace\)::)*(\w+)[<(]")


def _functor(name: str) -> str | None:
    """What an elementwise kernel applies: the op function of its lambda, else its innermost *Functor*."""
    m = re.search(r"(\w+)(?:<[^<>()]*>)?\(at::TensorIterator", name)
    if m:
        return m.group(1)
    seen = list(dict.fromkeys(re.findall(r"(\w*Functor\w*)<", name)))
    return seen[-1] if seen else None


@pytest.fixture(scope="module")
def kernel_names() -> dict[Path, list[str]]:
    traces = [p for p in KERNEL_TRACES if p.exists()]
    return {p: [k.name for k in Results(load_trace(str(p), use_cache=False)).kernels] for p in traces}


@pytest.mark.parametrize("width", (30, 40, 60))
def test_real_kernel_names_read_as_their_function_and_what_tells_them_apart(width, kernel_names):
    assert QWEN in kernel_names or not QWEN.exists()
    for path, names in kernel_names.items():
        short = shorten_names(names, width)
        assert len(set(short)) == len(set(names)), f"{path.name} at {width}: two names became one"
        assert all(len(s) <= width for s in short)
        assert all(s == n or ELLIPSIS in s for n, s in zip(names, short, strict=True)), "a cut without an ellipsis"
        for n, s in zip(names, short, strict=True):
            m = _OUTER.match(n)
            if not m or n == s:
                continue
            outer = m.group(1)
            assert "void " not in s and "at::native::" not in s, s
            tail = "_".join(outer.split("_")[-2:])  # `…elementwise_kernel` where `vectorized_` does not fit
            if width >= 60 or (width >= 40 and path in (QWEN, BERT)):
                assert tail in s, (path.name, width, n[:80], s)
            f = _functor(n) if "elementwise" in outer else None
            if f and width >= 60:
                assert f in s, (path.name, n[:120], s)
            elif f and path in (QWEN, BERT) and len(f.split("_")[0]) + 25 <= width:
                assert f.split("_")[0] in s, (path.name, n[:120], s)  # at 40 the functor or its first words


def test_the_shared_qwen_kernels_at_60_columns_read_as_people_say_them():
    if not QWEN.exists():
        pytest.skip("shared Qwen trace not present")
    names = [k.name for k in Results(load_trace(str(QWEN), use_cache=False)).kernels]
    short = dict(zip(names, shorten_names(names, 60), strict=True))
    sm90 = next(s for n, s in short.items() if n.startswith("sm90_xmma_gemm"))
    assert sm90.startswith("sm90_xmma_gemm_bf16bf16_bf16f32") and sm90.endswith(f"{ELLIPSIS}_cublas")
    flash = next(s for n, s in short.items() if "flash_fwd_kernel" in n)
    assert flash.startswith("flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128")
    mul = next(
        s for n, s in short.items() if n.startswith("void at::native::elementwise_kernel<128, 4") and "MulFunctor" in n
    )
    assert mul.startswith("elementwise_kernel<") and "MulFunctor" in mul and mul.endswith("(…)")


def test_three_thousand_cutlass_names_are_shortened_within_a_second():
    import itertools
    import time

    combos = itertools.product(
        ["tensorop", "wmma_tensorop", "simt"],
        ["bf16_s16816gemm", "f16_s16816gemm", "s1688gemm", "bf16_s161616gemm"],
        ["", "relu_", "gelu_"],
        ["64x64_64x6", "256x128_64x3", "32x32_128x2", "128x128_32x3", "128x64_16x6", "64x128_32x4"],
        ["tn", "nt", "nn", "tt"],
        ["align1", "align2", "align4", "align8"],
    )
    inner = [f"cutlass_80_{k}_{d}_{a}bf16_{t}_{lay}_{g}" for k, d, a, t, lay, g in combos][:3000]
    names = [f"void cutlass::Kernel2<{i}>({i}::Params)" for i in inner]
    start = time.process_time()  # this process's CPU time: other processes on the machine do not count
    short = shorten_names(names, 60)
    assert time.process_time() - start < 3.0  # ~0.7 s
    assert len(set(short)) == 3000 and all(len(s) <= 60 for s in short)


def test_an_op_at_several_shapes_keeps_its_shapes_in_the_name_when_the_column_cannot_fit():
    """At 80 columns the roofline has no room for its shapes column: the shapes join the name, so the three
    aten::addmm rows of the BERT trace (one op, three shapes) can still be told apart."""
    from tui.tables import roofline as R
    from tui.text.fmt import compact_shapes

    t = Results(load_trace(str(BERT), use_cache=False)).roofline
    rows = [r for r in t.rows if r.name == "aten::addmm"]
    assert len({r.input_shapes for r in rows}) >= 3
    narrow = fit(R.COLUMNS, rows, t, 80)
    assert "Input shapes" not in narrow.headers and "Input shapes" not in narrow.dropped
    assert narrow.headers[0] == "Name · Input shapes"
    names = [row[0] for row in narrow.cells]
    assert len(set(names)) == len(names) and all(n.startswith("aten::addmm ") for n in names)
    assert max(len(" ".join(row)) for row in narrow.cells) <= 80
    wide = fit(R.COLUMNS, rows, t, 400)  # room for the column: the name stays the name
    assert "Input shapes" in wide.headers and [row[0] for row in wide.cells] == ["aten::addmm"] * len(rows)
    assert compact_shapes("[[512], [141, 512], [], []]") == "[[512],[141,512]]"


@pytest.mark.parametrize("width", (24, 34, 40))
def test_sibling_elementwise_kernels_keep_what_they_apply(width, kernel_names):
    """At 80 columns BERT's add read `…elementwise_kernel<…BFloat16, …>…` and GELU nearly the same: the function's
    name, which every sibling shares, now gives way to the functor that tells them apart."""
    names = [n for n in kernel_names[BERT] if "elementwise_kernel" in n]
    short = dict(zip(names, shorten_names(names, width), strict=True))
    told = {"CUDAFunctor_add": "add", "GeluCUDAKernelImpl": "Gelu", "CompareEqFunctor": "CompareEq"}
    for name, s in short.items():
        word = next(w for w in told if w in name)
        assert told[word] in s, (width, s)


def test_by_shape_keeps_the_shapes_at_160_columns_and_a_row_without_shapes_reads_as_its_name(bert):
    """At 150-160 columns the by-shape view read `aten::addmm …512]]`, and a kernel row (no shapes) was cut as one
    plain word soup (`void…_wmma…_s161616gemm…`)."""
    table = bert.ops_by_shape
    fitted = fit(O.columns(table, True), table.rows, table, 158)
    assert fitted.headers[0] == "Name · Input Shapes"
    cells = {r.name + (r.input_shapes or ""): c[0] for r, c in zip(table.rows, fitted.cells, strict=True)}
    assert cells["aten::addmm[[512], [141, 512], [512, 512], [], []]"] == "aten::addmm [[512],[141,512],[512,512]]"
    gemm = next(c for k, c in cells.items() if "s161616gemm_bf16_32x32_128x2" in k)
    assert (
        gemm == "Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(…)"
    )  # as kernels reads it


@pytest.mark.parametrize("width", [60, 33, 20, 12])
def test_cute_dsl_kernels_read_as_their_class(width):
    """The B300 replay's two FlashInfer norms are CuTe DSL kernels: `kernel_cutlass_kernel_` + module + class +
    `_object_at_` + a mangling of their arguments (200 characters each). Cut, each keeps its class (whole where it
    fits, else its two ends), never the generic start and the last digit (`kernel…_0`, before)."""
    from tui.text.name_forms import ELLIPSIS as E

    t = load_trace(next((SAMPLES.parent / "tests" / "data" / "b300-sglang").glob("*.json.gz")))
    names = sorted(n for n in t.names if n.startswith("kernel_cutlass_kernel_"))
    assert [n[len("kernel_cutlass_kernel_flashinfernormkernels") :].split("_object_at_")[0] for n in names] == [
        "fused_add_rmsnormFusedAddRMSNormKernel",
        "rmsnormRMSNormKernel",
    ]
    cut = shorten_names(names, width)
    assert all(len(c) <= width for c in cut) and len(set(cut)) == 2
    for c, cls in zip(cut, ("FusedAddRMSNormKernel", "RMSNormKernel"), strict=True):
        head, tail = cls[: (width - 2) // 2], cls[-((width - 2) - (width - 2) // 2 - 1) :]
        assert cls in c or (c.startswith(E + head) and c.endswith(tail + E)), (width, c)
