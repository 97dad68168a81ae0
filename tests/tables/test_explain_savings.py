"""Every explain finding says what fixing it would buy: its what-if re-solved on the critical path of the verdict's
step, the same sentence `critical --what-if` prints, findings ordered by it, the ones that save nothing last."""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLES, X, shared_traces, write_trace
from critical_traces import call, kernel, launched, op, step

from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.explain.savings import LITTLE, window
from tui.model.analyses.results import Results
from tui.tables.critical import NO_CHANGE, critical_document
from tui.tables.explain_savings import headline, no_saving, sentence, why

H100 = {"name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85018279936, "computeMajor": 9, "computeMinor": 0}
F32 = ["float", "float"]
ADD = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >"
MUL = "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, MulFunctor>>"
FFMA = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas"


def results(path) -> Results:
    return Results(load_trace(path, use_cache=False))


def by_rule(a: Results) -> dict:
    return {f.rule: f for f in a.findings}


def _elementwise(name: str, kernel_name: str, ts: float, corr: int) -> list[dict]:
    """An fp32 [1024, 1024] elementwise op: 10 us of CPU, a 5 us launch, a 20 us kernel (12 MB moved: memory-bound)."""
    dims = [[1024, 1024], [1024, 1024]]
    return [
        X(name, ts, 10, Input_Dims=dims, Input_type=F32, External_id=corr),
        X("cudaLaunchKernel", ts + 2, 5, cat="cuda_runtime", correlation=corr, External_id=corr),
        X(kernel_name, ts + 8, 20, cat="kernel", pid=0, tid=7, correlation=corr, External_id=corr, stream=7, device=0),
    ]


def cpu_bound_with_memory_ops(tmp, side_kernel: bool = False):
    """A 1,000 us step of CPU work with six memory-bound elementwise ops between: the GPU waits for the CPU. With
    side_kernel, a 400 us kernel on another stream keeps the GPU 40% busy (verdict mixed), the path still CPU."""
    events = [step(1, 0, 1000)]
    for k in range(6):
        events += _elementwise("aten::add" if k % 2 else "aten::mul", ADD if k % 2 else MUL, 10 + 160 * k, k + 1)
        events.append(op("python work", 25 + 160 * k, 140))
    if side_kernel:
        events += [call("cudaLaunchKernel", 1, 2, corr=99), kernel("side_kernel", 4, 400, corr=99, stream=8)]
    return write_trace(tmp / f"cpu_bound{'_side' if side_kernel else ''}.json", events, deviceProperties=[H100])


def test_memory_bound_ops_on_a_cpu_bound_step_save_nothing_and_sink(tmp_path):
    a = results(cpu_bound_with_memory_ops(tmp_path))
    found = by_rule(a)
    fuse, idle = found["roofline-memory"], found["overhead-gaps"]
    assert fuse.saving is not None and fuse.saving.saving_ns == 0 and fuse.saving.why == "gpu-waits"
    assert fuse.saving.spec == "kernel:role=elementwise=2" and headline(fuse) == "saves nothing"
    assert "the GPU waits for the CPU: CPU work is 100% of the path" in why(fuse.saving)
    assert a.findings[-1] is fuse  # saves nothing: last
    assert idle.saving is not None and idle.saving.spec == "graphs" and idle.saving.share > 0.4  # its CPU work gone
    assert a.findings[0] is idle  # the GPU idle while the CPU works leads


def test_the_idle_gpu_finding_fires_whenever_the_path_says_the_gpu_waits(tmp_path):
    a = results(cpu_bound_with_memory_ops(tmp_path, side_kernel=True))
    assert a.summary.verdict == "overhead-bound" and a.summary.gpu_utilization > 0.3  # the path, not the busy share
    idle = by_rule(a)["overhead-gaps"]
    assert "overhead-path" in idle.templates and idle.figures["window"] == "ProfilerStep#1"
    assert idle.saving is not None and idle.saving.saving_ns > 0


def test_an_ffma_gemm_is_fp32_on_cuda_cores_and_tf32_buys_its_share(tmp_path):
    """An fp32 GEMM cuBLAS ran with FFMA (the issue's sm80_xmma_..._ffma): no tensor-core note, the fp32 finding
    with the H100's TF32/fp32 peak ratio as its what-if, the same sentence as critical --what-if."""
    dims = [[2048, 2048], [2048, 2048]]
    events = [step(1, 0, 1000), X("aten::mm", 5, 20, Input_Dims=dims, Input_type=F32, External_id=1)]
    events += launched(FFMA, 8, 5, 15, 900, corr=1)
    events += [call("cudaDeviceSynchronize", 30, 890, corr=2)]
    a = results(write_trace(tmp_path / "ffma.json", events, deviceProperties=[H100]))
    found = by_rule(a)
    assert "kernel-tensor-core" not in found
    fp32 = found["roofline-fp32-gemm"]
    assert fp32.title == "fp32 GEMMs off the tensor cores"
    assert fp32.saving is not None and fp32.saving.spec == "kernel:role=gemm,unit=vector,dtype=fp32=7.38"
    assert fp32.saving.share > 0.5 and a.findings[0] is fp32
    assert found["kernel-fp32-gemm"].saving is None  # the same change: told once, by the roofline finding
    assert "same change as 'fp32 GEMMs off the tensor cores'" in no_saving(found["kernel-fp32-gemm"])
    said = critical_document(a, what_if=[fp32.saving.spec])["what_if"]["sentence"]
    assert sentence(fp32.saving) == said and said.startswith("fp32 CUDA-core GEMM kernels 7.38× faster saves")


def test_a_harmless_wait_is_told_at_its_real_worth(tmp_path):
    """The issue's cudaMemcpyAsync holding the CPU for 92% of a step on a GPU 96% busy: removing it saves ~3%."""
    events = [step(1, 0, 1000), op("aten::item", 18, 960)]
    events += launched("big_kernel", 5, 5, 12, 950, corr=1)
    events += [
        call("cudaMemcpyAsync", 20, 950, corr=2),
        kernel("Memcpy DtoH (Device -> Pageable)", 963, 4, 2, cat="gpu_memcpy"),
    ]
    events += [op("python work", 980, 20)]
    a = results(write_trace(tmp_path / "d2h.json", events, deviceProperties=[H100]))
    wait = by_rule(a)["cpu-waits"]
    assert wait.figures["share"].value > 0.9  # the note still says how long the CPU waited ...
    assert wait.saving is not None and wait.saving.spec == "sync:^cudaMemcpyAsync$=0"
    assert 0 < wait.saving.share < 0.05  # ... and the what-if what removing the wait would buy: a few percent


def test_findings_without_a_what_if_say_why_and_json_gives_saving_us(capsys):
    trace = SAMPLES / "h100-bert-small.json.gz"
    a = results(trace)
    notes = [f for f in a.findings if f.saving is None]
    assert notes and all(no_saving(f) for f in notes)
    assert main(["explain", str(trace), "--format", "json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["findings"]) == len(a.findings)
    for f, got in zip(a.findings, doc["findings"], strict=True):
        assert got["rule"] == f.rule and ("saving_us" in got)
        assert (got["saving_us"] is None) == (got["what_if"] is None) == (f.saving is None)
        assert (got["no_saving"] is None) == (got["what_if"] is not None)
        if f.saving is not None:
            assert got["saving_us"] == pytest.approx(f.saving.saving_ns / 1000, abs=1e-3)
            assert got["what_if"]["sentence"] == sentence(f.saving)


# ---- every sample and shared trace -------------------------------------------------------------------------

TRACES = sorted(SAMPLES.glob("*.json.gz")) + shared_traces()


@pytest.mark.parametrize("path", TRACES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_finding_has_a_saving_or_a_reason_ordered_and_said_as_critical_says_it(path):
    a = Results(load_trace(path))
    found = a.findings
    for f in found:
        assert (f.saving is None) == bool(f.no_saving), f.rule
    groups = [0 if f.saving is not None and f.saving.saving_ns > 0 else 1 if f.saving is None else 2 for f in found]
    assert groups == sorted(groups)  # whatever saves anything (22 us too), then the notes, then what saves nothing
    savings = [f.saving.saving_ns for f in found if f.saving is not None and f.saving.saving_ns > 0]
    assert savings == sorted(savings, reverse=True)
    if a.trace.job:
        return
    for f in found:
        if f.saving is not None and f.saving.why != "absent":
            assert f.saving.window == window(a).name
            said = critical_document(a, what_if=[f.saving.spec])["what_if"]["sentence"]
            for why in NO_CHANGE.values():  # critical says why nothing is saved; explain says it in its own words
                said = said.replace(why, "")
            assert said == sentence(f.saving)


# ---- the H200 series: each capture's lesson leads its findings -----------------------------------------------

H200 = [p for p in shared_traces() if p.parent.name == "cuda-h200-series"]
LEADS = {
    # the tiny matmul is launch-bound: its first finding is the GPU idle while the CPU launches, and CUDA graphs (its
    # CPU work gone, not only the launch calls) buy it
    "matmul_add_64_warm_eager.json.gz": ("overhead-gaps", "graphs"),
    "matmul_add_64_cold_eager.json.gz": ("overhead-gaps", "graphs"),
    # the big matmul is GEMM-bound: its GEMM against its roof leads
    "matmul_add_4096_warm_eager.json.gz": ("roofline-gemm", "kernel:^nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT$"),
    "matmul_add_4096_cold_eager.json.gz": ("roofline-gemm", "kernel:^nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT$"),
    # the math SDPA runs its GEMMs in fp32 on the CUDA cores: TF32 is worth the most
    "attn_sdpa_math.json.gz": ("roofline-fp32-gemm", "kernel:role=gemm,unit=vector,dtype=fp32"),
    # naive attention materialises the scores: its softmax and elementwise ops are memory-bound, fusing them leads
    "attn_naive.json.gz": ("roofline-memory", "kernel:role=elementwise|softmax=2"),
    "attn_inplace.json.gz": ("roofline-memory", "kernel:role=elementwise|softmax=2"),
    # the eager MLP's typical step: its first GEMM against its roof (12% of the path) leads the fusion of the GELU
    # and multiply between its GEMMs that torch.compile does (11%), a close second
    "mlp_fwd_eager.json.gz": ("roofline-gemm", "kernel:^nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT$"),
}


@pytest.mark.skipif(not H200, reason="the shared cuda-h200-series traces are not here")
@pytest.mark.parametrize("name", sorted(LEADS))
def test_the_h200_series_lesson_leads(name):
    a = Results(load_trace(H200[0].parent / name))
    first = a.findings[0]
    rule, spec = LEADS[name]
    assert first.rule == rule and first.saving is not None and first.saving.spec.startswith(spec)
    assert first.saving.share >= LITTLE


def test_the_overview_names_the_fix_worth_most(tmp_path):
    from tui.tables.explain_savings import biggest_saving

    a = results(cpu_bound_with_memory_ops(tmp_path))
    line = biggest_saving(a.findings)
    assert line is not None and line.startswith("The fix worth most on the critical path of ProfilerStep#1: GPU idle")
    assert biggest_saving([f for f in a.findings if f.rule == "roofline-memory"]) == (
        "No finding's fix saves 1% of the critical path of ProfilerStep#1 (1.00 ms): see the path (8)."
    )


def test_a_graphs_saving_says_what_a_graph_cannot_capture_as_critical_does(capsys):
    """The BERT sample's top finding saved 90% with CUDA graphs but left out what `critical --what-if graphs` says
    beside it: the step holds a synchronize no graph can capture. The finding's what-if now carries that note."""
    bert = str(SAMPLES / "h100-bert-small.json.gz")
    assert main(["critical", bert, "--what-if", "graphs", "--no-cache"]) == 0
    said = capsys.readouterr().out
    assert "the region holds 1 blocking call" in said
    assert main(["explain", bert, "--format", "json", "--no-cache"]) == 0
    findings = json.loads(capsys.readouterr().out)["findings"]
    graphs = [f for f in findings if f["what_if"] and f["what_if"]["spec"].startswith("graphs")]
    assert graphs and all(any("1 blocking call" in n for n in f["what_if"]["notes"]) for f in graphs)
    others = [f for f in findings if f["what_if"] and not f["what_if"]["spec"].startswith("graphs")]
    assert others and not any(f["what_if"]["notes"] for f in others)
    assert main(["explain", bert, "--no-cache"]) == 0
    assert "Note: the region holds 1 blocking call" in capsys.readouterr().out
