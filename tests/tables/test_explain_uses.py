"""Advice that knows the run: what a trace shows the run already uses (torch.compile, CUDA graphs, its math's dtype,
TF32), no explain note, overview reading or critical advice recommending it, each saying what comes next; and the
findings ordered by what they save, the notes after them."""

from __future__ import annotations

import pytest
from conftest import SAMPLES, SHARED, shared_traces

from tui.model import load_trace
from tui.model.analyses.explain.findings import Finding, Saving
from tui.model.analyses.explain.readings import readings
from tui.model.analyses.explain.savings import order
from tui.model.analyses.explain.uses import Uses, next_words, run_uses
from tui.model.analyses.results import Results
from tui.tables.critical import advice, shown_groups
from tui.tables.explain import note
from tui.tables.explain_savings import headline

H200 = SHARED / "cuda-h200-series"
needs_shared = pytest.mark.skipif(not H200.is_dir(), reason="needs ../shared/traces")

# What each piece of advice recommends, as its words say it (the notes that only describe, such as the
# torch.compile runtime's rows, recommend nothing).
RECOMMENDS = {
    "compile": (
        "torch.compile (fewer, fused kernels)",
        "fusion (torch.compile)",
        "Fuse them (torch.compile)",
        "use torch.compile",
        "fusing them (torch.compile",
        "torch.compile to fuse them",
        "or torch.compile would help",
    ),
    "graphs": (
        "and CUDA graphs (torch.compile(mode='reduce-overhead')",
        "what comes next is CUDA graphs",
        "A CUDA graph takes their launch overhead",
        "or CUDA graphs remove both",
        "or CUDA graphs (tracetui critical",
    ),
    "autocast": ("bf16/fp16 (torch.autocast), or TF32", "lower precision (torch.autocast", "Compute in bf16"),
    "channels_last": ("memory_format=torch.channels_last",),
}


def results(path) -> Results:
    return Results(load_trace(path))


def said(a: Results) -> str:
    """Every piece of advice tracetui gives on a trace: explain's notes, the overview's readings, critical's advice."""
    texts = [note(f) for f in a.findings] + readings(a.summary, a.uses)
    try:
        texts += crit_advice(a)
    except Exception:  # a trace without a window to solve (no critical path) has no critical advice
        pass
    return "\n".join(texts)


def crit_advice(a: Results) -> list[str]:
    """critical's advice on the trace's default path, naming the groups its table shows."""
    return advice(a.critical, shown_groups(a, a.critical)[0], a.uses)


def in_use(u: Uses) -> list[str]:
    used = (("compile", u.compiled), ("graphs", u.graph_launches), ("autocast", u.low_precision))
    return [k for k, on in (*used, ("channels_last", u.channels_last)) if on]


# ---- what the run uses, on real captures whose README says how they were made ------------------------------------


@needs_shared
@pytest.mark.parametrize(
    ("name", "compiled", "graphs", "dtype"),
    [
        ("mlp_fwd_eager", False, False, "bf16"),
        ("mlp_fwd_compiled", True, False, "bf16"),
        ("mlp_fwd_compiled_reduce_overhead", True, True, "bf16"),
        ("matmul_add_4096_warm_compiled_reduce_overhead", True, True, "bf16"),
        ("attn_naive", False, False, "bf16"),
    ],
)
def test_the_h200_series_runs_are_read_as_they_were_captured(name, compiled, graphs, dtype):
    """The series' workloads: eager, torch.compile, and torch.compile(mode='reduce-overhead'), all bf16 (nvjet
    kernels); reduce-overhead replays the step from CUDA graph launches."""
    u = run_uses(results(H200 / f"{name}.json.gz"))
    assert (bool(u.compiled), bool(u.graph_launches), u.math_dtype) == (compiled, graphs, dtype)
    assert u.cpu_next == ("cpu-graphed" if graphs else "cpu-compiled" if compiled else "cpu-eager")
    assert u.gpu_next == ("gpu-kernels" if compiled else "gpu-eager")


@needs_shared
def test_replays_of_vllm_and_sglang_and_a_compiled_mi300x_run():
    vllm = run_uses(results(SHARED / "tracelens-2026-07-mi300-vllm-piecewise-graph-pair" / "graph_execution.json.gz"))
    assert vllm.graph_launches == 25 and vllm.graphed and vllm.math_dtype == "bf16"
    sglang = next((SHARED / "tracelens-2026-06-b300-sglang-qwen3moe-decode-cudagraph").glob("*.json.gz"))
    u = run_uses(results(sglang))
    assert u.graph_launches == 1 and u.graph_share > 0.9 and u.cpu_next == "cpu-graphed"
    mi300x = next((SHARED / "tracelens-2026-05-mi300x-torch-compile-triton").glob("*.json.gz"))
    assert run_uses(results(mi300x)).cpu_next == "cpu-compiled"


def test_fp32_and_tf32_gemms():
    """The A100 control trace's GEMMs ran TF32 (cutlass s1688) beside some sgemm kernels: TF32 is allowed, so its
    fp32 kernels are not told to allow it."""
    a = results(SAMPLES / "a100-train-control.json.gz")
    u = run_uses(a)
    assert u.math_dtype == "fp32" and u.tf32 and u.gpu_next != "gpu-fp32"
    (measured,) = [f for f in a.findings if f.rule == "roofline-fp32-gemm"]
    assert "TF32 is already allowed" in note(measured) and "set_float32_matmul_precision" not in note(measured)
    # the kernel-name hint about the same sgemm kernels says how to tell them, and leaves the advice to the roofline
    # finding (both said the same, one under the other)
    (hint,) = [f for f in a.findings if f.rule == "kernel-fp32-gemm"]
    assert "TF32" not in note(hint) and measured.title in note(hint)


# ---- no advice for what is in use, on every trace -------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.json.gz")) + shared_traces(), ids=lambda p: p.name)
def test_no_advice_recommends_what_the_run_already_uses(path):
    a = results(path)
    if a.trace.job:
        return
    text = said(a)
    for used in in_use(a.uses):
        hits = [words for words in RECOMMENDS[used] if words in text]
        assert not hits, (used, hits)


@needs_shared
def test_what_comes_next_on_compiled_and_graphed_runs():
    """A compiled CPU-bound run: CUDA graphs next; a graphed one: what is outside the graphs; GPU-bound with bf16,
    torch.compile and graphs: the kernels themselves against their roofs."""
    compiled = results(H200 / "mlp_fwd_compiled.json.gz")
    lines = crit_advice(compiled)
    cpu = next(line for line in lines if line.startswith("CPU work"))
    assert "what comes next is CUDA graphs, torch.compile(mode='reduce-overhead')" in cpu
    graphed = results(H200 / "mlp_fwd_compiled_reduce_overhead.json.gz")
    lines = crit_advice(graphed)
    assert "already replays its work from CUDA graphs (2 graph launches, 92% of the device time)" in lines[0]
    gpu = next(line for line in lines if line.startswith("GPU compute"))
    assert "already uses bf16 on the tensor cores, torch.compile and CUDA graphs: what is left is the kernels" in gpu
    eager = results(H200 / "mlp_fwd_eager.json.gz")
    assert any("torch.compile (fewer, fused kernels) and CUDA graphs" in line for line in crit_advice(eager))


def test_next_words_fill_from_the_run():
    u = Uses(compiled=3, graph_launches=4, graph_share=0.3, math_dtype="fp32", tf32=True)
    assert "part of its work from CUDA graphs (4 graph launches, 30% of the device time)" in next_words(u, u.cpu_next)
    assert "already uses TF32 on the tensor cores, torch.compile and CUDA graphs" in next_words(u, u.gpu_next)
    assert Uses(math_dtype="fp32").gpu_next == "gpu-fp32"
    assert Uses(math_dtype="bf16").gpu_next == "gpu-eager"


# ---- findings with a saving first, by what they save; the notes after them --------------------------------------


def _found(rule: str, saving_ns: int | None, length_ns: int = 5_100_000) -> Finding:
    s = None if saving_ns is None else Saving("x", "ProfilerStep#3", length_ns, length_ns - saving_ns, "cpu_bound",
                                               "cpu_bound", 0.6)  # fmt: skip
    return Finding(rule, rule, {}, saving=s, no_saving="" if s else "note")


def test_a_small_saving_comes_before_the_notes():
    """A 22 us finding (0.4% of a 5.1 ms path) was listed after four notes; now every saving comes first, by its size,
    then the notes, then what saves nothing; its headline keeps its figure."""
    found = [_found(f"note{k}", None) for k in range(4)]
    found += [_found("small", 22_000), _found("none", 0), _found("big", 900_000)]
    assert [f.rule for f in order(found)] == ["big", "small", "note0", "note1", "note2", "note3", "none"]
    small = next(f for f in found if f.rule == "small")
    assert headline(small) == "saves next to nothing (22.0 us of 5.10 ms)"


# ---- the layout: a bf16 conv on the CUDA cores, cuDNN's transposes ------------------------------------------------

BF16_CONV = (
    "void precomputed_convolve_sgemm<__nv_bfloat16, 1024, 5, 5, 4, 3, 3, 1, false>(int, int, int, __nv_bfloat16 "
    "const*, int, __nv_bfloat16*, __nv_bfloat16 const*, kernel_conv_params, unsigned long long, int, float, float)"
)
TRANSPOSE = "void nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, true, false, (cudnnKernelDataType_t)2>(int)"
NHWC_CONV = "sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1"


def _kernels(tmp_path, names: list[str]) -> Results:
    from conftest import X, write_trace

    events = []
    for k, name in enumerate(names):
        events += [
            X("aten::cudnn_convolution", 100 * k, 50, External_id=k + 1),
            X("cudaLaunchKernel", 100 * k + 5, 5, cat="cuda_runtime", correlation=k + 1, External_id=k + 1),
            X(name, 100 * k + 12, 30, cat="kernel", pid=0, tid=7, correlation=k + 1, stream=7, device=0),
        ]
    return Results(load_trace(write_trace(tmp_path / "conv.json", events), use_cache=False))


def test_a_bf16_conv_on_the_cuda_cores_and_cudnns_transposes_ask_for_channels_last(tmp_path):
    """The issue's precomputed_convolve_sgemm<__nv_bfloat16, ...> is bf16 data on the CUDA cores: not 'use bf16', but
    why no tensor-core kernel was picked; nchwToNhwcKernel says the model is channels-first."""
    a = _kernels(tmp_path, [BF16_CONV, TRANSPOSE])
    rules = {f.rule: f for f in a.findings}
    assert "kernel-fp32-gemm" not in rules and a.uses.math_dtype == "bf16" and a.uses.transposes
    assert "picked a kernel without tensor cores" in note(rules["kernel-half-cuda-core"])
    assert "channels_last (model.to(memory_format=torch.channels_last)" in note(rules["kernel-half-cuda-core"])
    assert "cuDNN copies each tensor to NHWC and back" in note(rules["kernel-layout-transpose"])


def test_a_channels_last_run_is_not_told_to_use_channels_last(tmp_path):
    a = _kernels(tmp_path, [BF16_CONV, NHWC_CONV])
    assert a.uses.channels_last and not a.uses.transposes
    rules = {f.rule: f for f in a.findings}
    assert "already channels_last" in note(rules["kernel-half-cuda-core"])
    assert "memory_format" not in note(rules["kernel-half-cuda-core"]) and "kernel-layout-transpose" not in rules


# ---- a slow host copy, against its link ---------------------------------------------------------------------------


def test_slow_host_copies_are_told_against_the_gpus_host_link(tmp_path):
    """The same slow copies (0.16 GB/s) on a GPU the table knows (an H200: PCIe 5.0 x16, 64 GB/s each way) and on one
    without a device (the stated default, PCIe 4.0 x16)."""
    import gzip
    import json

    from device_traces import tiny_pageable_copies

    path = tiny_pageable_copies(tmp_path)
    doc = json.loads(path.read_text())
    default = Results(load_trace(path, use_cache=False))
    (found,) = [f for f in default.findings if f.rule == "slow-copies"]
    assert "PCIe 4.0 x16 at 32 GB/s each way (an assumed default" in note(found)
    doc["deviceProperties"] = [{"name": "NVIDIA H200", "totalGlobalMem": 150754820096, "computeMajor": 9}]
    h200 = tmp_path / "h200.json.gz"
    with gzip.open(h200, "wt") as f:
        json.dump(doc, f)
    (found,) = [f for f in Results(load_trace(h200, use_cache=False)).findings if f.rule == "slow-copies"]
    assert found.figures["link_pct"].value == pytest.approx(4096 / 25e3 / 64, rel=1e-3)
    assert "0% of the host link, PCIe 5.0 x16 at 64 GB/s each way (the GPU's)" in note(found)


def test_an_empty_step_is_named_as_such_and_gets_no_remedy():
    """a100-triton-small's one step lasts 13.34 s and records nothing after its first 1.7 ms (all on another thread): its path is the step's
    own span, nothing inside it. That is not CPU work to make cheaper (it once got CUDA-graph advice); a step with
    recorded work beside it still gets the class's remedy."""
    empty = Results(load_trace(SAMPLES / "a100-triton-small.json.gz"))
    p = empty.critical
    [item] = p.items
    assert (item.event, item.dur_ns) == (p.event, p.length_ns)  # the step's self time is the whole path
    [line] = advice(p, shown_groups(empty, p)[0], empty.uses)
    assert line.startswith(f"{p.window} is empty: nothing is recorded in 13.34 s of its 13.34 s")
    assert not any(words in line for group in RECOMMENDS.values() for words in group) and "CUDA graphs" not in line
    busy = Results(load_trace(SAMPLES / "a100-train-control.json.gz"))
    assert not any("is empty" in line for line in crit_advice(busy))
