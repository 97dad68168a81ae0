"""The roofline: FLOPs and bytes per op family, TraceLens's figures on the same traces, the GPUs' peaks, the command
and the viewer's plot."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import pytest
from conftest import SAMPLES, SHARED, X, write_trace

from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.explain.roofline import fp32_gemm, gemm_roof, memory_bound, tiny_gemm
from tui.model.analyses.graphs.capture import load_credited
from tui.model.analyses.results import Results
from tui.model.analyses.roofline.flops import OpArgs, Unmodelled, model
from tui.model.analyses.roofline.peaks import PeaksError, by_name, detect, peak, read_peaks, table
from tui.model.analyses.roofline.points import with_device
from tui.tables.explain import note
from tui.tables.rates import FLOP_RATES, TINY, fmt_in, unit_for

DATA = Path(__file__).parents[1] / "data"
BF16 = "c10::BFloat16"
VLLM = SHARED / "tracelens-2026-07-mi300-vllm-piecewise-graph-pair"
H100 = {"name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85018279936, "computeMajor": 9, "computeMinor": 0}
A100 = {"name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 84990623744, "computeMajor": 8, "computeMinor": 0}


def results(path) -> Results:
    return Results(load_trace(path, use_cache=False))


# ---- the formulas, on inline shapes ----------------------------------------------------------------


def test_gemm_family_counts_flops_and_bytes_as_tracelens():
    """FLOPs = B·2·M·N·K (+ B·M·N for a bias); bytes: each operand once, the output once, the bias as 1xN."""
    mm = model("aten::mm", OpArgs([[46, 2880], [2880, 201088]], [BF16, BF16]))
    assert mm.flops == 2 * 46 * 201088 * 2880 == 53_280_276_480  # TraceLens GEMM.csv: 53.28027648 GFLOPS
    assert mm.bytes / 2**20 == pytest.approx(1122.505126953125)  # its Data Moved (MB)
    addmm = model("aten::addmm", OpArgs([[5120], [8192, 2880], [2880, 5120], [], []], [BF16] * 3 + ["Scalar"] * 2))
    assert addmm.flops == 241_633_853_440 and addmm.bytes / 2**20 == pytest.approx(153.134765625)
    bmm = model("aten::bmm", OpArgs([[32, 1, 512], [32, 512, 1024]], [BF16, BF16]))
    assert bmm.flops == 32 * 2 * 512 * 1024 and bmm.bmnk == (32, 1, 1024, 512)
    bias = model("aten::baddbmm", OpArgs([[4, 8, 6], [4, 8, 5], [4, 5, 6]], ["float"] * 3))
    assert bias.flops == 4 * (2 * 8 * 6 * 5 + 8 * 6) and bias.bytes == 4 * 4 * (8 * 5 + 5 * 6 + 8 * 6 + 6)
    linear = model("aten::linear", OpArgs([[2, 141, 512], [256, 512], [256]], [BF16] * 3))
    assert linear.flops == 2 * 282 * 256 * 512 + 282 * 256 and linear.dtype == "bf16"
    matmul = model("aten::matmul", OpArgs([[4, 16, 8], [8, 5]], ["float", "float"]))
    assert matmul.bmnk == (1, 64, 5, 8) and matmul.dtype == "fp32"


def test_attention_is_4bhnnd_halved_when_causal():
    q = [1, 8, 141, 64]
    full = model(
        "aten::_scaled_dot_product_flash_attention",
        OpArgs([q, q, q, [], [], [], []], [BF16] * 3, ["", "", "", "0.", "False"]),
    )
    causal = model(
        "aten::_scaled_dot_product_flash_attention", OpArgs([q, q, q], [BF16] * 3, ["", "", "", "0.", "True"])
    )
    assert full.flops == 4 * 1 * 8 * 141 * 141 * 64 and causal.flops == full.flops / 2
    assert full.bytes == 4 * 8 * 141 * 64 * 2 and full.unit == "matrix"
    eff = model("aten::_efficient_attention_forward", OpArgs([[1, 141, 8, 64]] * 3, [BF16] * 3, [""] * 9 + ["1"]))
    assert eff.flops == causal.flops  # [B, N, H, d] layout, custom_mask_type 1: causal


def test_convolution_reads_stride_padding_and_groups_from_concrete_inputs():
    args = OpArgs(
        [[2, 3, 16, 16], [8, 3, 3, 3], [], [], [], [], [], [], []],
        ["float"] * 2,
        ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"],
    )
    conv = model("aten::convolution", args)
    assert conv.flops == 2 * (2 * 8 * 8 * 8) * 27  # output 8x8 at stride 2, padding 1
    assert conv.bytes == 4 * (2 * 3 * 16 * 16 + 8 * 27 + 2 * 8 * 8 * 8)


def test_elementwise_norms_and_softmax_follow_tracelens():
    copy = model("aten::copy_", OpArgs([[46], [46], []], ["long int", "int", "Scalar"]))
    assert copy.flops == 46 and copy.bytes == 552 and copy.dtype == "int64"  # UnaryElementwise.csv: 0.000526 MB
    add = model("aten::add", OpArgs([[1, 141, 512], [1, 141, 512], []], [BF16, BF16, "Scalar"]))
    assert add.flops == 141 * 512 and add.bytes == 3 * 141 * 512 * 2
    scalar = model("aten::mul", OpArgs([[64, 128], []], ["float", "Scalar"]))
    assert scalar.bytes == 64 * 128 * 4 + 4 + 64 * 128 * 4
    ln = model(
        "aten::native_layer_norm",
        OpArgs(
            [[1, 141, 512], [], [512], [512], []],
            [BF16, "ScalarList", BF16, BF16, "Scalar"],
            ["", "[512]", "", "", "1e-12"],
        ),
    )
    elems = 141 * 512
    assert ln.flops == 6 * 512 + 5 * elems and ln.bytes == 2 * elems * 2 + 6 * 512 * 2
    rms = model(
        "aten::_fused_rms_norm",
        OpArgs([[8192, 2880], [], [2880], []], [BF16, "ScalarList", BF16, "Scalar"], ["", "[2880]", "", ""]),
    )
    assert rms.flops / 1e9 == pytest.approx(0.094388224)  # RMSNorm_fwd.csv, aiter::rms_norm of the same shape
    assert rms.bytes / 2**20 == pytest.approx(90.0054931640625)
    soft = model("aten::_softmax", OpArgs([[64, 128], [], []], ["float", "Scalar", "Scalar"], ["", "-1", "False"]))
    assert soft.flops == 3 * 64 * 128 and soft.bytes == 2 * 64 * 128 * 4
    total = model("aten::sum", OpArgs([[64, 128], [], [], []], ["float"], ["", "[1]", "False", ""]))
    assert total.bytes == (64 * 128 + 64) * 4


def test_what_cannot_be_read_is_not_modelled():
    with pytest.raises(Unmodelled):
        model("aten::mm", OpArgs([[4, 5], [5, 6]], ["c10::ComplexFloat", "c10::ComplexFloat"]))
    with pytest.raises(Unmodelled):
        model("aten::mm", OpArgs([[4, 5]], ["float"]))
    with pytest.raises(Unmodelled):
        model("aten::embedding", OpArgs([[4, 5], [3]], ["float", "long int"]))
    with pytest.raises(Unmodelled, match="Concrete Inputs"):  # 2021 traces: stride and padding unknown, not guessed
        model("aten::convolution", OpArgs([[2, 3, 16, 16], [8, 3, 3, 3], []], ["float"] * 2))


# ---- against the profiler's own flops count and TraceLens's reports ------------------------------------


def test_our_flops_match_with_flops_counts():
    """A CPU capture with with_flops (torch 2.13 leaves the count out of the export; the fixture puts back
    FunctionEvent.flops): GEMMs agree exactly, less our bias term; elementwise ops count one per element."""
    r = results(DATA / "roofline-cpu-flops.json.gz").roofline
    checked = 0
    for row in r.rows:
        if row.trace_flops is None:
            continue
        b, m, n, _ = row.bmnk or (1, 0, 0, 0)
        bias = b * m * n if row.name in ("aten::addmm", "aten::baddbmm") else 0
        assert row.flops / row.count == row.trace_flops + bias, row.name
        checked += 1
    assert checked == 7
    conv = next(row for row in r.rows if row.name == "aten::convolution")
    assert conv.flops == 55296  # the flops arg of the aten::conv2d above it
    assert r.on_cpu and r.device is None and r.gpu == "CPU"


def _tracelens_rows() -> list[dict]:
    rows = []
    for sheet in ("GEMM", "UnaryElementwise", "InferenceAttention_fwd", "RMSNorm_fwd"):
        with open(VLLM / "tracelens_reference" / f"{sheet}.csv", newline="", encoding="utf-8") as f:
            rows += list(csv.DictReader(f))
    return rows


@pytest.mark.skipif(not VLLM.is_dir(), reason="needs ../shared/traces")
def test_flops_bytes_and_rates_match_tracelens_on_the_vllm_replay():
    """TraceLens's perf report of the replay (its capture merged in): every row of ours with a TraceLens row
    for the same op, input dims and types agrees on FLOPs (0.5%), bytes (1%) and TFLOP/s (2%)."""
    trace, _ = load_credited(str(VLLM / "graph_execution.json.gz"), False, None)
    ours = Results(trace).roofline
    theirs = {(t["name"], t["Input Dims_first"], t["Input type_first"]): t for t in _tracelens_rows()}
    matched = 0
    for row in ours.rows:
        raw = _example_args(ours, row, trace)
        t = theirs.get((row.name, str(raw["Input Dims"]), str(raw["Input type"])))
        if t is None:
            continue
        count = int(t["name_count"])
        assert row.count == count
        assert row.flops / count == pytest.approx(float(t["GFLOPS_first"]) * 1e9, rel=0.005)
        if t["Data Moved (MB)_first"]:
            # TraceLens counts a host copy's data read and written, as in HBM; over the link it crosses once
            moved = row.bytes * (2 if row.link == "host" else 1)
            assert moved / count / 2**20 == pytest.approx(float(t["Data Moved (MB)_first"]), rel=0.01)
        their_rate = float(t["GFLOPS_first"]) * count / float(t["Kernel Time (µs)_sum"]) * 1e3
        assert row.tflops == pytest.approx(their_rate, rel=0.02)
        matched += 1
    names = {row.name for row in ours.rows}
    assert matched >= 12 and {"aten::addmm", "aten::mm", "aten::copy_"} <= names
    big = next(row for row in ours.rows if row.input_shapes.startswith("[[5120], [8192, 2880]"))
    assert big.tflops == pytest.approx(633.77, rel=0.02) and big.bound == "compute"  # TFLOPS/s_mean


def _example_args(r, row, trace) -> dict:
    from tui.model.load.args import event_args

    return event_args(trace, row.example)


def test_flops_and_bytes_match_tracelens_perf_models_on_the_samples():
    """tests/data/tracelens-perf-model-samples.csv: TraceLens's own perf-model classes (TraceLens/PerfModel/
    perf_model.py at AMD-AGI/TraceLens 171dd747: aten_mm, aten_addmm, aten_bmm, the SDPA, LayerNorm and
    elementwise models) run on one call of each of our rows of four sample traces. Every one of them agrees."""
    with open(DATA / "tracelens-perf-model-samples.csv", newline="", encoding="utf-8") as f:
        theirs = list(csv.DictReader(f))
    from tui.model.load.args import event_args

    by_trace: dict[str, dict] = {}
    for t in theirs:
        if t["trace"] not in by_trace:
            a = results(SAMPLES / t["trace"])
            by_trace[t["trace"]] = {
                (
                    r.name,
                    str(event_args(a.trace, r.example)["Input Dims"]),
                    str(event_args(a.trace, r.example)["Input type"]),
                ): r
                for r in a.roofline.rows
            }
        row = by_trace[t["trace"]][(t["name"], t["Input Dims"], t["Input type"])]
        assert row.flops / row.count == pytest.approx(float(t["GFLOPS"]) * 1e9, rel=0.005)
        moved = row.bytes * (2 if row.link == "host" else 1)  # a host copy crosses its link once (TraceLens: twice)
        assert moved / row.count / 2**20 == pytest.approx(float(t["Data Moved (MB)"]), rel=0.01)
    assert len(theirs) == 162 and {t["name"] for t in theirs} >= {"aten::mm", "aten::addmm", "aten::bmm",
        "aten::_scaled_dot_product_flash_attention", "aten::native_layer_norm", "aten::copy_"}  # fmt: skip


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/traces")
def test_qwen_on_h100_models_its_gemms_and_detects_the_gpu():
    r = results(SHARED / "tracelens-2025-07-h100-qwen1.5-0.5b" / "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz").roofline
    assert r.device is not None and r.device.name == "H100 SXM"
    gemms = [row for row in r.rows if row.family == "gemm"]
    assert gemms and all(row.flops > 0 and row.bytes > 0 and row.pct_of_roof is not None for row in gemms)
    assert all(0 < row.pct_of_roof < 100 for row in r.rows if row.pct_of_roof is not None)


# ---- the GPUs' peaks ------------------------------------------------------------------------------


def test_detected_peaks_of_h100_and_mi300x_are_their_datasheets():
    """H100 SXM (datasheet: 1,979 bf16 / 989 TF32 / 3,958 FP8 TFLOP/s with sparsity, 67 FP32, 3.35 TB/s);
    MI300X (datasheet: 1,307.4 bf16 and fp16, 2,614.9 FP8, 163.4 FP32 matrix, 5.3 TB/s)."""
    h100 = detect([H100 | {"numSms": 132}])
    assert h100 is not None and h100.name == "H100 SXM" and h100.peak_gbps == 3350
    assert h100.peak_tflops["matrix_bf16"] == 1979 / 2 and h100.peak_tflops["matrix_tf32"] == 989 / 2
    assert h100.peak_tflops["matrix_fp8"] == 3958 / 2 and h100.peak_tflops["vector_fp32"] == 67
    props = {"name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992, "computeMajor": 9, "computeMinor": 4}
    mi300x = detect([props | {"numSms": 304}])
    assert mi300x is not None and mi300x.name == "MI300X" and mi300x.peak_gbps == 5300
    assert mi300x.peak_tflops["matrix_bf16"] == mi300x.peak_tflops["matrix_fp16"] == 1307.4
    assert mi300x.peak_tflops["matrix_fp8"] == 2614.9 and mi300x.peak_tflops["matrix_fp32"] == 163.4
    nameless = detect([props | {"name": "", "numSms": 304}])  # the vLLM traces' empty names
    assert nameless is not None and nameless.peak_tflops == mi300x.peak_tflops and "compute capability" in nameless.name


def test_every_listed_gpu_is_in_the_table_with_a_source():
    names = {e.device.name for e in table()}
    for gpu in ("V100", "A100 SXM4 40GB", "A100 SXM4 80GB", "A100 PCIe 40GB", "A100 PCIe 80GB", "A10", "L4", "L40S",
                "RTX 4090", "H100 SXM", "H100 PCIe", "H100 NVL", "H800", "H200", "GH200", "B200", "B300", "MI210",
                "MI250X", "MI300X", "MI325X", "MI355X"):  # fmt: skip
        assert any(gpu in n for n in names), gpu
    assert all(e.device.source.split(": ")[-1].startswith("https://") for e in table())
    assert detect([A100 | {"numSms": 108}]).name == "A100 SXM4 80GB"
    assert detect([{"name": "NVIDIA GH200 480GB", "totalGlobalMem": 102005473280}]).name == "GH200 (96 GB HBM3)"
    assert detect([{"name": "NVIDIA A100-PG509-200", "totalGlobalMem": 42505273344, "numSms": 108}]).peak_gbps == 1555
    assert detect([{"name": "Quadro GP100", "totalGlobalMem": 17069309952}]) is None


def test_fp32_gemms_on_nvidia_meet_the_cuda_core_roof():
    a100 = by_name("a100 sxm4 80gb")
    assert peak(a100, "matrix", "fp32") == 19.5 and peak(a100, "vector", "bf16") == 19.5
    assert peak(by_name("MI300X"), "matrix", "fp32") == 163.4 and peak(a100, "vector", "int64") is None


def test_peaks_files_ours_and_tracelens(tmp_path):
    tl = tmp_path / "MI300X.json"
    tl.write_text(json.dumps({"name": "MI300X", "mem_bw_gbps": 5300, "max_achievable_tflops": {"matrix_bf16": 708}}))
    d = read_peaks(str(tl))
    assert d.peak_gbps == 5300 and d.peak_tflops == {"matrix_bf16": 708.0}
    ours = tmp_path / "mine.toml"
    ours.write_text('name = "lab H100"\npeak_gbps = 3000\n[peak_tflops]\nmatrix_bf16 = 700\n')
    assert read_peaks(str(ours)).peak_tflops == {"matrix_bf16": 700.0}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"mem_bw_gbps": "fast", "max_achievable_tflops": {"matrix_bf16": 708}}))
    with pytest.raises(PeaksError, match=r"bad.json: field 'mem_bw_gbps'"):
        read_peaks(str(bad))
    bad.write_text(json.dumps({"peak_gbps": 1, "peak_tflops": {"matrix_bf17": 1}}))
    with pytest.raises(PeaksError, match=r"peak_tflops.matrix_bf17"):
        read_peaks(str(bad))
    with pytest.raises(PeaksError, match="unknown GPU"):
        by_name("Voodoo2")


# ---- the series' cases: matmul_add 64 and 4096 --------------------------------------------------------


def _gemm_trace(tmp_path, n: int, kernel_us: float, device: dict) -> Path:
    """One eager torch.mm of n x n bf16 on a GPU: the op, its launch and its kernel (a matmul_add's GEMM)."""
    dims = [[n, n], [n, n]]
    events = [
        X("aten::mm", 0, 30, Input_Dims=dims, Input_type=[BF16, BF16], External_id=1),
        X("cudaLaunchKernel", 5, 10, cat="cuda_runtime", correlation=7, External_id=1),
        X("ampere_bf16_s16816gemm", 20, kernel_us, cat="kernel", pid=0, tid=7, correlation=7, External_id=1),
    ]
    return write_trace(tmp_path / f"mm{n}.json", events, deviceProperties=[device])


def test_matmul_add_4096_is_compute_bound_near_the_roof_and_64_overhead_bound(tmp_path):
    """The issue's A100 example: 2·4096³ / 580 us = 237 TFLOP/s, 76% of 312; a 64³ GEMM in 5 us is a fraction of 1%."""
    big = results(_gemm_trace(tmp_path, 4096, 580, A100))
    row = big.roofline.rows[0]
    assert row.tflops == pytest.approx(2 * 4096**3 / 580e6) and row.bound == "compute"
    assert row.pct_of_roof == pytest.approx(100 * 2 * 4096**3 / 580e6 / 312)
    (found,) = gemm_roof(big, big.summary)
    assert "75.9% of the bf16 tensor-core roof" in note(found) and "compute-bound" in note(found)
    assert tiny_gemm(big, big.summary) == []
    small = results(_gemm_trace(tmp_path, 64, 5, A100))
    assert small.roofline.rows[0].pct_of_roof < 1
    (tiny,) = tiny_gemm(small, small.summary)
    assert "M <= 64" in note(tiny) and "Batch them" in note(tiny)


def test_cpu_captures_have_no_peaks(tmp_path):
    a = results(DATA / "roofline-cpu-flops.json.gz")
    assert all(row.pct_of_roof is None and row.bound == "" for row in a.roofline.rows)
    assert gemm_roof(a, a.summary) == [] and memory_bound(a, a.summary) == []
    on_h100 = with_device(a.roofline, by_name("H100 SXM"))
    assert all(row.pct_of_roof is not None for row in on_h100.rows)


def test_fp32_gemms_and_memory_bound_ops_on_the_mi250_sample():
    a = results(SAMPLES / "mi250-rocm-train.json.gz")
    (fp32,) = fp32_gemm(a, a.summary)
    assert fp32.figures["tc"] == "bf16" and fp32.figures["ratio"].value == pytest.approx(181 / 45.3)
    (mem,) = memory_bound(a, a.summary)
    assert mem.figures["rows"] >= 2 and "fusing them" in note(mem)


def test_bert_on_h100_gemms_measured_against_bf16():
    r = results(SAMPLES / "h100-bert-small.json.gz").roofline
    addmm = [row for row in r.rows if row.name == "aten::addmm"]
    assert sum(row.count for row in addmm) == 26 and all(row.dtype == "bf16" for row in addmm)
    assert all(row.peak_tflops == 989.5 for row in addmm)
    assert not any(row.name == "aten::linear" for row in r.rows)  # counted once, as the addmm below it
    assert {n.name for n in r.not_modelled} >= {"aten::index_select"} and r.not_modelled_us > 0


def test_a_gemm_below_the_ridge_is_memory_bound_only_when_it_moves_a_real_share_of_the_bandwidth():
    """Both BERT GEMM findings sit below the H100's ridge; the vocabulary projection moves 29% of the bandwidth
    (memory-bound), the 512x512 ones 4% (far below both roofs: too little work per call), the share the roofline
    view shows as % of roof."""
    a = results(SAMPLES / "h100-bert-small.json.gz")
    by_calls = {f.figures["calls"]: f for f in gemm_roof(a, a.summary) if f.figures["op"] == "aten::addmm"}
    small, vocab = by_calls[17], by_calls[1]
    assert small.parts[-1] == "roofline-gemm-latency" and vocab.parts[-1] == "roofline-gemm-memory"
    row = next(x for x in a.roofline.rows if x.name == "aten::addmm" and x.count == 17)
    assert small.figures["bw_pct"] == pytest.approx(row.pct_of_roof, rel=1e-3) and row.pct_of_roof < 10
    assert "memory-bound" not in note(small) and "4.18% of the 3,350 GB/s" in note(small)
    assert "memory-bound, moving 971 GB/s, 29% of the 3,350 GB/s bandwidth" in note(vocab)


# ---- the command ----------------------------------------------------------------------------------


def test_roofline_command_json(capsys):
    assert main(["roofline", str(SAMPLES / "h100-bert-small.json.gz"), "--format", "json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["device"]["name"] == "H100 SXM" and doc["device"]["peak_tflops"]["matrix_bf16"] == 989.5
    row = doc["rows"][0]
    assert set(row) >= {"name", "input_shapes", "dtype", "count", "device_us", "flops", "bytes", "intensity",
                        "tflops", "gbps", "bound", "pct_of_roof"}  # fmt: skip
    assert row["tflops"] == pytest.approx(row["flops"] / row["device_us"] / 1e6)
    assert doc["not_modelled"]["ops"] == 6 and doc["not_modelled"]["device_us"] > 0


def test_roofline_command_gpu_peaks_and_bad_input(tmp_path, capsys):
    trace = str(SAMPLES / "h100-bert-small.json.gz")
    assert main(["roofline", trace, "--gpu", "MI300X", "--format", "csv", "--limit", "1", "--no-cache"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("name,input_shapes,dtype") and len(lines) == 2
    bad = tmp_path / "peaks.json"
    bad.write_text("{")
    assert main(["roofline", trace, "--peaks", str(bad)]) == 2
    assert f"{bad}: not valid JSON" in capsys.readouterr().err
    assert main(["roofline", str(SAMPLES / "cpu" / "matmul_add_64_warm_eager.json.gz"), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "record_shapes=True" in err and "tracetui profile" in err
    assert main(["roofline", trace, "--sort", "speed"]) == 2


def test_unknown_gpu_shows_rates_without_percentages(tmp_path, capsys):
    path = _gemm_trace(tmp_path, 256, 8, {"name": "Quadro GP100", "totalGlobalMem": 17069309952})
    assert main(["roofline", str(path), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "No peaks for GPU Quadro GP100" in out and "%" not in out.split("\n")[2]
    assert math.isclose(results(path).roofline.rows[0].tflops, 2 * 256**3 / 8e6)


# ---- the viewer's plot ----------------------------------------------------------------------------


async def test_roofline_view_moves_its_selection_and_jumps():
    from textual.app import App

    from tui.widgets.roofline_view import RooflineView

    a = results(SAMPLES / "h100-bert-small.json.gz")
    jumps: list[str] = []

    class Host(App):
        def compose(self):
            yield RooflineView(a, id="roof")

        def on_roofline_view_jump(self, message: RooflineView.Jump) -> None:
            jumps.append(message.name)
            assert a.trace.name_of(message.event) == message.name

    async with Host().run_test(size=(120, 36)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        view = pilot.app.query_one(RooflineView)
        view.focus()
        first = view.current
        assert first is not None and first.device_us == max(r.device_us for r in view.rows)
        await pilot.press("right")
        moved = view.current
        assert moved is not first and moved.intensity >= first.intensity
        await pilot.press("left", "left")
        assert view.current.intensity <= first.intensity
        await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        assert jumps == [view.current.name]
        text = "\n".join(view.render_line(y).text for y in range(36))
        assert "◉" in text and "H100 SXM" in text and "FLOP/byte" in text
        assert any(0x2800 < ord(ch) <= 0x28FF for ch in text)  # the roofs and points in braille


async def test_roofline_view_without_shapes_says_how_to_get_them():
    from textual.app import App

    from tui.widgets.roofline_view import RooflineView

    a = results(SAMPLES / "cpu" / "matmul_add_64_warm_eager.json.gz")

    class Host(App):
        def compose(self):
            yield RooflineView(a)

    async with Host().run_test(size=(200, 10)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        view = pilot.app.query_one(RooflineView)
        await pilot.press("right", "enter")
        assert "record_shapes=True" in view.render_line(0).text


async def test_roofline_view_of_a_cpu_capture_says_why_there_are_no_roofs():
    """A CPU capture has no roofs because it ran on the CPU, not because its GPU is unknown (as it said)."""
    from textual.app import App

    from tui.widgets.roofline_view import RooflineView

    cpu = results(SAMPLES / "cpu" / "linear_fwd.json.gz")
    gpu = results(SAMPLES / "h100-bert-small.json.gz")
    assert cpu.roofline.on_cpu and cpu.roofline.rows

    class Host(App):
        def compose(self):
            yield RooflineView(cpu, id="cpu")
            yield RooflineView(gpu, id="gpu")

    async with Host().run_test(size=(200, 40)) as pilot:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        on_cpu, on_gpu = pilot.app.query_one("#cpu", RooflineView), pilot.app.query_one("#gpu", RooflineView)
        assert "no roofs (a CPU capture)" in on_cpu._title()
        assert "roofs of H100 SXM (3,350 GB/s)" in on_gpu._title()
        # the rate axis in the roofline table's unit (a fresh-eyes run: "2.05e-05 TFLOP/s" on a CPU capture)
        assert on_cpu._title().startswith("GFLOP/s (log)") and on_gpu._title().startswith("TFLOP/s (log)")
        assert " · 70.8 GFLOP/s · 3.34 GB/s · " in on_cpu._details()[1]
        lines = [on_cpu.render_line(y).text for y in range(40)]
        assert [t.split("┤")[0].strip() for t in lines if "┤" in t] == ["100", "10"]  # not 0.1 and 0.01 TFLOP/s


def test_bf16_vector_work_is_measured_on_the_fp32_units_and_says_why(capsys):
    """No datasheet here prints a non-tensor bf16 rate but the RTX 4090's (the fp32 rate); PyTorch computes bf16
    elementwise, reduction and norm math in fp32, so the fp32 units are the roof, named as such."""
    from tui.model.analyses.roofline.peaks import roof_dtype
    from tui.tables.roofline import footers

    h100 = by_name("H100 SXM")
    assert roof_dtype(h100, "vector", "bf16") == "fp32" and peak(h100, "vector", "bf16") == 67
    assert roof_dtype(h100, "matrix", "bf16") == "bf16" and roof_dtype(h100, "vector", "fp32") == "fp32"
    rtx = by_name("GeForce RTX 4090")
    assert roof_dtype(rtx, "vector", "bf16") == "bf16" and peak(rtx, "vector", "bf16") == 82.6
    r = Results(load_trace(SAMPLES / "h100-bert-small.json.gz")).roofline
    vector = [x for x in r.rows if x.unit == "vector" and x.dtype == "bf16"]
    assert vector and all(x.roof_dtype == "fp32" and x.peak_tflops == 67 for x in vector)
    assert any(
        "bf16/fp32: bf16 elementwise, reduction and norm ops are measured against the fp32 vector units" in f
        and "H100 SXM's source gives no non-tensor bf16 rate" in f
        for f in footers(r)
    )
    assert main(["roofline", str(SAMPLES / "h100-bert-small.json.gz"), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert {x["roof_dtype"] for x in rows if x["name"] == "aten::native_layer_norm"} == {"fp32"}


def test_every_gpu_says_what_its_source_gives_for_vector_bf16_and_fp16():
    """Each entry of gpus.toml has its '# vector bf16/fp16:' line, and lists such a rate only when the line says the
    source gives one."""
    from tui.model.analyses.roofline.peaks import GPU_TABLE

    entries = GPU_TABLE.split("[[gpu]]")[1:]
    assert len(entries) == len(table())
    for text, entry in zip(entries, table(), strict=True):
        said = next(line for line in text.splitlines() if line.startswith("# vector bf16/fp16: "))
        listed = {k for k in entry.device.peak_tflops if k in ("vector_bf16", "vector_fp16")}
        assert bool(listed) == ("none in" not in said), entry.device.name


# ---- copies over a link ---------------------------------------------------------------------------------------

H200 = {"name": "NVIDIA H200", "totalGlobalMem": 150754820096, "computeMajor": 9, "computeMinor": 0}


def _h2d_trace(tmp_path, device: dict, pinned: bool = True, with_bytes: bool = True) -> Path:
    """The issue's copy: 384 MB of fp32 from pinned host memory to an H200 at 55 GB/s (6.98 ms), under aten::copy_."""
    n, seconds = 96_000_000, 384e6 / 55e9
    dims = [[n], [n], []]
    kind = "Memcpy HtoD (Pinned -> Device)" if pinned else "Memcpy HtoD (Pageable -> Device)"
    size = {"bytes": 4 * n} if with_bytes else {}
    events = [
        X("aten::copy_", 0, seconds * 1e6 + 20, Input_Dims=dims, Input_type=["float", "float", "Scalar"]),
        X("cudaMemcpyAsync", 5, 10, cat="cuda_runtime", correlation=7),
        X(kind, 10, seconds * 1e6, cat="gpu_memcpy", pid=0, tid=7, correlation=7, stream=7, device=0, **size),
    ]
    return write_trace(tmp_path / "h2d.json", events, deviceProperties=[device])


def test_a_host_copy_is_measured_against_its_link_not_hbm(tmp_path, capsys):
    """384 MB at 55 GB/s is 86% of PCIe 5.0 x16 (64 GB/s each way), not 2.3% of the H200's 4,800 GB/s of HBM: the
    bytes crossed the link once (the copy's `bytes` arg), the roof is the link's."""
    r = results(_h2d_trace(tmp_path, H200)).roofline
    (row,) = r.rows
    assert (row.link, row.bound, row.bytes) == ("host", "link", 384e6)
    assert row.gbps == pytest.approx(55.0)
    assert row.pct_of_roof == pytest.approx(100 * 55 / 64)
    assert main(["roofline", str(tmp_path / "h2d.json")]) == 0
    out = capsys.readouterr().out
    assert "host link" in out and "85.9%" in out
    assert "host-device copies against PCIe 5.0 x16, 64 GB/s each way (H200 SXM's)" in out
    assert main(["roofline", str(tmp_path / "h2d.json"), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rows"][0]["link"] == "host" and doc["device"]["links"]["host"]["gbps"] == 64


def test_a_copy_without_bytes_crosses_the_link_once_and_an_unknown_link_is_a_stated_default(tmp_path, capsys):
    """No `bytes` arg: the copy model's read + write counted once. A peaks file that names no link: PCIe 4.0 x16."""
    r = results(_h2d_trace(tmp_path, H200, with_bytes=False)).roofline
    assert r.rows[0].bytes == 384e6 and r.rows[0].pct_of_roof == pytest.approx(100 * 55 / 64)
    peaks = tmp_path / "mine.json"
    peaks.write_text(json.dumps({"name": "mine", "peak_gbps": 4000, "peak_tflops": {"vector_fp32": 60}}))
    assert main(["roofline", str(tmp_path / "h2d.json"), "--peaks", str(peaks)]) == 0
    out = capsys.readouterr().out
    assert "PCIe 4.0 x16, 32 GB/s each way (an assumed default" in out and "171.9%" in out


def test_a_gh200_host_copy_crosses_nvlink_c2c(tmp_path):
    gh200 = {"name": "NVIDIA GH200 480GB", "totalGlobalMem": 102005473280, "computeMajor": 9, "computeMinor": 0}
    row = results(_h2d_trace(tmp_path, gh200)).roofline.rows[0]
    assert row.bound == "link" and row.pct_of_roof == pytest.approx(100 * 55 / 450)


def test_every_listed_gpu_names_its_host_link():
    from tui.model.analyses.roofline.links import host_link, peer_link

    for e in table():
        link = host_link(e.device)
        assert not link.default and link.gbps in (16, 32, 64, 128, 450), e.device.name
        assert peer_link(e.device).gbps >= link.gbps or "PCIe" in peer_link(e.device).name, e.device.name


def test_a_row_of_host_and_device_copies_takes_each_at_its_own_roof(tmp_path):
    """Two calls of one copy_ shape: 4 MB to the device over PCIe 5.0 (100 us) and 4 MB inside it (10 us): the roof's
    time is 4 MB at 64 GB/s plus the DtoD copy's 8 MB (read and write) at 4,800 GB/s."""
    n = 1_000_000
    dims, types = [[n], [n], []], ["float", "float", "Scalar"]
    events = []
    for k, (kind, dur) in enumerate([("Memcpy HtoD (Pinned -> Device)", 100), ("Memcpy DtoD (Device -> Device)", 10)]):
        t0 = 200 * k
        events += [
            X("aten::copy_", t0, 150, Input_Dims=dims, Input_type=types),
            X("cudaMemcpyAsync", t0 + 5, 5, cat="cuda_runtime", correlation=k + 1),
            X(kind, t0 + 20, dur, cat="gpu_memcpy", pid=0, tid=7, correlation=k + 1, stream=7, device=0, bytes=4 * n),
        ]
    (row,) = results(write_trace(tmp_path / "mixed.json", events, deviceProperties=[H200])).roofline.rows
    assert (row.link, row.link_bytes, row.bytes) == ("host", 4e6, 4e6 + 8e6)
    assert row.pct_of_roof == pytest.approx(100 * (4e6 / 64e3 + 8e6 / 4800e3) / 110)


def test_a_peer_copy_crosses_nvlink_and_a_device_copy_stays_in_hbm(tmp_path):
    """A 400 MB peer copy in 1 ms on an H100 SXM: 400 GB/s of NVLink 4's 450 each way, 88.9%; the same copy DtoD is
    no link row (it reads and writes HBM)."""
    n = 100_000_000
    for kind, link in (("Memcpy PtoP (Device -> Device)", "peer"), ("Memcpy DtoD (Device -> Device)", "")):
        events = [
            X("aten::copy_", 0, 1100, Input_Dims=[[n], [n], []], Input_type=["float", "float", "Scalar"]),
            X("cudaMemcpyAsync", 5, 10, cat="cuda_runtime", correlation=7),
            X(kind, 50, 1000, cat="gpu_memcpy", pid=0, tid=7, correlation=7, stream=7, device=0, bytes=4 * n),
        ]
        (row,) = results(write_trace(tmp_path / f"{link or 'd2d'}.json", events, deviceProperties=[H100])).roofline.rows
        assert row.link == link
        if link:
            assert row.bound == "link" and row.pct_of_roof == pytest.approx(100 * 400 / 450)
        else:
            assert row.bound == "memory" and row.bytes == 8 * n


def _table(out: str) -> tuple[list[str], dict[str, list[str]]]:
    """A roofline table's header and its rows by name (the first aten:: row of each name), split on 2+ spaces."""
    lines = out.splitlines()
    split = [re.split(r"\s{2,}", line.strip()) for line in lines if line.startswith(("Name", "aten::"))]
    return split[0], {row[0]: row for row in reversed(split[1:])}


def test_a_rate_column_reads_in_one_unit_its_largest_rate_chooses(capsys, monkeypatch):
    """GIVEN matmul_add 64 on the H200, whose aten::mm runs at 0.275 TFLOP/s and aten::add at 0.00441 WHEN the roofline
    table is printed THEN its rate column reads in GFLOP/s, named once in the header (it mixed "0.275" and
    "4.41 GFLOP/s"): 275 and 4.41, plain numbers; BERT on its H100, whose addmm reach 107 TFLOP/s, reads in TFLOP/s
    (its add: 0.0440); the JSON's tflops and the CSV's stay numbers in TFLOP/s."""
    monkeypatch.setenv("TRACETUI_COLUMNS", "0")
    small = str(SAMPLES / "cuda-h200" / "matmul_add_64_warm_eager.json.gz")
    assert main(["roofline", small]) == 0
    header, rows = _table(capsys.readouterr().out)
    rate = header.index("GFLOP/s")
    assert "TFLOP/s" not in header and (rows["aten::mm"][rate], rows["aten::add"][rate]) == ("275", "4.41")
    assert main(["roofline", str(SAMPLES / "h100-bert-small.json.gz")]) == 0
    header, rows = _table(capsys.readouterr().out)
    assert "GFLOP/s" not in header and rows["aten::add"][header.index("TFLOP/s")] == "0.0440"
    assert main(["roofline", small, "--format", "json"]) == 0
    add = next(r for r in json.loads(capsys.readouterr().out)["rows"] if r["name"] == "aten::add")
    assert add["tflops"] == pytest.approx(0.00441, rel=0.01)
    assert main(["roofline", small, "--format", "csv"]) == 0
    add_csv = next(r for r in csv.DictReader(capsys.readouterr().out.splitlines()) if r["name"] == "aten::add")
    assert float(add_csv["tflops"]) == pytest.approx(add["tflops"])
    assert float(add_csv["gbps"]) == pytest.approx(26.5, rel=0.01)


def test_a_cpu_trace_reads_in_mflops_and_a_rate_too_small_for_its_column_is_not_a_zero(capsys, monkeypatch):
    """GIVEN a CPU trace whose ops run at 0.129 to 242 MFLOP/s and 0.0000878 to 2.90 GB/s WHEN the roofline is printed
    THEN the FLOP/s column is in MFLOP/s (0.129, 242) and the GB/s column, its largest rate over 1 GB/s, in GB/s, a
    rate under a thousandth of it written <0.001, so that none reads as no traffic."""
    monkeypatch.setenv("TRACETUI_COLUMNS", "0")
    assert main(["roofline", str(DATA / "roofline-cpu-flops.json.gz")]) == 0
    header, rows = _table(capsys.readouterr().out)
    flops, gbps = header.index("MFLOP/s"), header.index("GB/s")
    assert (rows["aten::mul"][flops], rows["aten::mul"][gbps]) == ("242", "2.90")
    assert (rows["aten::mm"][flops], rows["aten::mm"][gbps]) == ("0.129", TINY)  # 5.1 kFLOP, 3.41 KiB in 39.7 ms
    cells = [row[i] for row in rows.values() for i in (flops, gbps)]
    assert all(c == TINY or float(c) > 0 for c in cells)


def test_the_unit_is_the_largest_the_largest_rate_reads_1_or_more_in():
    """The boundaries: 1 TFLOP/s reads in TFLOP/s, just under it in GFLOP/s, under 1 GFLOP/s in MFLOP/s; a column
    with no rate keeps TFLOP/s; 3 significant figures; none is "-", a measured zero "0"."""
    tera, giga, mega = FLOP_RATES
    assert [unit_for(rates, FLOP_RATES) for rates in ([1.0, 0.5], [0.999, None], [0.0009], [None, 0.0])] == [
        tera,
        giga,
        mega,
        tera,
    ]
    assert [fmt_in(v, giga) for v in (0.999, 0.00441, 0.00000441, 0.0000000004, None, 0.0)] == [
        "999",
        "4.41",
        "0.00441",
        TINY,
        "-",
        "0",
    ]


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_a_cpu_captures_roofline_names_its_time_cpu_time(fmt):
    """A fresh-eyes run: on a CPU capture the column headed "Device" held the ops' CPU time (only the footer said so);
    the JSON keeps device_us, the field's name for either."""
    from tui.reports.roofline import render_roofline

    cpu = render_roofline(results(SAMPLES / "cpu" / "linear_fwd.json.gz").roofline, fmt, None, 10)
    gpu = render_roofline(results(SAMPLES / "h100-bert-small.json.gz").roofline, fmt, None, 10)
    head = lambda text: next(line for line in text.splitlines() if "Name" in line)  # noqa: E731
    assert "CPU time" in head(cpu) and "Device" not in head(cpu)
    assert "Device" in head(gpu) and "CPU time" not in head(gpu)
