"""Each explain rule fires where the pattern is, and stays quiet where it is not."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import ROOT, SAMPLES, SHARED, X, write_trace
from device_traces import tiny_pageable_copies
from lost_records import lost_records

from tui.model import load_trace
from tui.model.analyses.explain.findings import Finding, Quantity
from tui.model.analyses.explain.rules import RULES, NoteIndex
from tui.model.analyses.results import Results
from tui.model.cats import Cat
from tui.model.words import duration
from tui.tables.explain import note


def findings(name_or_path, rule_prefix: str):
    path = name_or_path if not isinstance(name_or_path, str) else SAMPLES / name_or_path
    a = Results(load_trace(path, use_cache=False))
    return a, [f for f in a.findings if f.rule.startswith(rule_prefix)]


def test_final_sync_is_the_last_device_synchronize_only():
    a, found = findings("b300-moe-small.json.gz", "final-sync")
    syncs = [i for i in range(a.trace.n) if a.trace.name_of(i) == "cudaDeviceSynchronize"]
    assert len(syncs) == 4 and len(found) == 1
    assert found[0].events == [max(syncs, key=lambda i: a.end[i])]
    assert "profiler flushing" in note(found[0])
    assert findings("cpu-only-gloo.json.gz", "final-sync")[1] == []


def test_activity_buffer_request_is_profiler_overhead():
    a, found = findings("b300-moe-small.json.gz", "activity-buffer")
    assert [a.trace.name_of(e) for e in found[0].events] == ["Activity Buffer Request"]
    assert findings("h100-bert-small.json.gz", "activity-buffer")[1] == []


def test_occupancy_query_points_at_the_gemm_it_precedes():
    a, found = findings("a100-train-control.json.gz", "occupancy-query")
    assert found and all("Occupancy" in a.trace.name_of(e) for e in found[0].events)
    assert "GEMM" in note(found[0]) and "gemm" in note(found[0]).split("here:")[1]
    assert findings("h100-bert-small.json.gz", "occupancy-query")[1] == []
    # on the B300 trace the queries precede a sort kernel, not a GEMM: no claim is made
    assert findings("b300-moe-small.json.gz", "occupancy-query")[1] == []


def test_metadata_ops_launch_no_kernel():
    a, found = findings("h100-bert-small.json.gz", "metadata-op")
    names = {a.trace.name_of(e) for e in found[0].events}
    assert {"aten::view", "aten::transpose"} <= names
    assert all(not len(a.links.launched(j)) for e in found[0].events for j in [e, *a.descendants(e)])
    assert "aten::linear" not in names and "aten::addmm" not in names
    # on a CPU-only capture nothing launches kernels, so the rule has nothing to say
    assert findings("cpu/linear_fwd.json.gz", "metadata-op")[1] == []


# No trace in the shared set shows a bias copy (cuBLASLt now fuses the bias); events as the series' A100 trace had them.
BIAS_COPY = [
    X("aten::linear", 0, 100, External_id=1),
    X("aten::addmm", 5, 90, External_id=2),
    X("cudaMemcpyAsync", 10, 5, cat="cuda_runtime", External_id=2, correlation=10),
    X("cudaLaunchKernel", 20, 5, cat="cuda_runtime", External_id=2, correlation=11),
    X("Memcpy DtoD (Device -> Device)", 30, 2, cat="gpu_memcpy", pid=0, tid=7, External_id=2, correlation=10),
    X("sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", 33, 20, cat="kernel", pid=0, tid=7, External_id=2, correlation=11),
]


def test_bias_copy_before_addmm_gemm(tmp_path):
    a, found = findings(write_trace(tmp_path / "t.json", BIAS_COPY), "bias-copy")
    assert found[0].events == [4]
    # real device-to-device copies from aten::clone/copy_ are not bias copies
    assert findings("a100-ddp-nccl.json.gz", "bias-copy")[1] == []


COLD = "cuda-h200/matmul_add_4096_cold_eager.json.gz"  # captured cold: its first profiled step pays the warm-up


def test_cold_first_step():
    a, found = findings(COLD, "cold-start")
    assert [a.trace.name_of(e) for e in found[0].events] == ["ProfilerStep#2"]
    assert "cold start" in note(found[0])
    assert findings("a100-train-control.json.gz", "cold-start")[1] == []
    assert findings("cpu/matmul_add_512_warm_eager.json.gz", "cold-start")[1] == []


def test_cold_start_ratio_is_against_the_typical_step_it_names():
    """GIVEN a CPU capture whose first step (197.3 us) is cold and whose two others took 87.1 and 63.3 us WHEN
    explain and the overview measure the first step THEN both say the ratio against the typical step the summary
    reports, a step that ran (63.3 us, the faster of the two, named), not their mean (75.2 us: 2.6x)."""
    a, found = findings("cpu/linear_fwd.json.gz", "cold-start")
    from tui.model.analyses.explain.readings import cold_start_reading

    assert round(a.summary.typical.us, 1) == 63.3 and a.summary.typical.step.name == "ProfilerStep#4"
    said = "took 197.3 us: 3.1x the typical step, the faster of the other 2 steps (ProfilerStep#4, 63.3 us)"
    assert said in note(found[0])
    assert said in (cold_start_reading(a.summary) or "")


def test_gpu_idle_while_cpu_launches():
    a, found = findings("h100-bert-small.json.gz", "overhead-gaps")
    assert found and a.summary.verdict == "overhead-bound" and "idle" in note(found[0])
    # 84% busy, and the typical step's path is 38% collectives, 35% CPU work: mixed, and the GPU does not wait for
    # the CPU most of the path, so no idle-GPU finding (the slowest step, #1014, was 58% CPU work)
    a, found = findings("a100-train-control.json.gz", "overhead-gaps")
    assert a.summary.verdict == "mixed" and found == []
    assert findings("v100-cudagraph-test.json.gz", "overhead-gaps")[1] == []  # compute-bound, path 71% GPU compute


def test_a_slow_first_launch_is_told_its_own_runtimes_loader_switch():
    """HIP loads a kernel's code object at its first launch unless HIP_ENABLE_DEFERRED_LOADING=0; CUDA_MODULE_LOADING
    is CUDA's and means nothing to ROCm. The MI250 capture's slow call is a hipLaunchKernel (6.5 ms); the A100's a
    cudaLaunchKernel."""
    a, found = findings("mi250-rocm-train.json.gz", "slow-launch")
    [slow] = [f for f in found if f.title == "Launch calls far slower than the rest"]
    assert a.trace.name_of(slow.events[0]) == "hipLaunchKernel"
    said = note(slow)
    assert "HIP_ENABLE_DEFERRED_LOADING=0" in said and "CUDA_MODULE_LOADING" not in said
    a, found = findings("a100-train-control.json.gz", "slow-launch")
    [slow] = [f for f in found if f.title == "Launch calls far slower than the rest"]
    assert a.trace.name_of(slow.events[0]).startswith("cuda")
    said = note(slow)
    assert "CUDA_MODULE_LOADING=EAGER" in said and "HIP_" not in said


def test_slow_launches_and_waiting_copies_are_told_apart():
    a, found = findings("mi250-rocm-train.json.gz", "slow-launch")
    assert [f.title for f in found] == ["Launch calls far slower than the rest"]
    assert a.trace.name_of(found[0].events[0]) == "hipLaunchKernel"
    # the copies to the host that wait inside a step are the cpu-waits rule's: no event gets both notes
    a, found = findings("a100-train-control.json.gz", "")
    assert not [o for o in a.summary.launch_outliers if o.name.startswith("cudaMemcpy")]  # a wait is no outlier
    expected = [o.event for o in a.summary.blocking_copies]
    waits = next(f for f in found if f.rule == "cpu-waits")
    assert len(expected) >= 10 and set(expected) <= set(waits.events)
    assert [f for f in found if f.rule == "slow-launch" and f.title == "Copies that wait for the GPU"] == []
    a, found = findings("v100-cudagraph-test.json.gz", "slow-launch")
    copies = next(f for f in found if f.title == "Copies that wait for the GPU")
    assert "pin_memory=True" in note(copies) and all(a.trace.name_of(e) == "cudaMemcpyAsync" for e in copies.events)
    assert [a.trace.name_of(int(g)) for e in copies.events for g in a.links.launched(e)] == [
        "Memcpy DtoD (Device -> Device)"
    ]
    assert findings("h100-bert-small.json.gz", "slow-launch")[1] == []


def test_setup_gap_before_the_first_op():
    a, found = findings("mi250-rocm-train.json.gz", "setup-gap")
    assert [a.trace.name_of(e) for e in found[0].events] == ["Optimizer.step#SGD.step"]
    for name in ("cpu/matmul_add_64_cold_eager.json.gz", "cpu/mlp_fwd.json.gz", "a100-train-control.json.gz"):
        assert findings(name, "setup-gap")[1] == []


def test_compile_runtime_rows():
    a, found = findings("cpu/matmul_add_64_warm_compiled.json.gz", "compile-runtime")
    titles = {f.title for f in found}
    assert {
        "torch.compile: Torch-Compiled Region",
        "torch.compile: TorchDynamo Cache Lookup",
        "torch.compile: ## Call CompiledFxGraph",
    } <= titles
    assert findings("cpu/matmul_add_64_warm_eager.json.gz", "compile-runtime")[1] == []


@pytest.mark.parametrize(
    ("trace", "rule", "example", "absent_in"),
    [
        ("v100-2021-small.json.gz", "kernel-fp32-gemm", "sgemm", "h100-bert-small.json.gz"),
        ("h100-bert-small.json.gz", "kernel-tensor-core", "tensorop|xmma|s16816", "v100-2021-small.json.gz"),
        ("a100-triton-small.json.gz", "kernel-triton", "triton_", "h100-bert-small.json.gz"),
        ("h100-bert-small.json.gz", "kernel-attention", "flash|fmha", "a100-train-control.json.gz"),
        ("a100-ddp-nccl.json.gz", "kernel-nccl", "nccl", "h100-bert-small.json.gz"),
    ],
)
def test_kernel_name_hints(trace, rule, example, absent_in):
    a, found = findings(trace, rule)
    assert found and all(re.search(example, a.trace.name_of(e).lower()) for e in found[0].events[:20])
    assert findings(absent_in, rule)[1] == []


# Where each rule fires on a real trace; a new rule without an entry here fails the test below.
FIRES_ON = {
    "final-sync": "b300-moe-small.json.gz",
    "activity-buffer": "b300-moe-small.json.gz",
    "occupancy-query": "a100-train-control.json.gz",
    "metadata-op": "h100-bert-small.json.gz",
    "bias-copy": BIAS_COPY,
    "cold-start": COLD,
    "cpu-time": "cpu/linear_fwd.json.gz",
    "overhead-gaps": "h100-bert-small.json.gz",
    "slow-launch": "mi250-rocm-train.json.gz",
    "setup-gap": "mi250-rocm-train.json.gz",
    "compile-runtime": "cpu/matmul_add_64_warm_compiled.json.gz",
    "compiling": [  # as torch 2.13's Dynamo records a first call that compiles (a CPU capture of ours)
        X("ProfilerStep#1", 0, 9000, cat="user_annotation"),
        X("dynamo", 10, 8000),
        X("entire_frame_compile", 20, 7900),
        X("compile_attempt_0 (dynamo_timed)", 30, 7800),
        X("Torch-Compiled Region: 0/0", 8100, 500),
    ],
    "kernel-names": "h100-bert-small.json.gz",
    "cpu-waits": "a100-train-control.json.gz",
    "records-missing": lost_records,
    "sync-records": [
        X("cudaStreamWaitEvent", 0, 3, cat="cuda_runtime", correlation=7),
        X("Stream Wait Event", 1, 2, cat="cuda_sync", pid=0, tid=24, correlation=7),
    ],
    "graph-launches": "v100-cudagraph-test.json.gz",
    "graph-capture-in-window": [
        X("cudaStreamBeginCapture", 0, 2, cat="cuda_runtime", correlation=1),
        X("cudaStreamEndCapture", 10, 2, cat="cuda_runtime", correlation=2),
    ],
    "graph-uncredited": "v100-cudagraph-test.json.gz",
    "graph-input-copies": "cuda-h200/matmul_add_4096_warm_compiled_reduce_overhead.json.gz",
    "roofline-gemm": "h100-bert-small.json.gz",
    "roofline-memory": "h100-bert-small.json.gz",
    "roofline-fp32-gemm": "mi250-rocm-train.json.gz",
    "roofline-tiny-gemm": "b300-moe-small.json.gz",
    "launch-queue": "h100-bert-small.json.gz",
    "slow-copies": tiny_pageable_copies,
    "collective-no-kernel": [  # a GPU run's all-reduce that launched no collective kernel (world size 1)
        X("aten::mm", 0, 10),
        X("cudaLaunchKernel", 2, 5, cat="cuda_runtime", correlation=1),
        X("nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT", 8, 4, cat="kernel", pid=0, tid=7, correlation=1),
        X("c10d::allreduce_", 20, 30),
        X("nccl:all_reduce", 22, 20, cat="user_annotation"),
    ],
}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_every_rule_fires_on_a_trace(rule, tmp_path):
    """Each rule's own finder finds something on its trace (asserted on the findings, not on test source)."""
    trace = FIRES_ON[rule.id]
    if callable(trace):  # a trace made from a real one
        path = trace(tmp_path)
    else:
        path = write_trace(tmp_path / "t.json", trace) if isinstance(trace, list) else SAMPLES / trace
    a = Results(load_trace(path, use_cache=False))
    found = rule.find(a, a.summary)
    assert found and all(note(f) and f.title for f in found)
    assert all(0 <= e < a.trace.n for f in found for e in f.events)


def test_notes_are_indexed_by_event():
    a, _ = findings("b300-moe-small.json.gz", "")
    notes = NoteIndex(a.findings).notes
    abr = int(np.flatnonzero([a.trace.names[n] == "Activity Buffer Request" for n in a.trace.x.name])[0])
    assert any("profiler overhead" in note(f) for f in notes(abr))
    assert all(abr + 1 in f.events for f in notes(abr + 1))


QWEN = SHARED / "tracelens-2025-07-h100-qwen1.5-0.5b" / "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
EVENT_SYNC = SHARED / "hta-2024-02-a100-cuda-event-sync" / "event_sync_trace.json.gz"
MULTISTREAM = SHARED / "hta-2024-04-a100-cuda-event-sync-multistream" / "event_sync_trace.json.gz"
shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/traces is absent")


@shared
def test_cpu_waits_names_the_mid_step_synchronize_not_the_final_flush():
    a, found = findings(QWEN, "cpu-waits")
    flush = findings(QWEN, "final-sync")[1][0].events[0]
    sync = found[0].events[0]
    assert a.trace.name_of(sync) == "cudaDeviceSynchronize" and flush not in found[0].events
    fig = found[0].figures
    assert fig["step"] == "ProfilerStep#6" and fig["dur"] == Quantity(a.trace.x.dur[sync] / 1000, "us")
    assert fig["dur"].value == pytest.approx(14102.53) and fig["share"].value == pytest.approx(0.299, abs=0.001)
    assert "torch/cuda/__init__.py" in str(fig["frame"])
    assert "14.10 ms inside ProfilerStep#6 (29.9% of the step)" in note(found[0])


@shared
def test_cpu_waits_on_htas_event_sync_trace_names_the_op_above_the_copy():
    a, found = findings(EVENT_SYNC, "cpu-waits")
    names = sorted(a.trace.name_of(e) for e in found[0].events)
    assert names == ["cudaEventSynchronize", "cudaMemcpyAsync"]  # the 6 us stream sync is the call's own cost
    copy = next(e for e in found[0].events if a.trace.name_of(e) == "cudaMemcpyAsync")
    assert [q.label for q in found[0].figures["longest"]] == ["cudaEventSynchronize", "aten::is_nonzero"]
    assert "aten::_local_scalar_dense" in [a.trace.name_of(p) for p in _ancestors(a, copy)]


def _ancestors(a, i):
    while (i := int(a.nesting.parent[i])) >= 0:
        yield i


@shared
def test_cpu_waits_stays_quiet_without_a_wait_inside_a_step():
    # multistream: event queries (the caching allocator's polls), a GPU-side stream wait and the final flush only
    assert findings(MULTISTREAM, "cpu-waits")[1] == []
    assert findings(MULTISTREAM, "final-sync")[1]


def test_cpu_waits_stays_quiet_with_only_the_final_flush_or_tiny_waits():
    assert findings("h100-bert-small.json.gz", "final-sync")[1]
    assert findings("h100-bert-small.json.gz", "cpu-waits")[1] == []
    # rank 1 of the 2-rank job copies to the host 8 times inside its steps, but under 1% of a step: not named
    assert findings("hta-2rank/sampled_rank-1.json.gz", "cpu-waits")[1] == []


def test_findings_carry_numbers_not_text(tmp_path):
    """Every figure is a number with its unit, a count or a name; the note is written from them at render time."""
    import json

    from tui.model.store import Blob
    from tui.reports.explain import render_explain

    a, found = findings("v100-cudagraph-test.json.gz", "")
    for f in found:
        for v in f.figures.values():
            for q in v if isinstance(v, list) else [v]:
                assert not isinstance(q, str) or not re.search(r"\d[\d,.]* ?(us|ms|%)", q)
    doc = json.loads(render_explain(a, "json"))["findings"]
    waits = next(d for d in doc if d["rule"] == "cpu-waits")
    worst = next(f for f in found if f.rule == "cpu-waits").events[0]
    assert waits["figures"]["dur"] == {"value": a.trace.x.dur[worst] / 1000, "unit": "us"}
    assert waits["figures"]["share"]["unit"] == "fraction" and 0 < waits["figures"]["share"]["value"] < 1
    assert duration(a.trace.x.dur[worst] / 1000) == "52.23 ms" and "52.23 ms" in waits["note"]

    class Store(dict):
        put_blob, get_blob = dict.__setitem__, dict.get

    store, codec = Store(), Blob(list[Finding])
    codec.save(store, "findings", found)
    assert codec.load(store, "findings", 0) == found


def test_lost_device_records_are_named_with_their_launches(tmp_path):
    a, found = findings(lost_records(tmp_path), "records-missing")
    assert found[0].figures["launches"] == a.summary.launches == 61
    assert found[0].figures["flows"] == a.summary.ac2g_flows > 0
    assert all(a.trace.x.cat[e] == int(Cat.RUNTIME) for e in found[0].events) and len(found[0].events) == 61
    text = note(found[0])
    assert "61 launches" in text and "GPU run whose device records were lost" in text
    assert "ProfilerActivity.CUDA" in text and "CPU only" not in text
    # the same trace with its records, and a CPU-only run, say nothing of it
    assert findings("h100-bert-small.json.gz", "records-missing")[1] == []
    assert findings("cpu-only-gloo.json.gz", "records-missing")[1] == []


def test_cold_start_on_the_cpu_does_not_mention_a_cuda_context():
    a, found = findings("cpu/mlp_fwd.json.gz", "cold-start")
    assert a.summary.cpu_only and found and "CUDA" not in note(found[0]) and "cold start" in note(found[0])
    a, found = findings(COLD, "cold-start")
    assert "CUDA context" in note(found[0])


@shared
def test_a_range_profiler_capture_is_named_as_such_not_cpu_only():
    path = next((SHARED / "hta-2023-03-a100-cupti-range-profiler").glob("*.json.gz"))
    a, found = findings(path, "records-missing")
    assert not a.summary.cpu_only and a.summary.device_records_missing and a.summary.profiler_ranges == 77
    assert found[0].templates == ["records-missing-ranges"] and "CUPTI range-profiler capture" in note(found[0])


@shared
def test_sync_records_say_who_waits_for_what():
    a, found = findings(MULTISTREAM, "sync-records")
    fig = found[0].figures
    assert (fig["context"], fig["poll"], fig["wait_event"], fig["event"], fig["stream"]) == (1, 3, 1, 0, 0)
    assert len(found[0].events) == 5 and all(a.trace.x.cat[e] == int(Cat.SYNC) for e in found[0].events)
    text = note(found[0])
    assert "3 Event Sync from cudaEventQuery: a poll" in text and "1 Stream Wait Event" in text
    assert "from cudaEventSynchronize" not in text  # no such wait on this trace
    fig = findings(EVENT_SYNC, "sync-records")[1][0].figures
    assert (fig["context"], fig["poll"], fig["wait_event"], fig["event"], fig["stream"]) == (1, 1, 0, 1, 1)
    assert findings("h100-bert-small.json.gz", "sync-records")[1] == []


@pytest.mark.parametrize("path", sorted((SAMPLES / "cpu").glob("*.json.gz")), ids=lambda p: p.name)
def test_a_cpu_capture_is_explained_as_its_verdict_reads(path):
    """explain on a CPU-only capture says where the CPU time goes, as the summary's verdict judged it (it said
    'No explain rule fired'): in the ops (what the top op 2x faster buys on the path) or between them."""
    a = Results(load_trace(path))
    s = a.summary
    found = [f for f in a.findings if f.rule == "cpu-time"]
    assert s.cpu_only and len(found) == 1
    f = found[0]
    top, share = s.cpu_top_self[0][0], s.cpu_in_ops_us / s.wall_us
    assert f.figures["top_op"] == top and f.figures["share"] == Quantity(share, "fraction")
    assert f.parts[0].startswith(s.verdict.replace("cpu-in-ops", "cpu-in")) and f.count >= len(f.events) > 0
    marked = s.cpu_short_top if f.parts[0] == "cpu-in-small-ops" else s.cpu_top_self  # the ops the fix is about
    assert {a.trace.name_of(e) for e in f.events} <= {name for name, _ in marked}
    text = note(f)
    assert text.startswith("No GPU activity in this trace: it ran on the CPU only.") and f"{top} (" in text
    if f.parts[0] == "cpu-in-small-ops":  # the short ops 2x faster (see the test below)
        assert f.saving is not None and f.saving.spec.startswith("op:^(?:aten::") and 0 < f.saving.saving_ns
    elif s.verdict == "cpu-in-ops":
        assert f.saving is not None and f.saving.spec == f"op:^{re.escape(top)}$=2" and 0 < f.saving.saving_ns
    else:  # the Python between the ops: in the code table, or recorded next time with --with-stack
        framed = bool((a.trace.x.cat == int(Cat.PYTHON)).any())
        assert f.saving is None and ("tracetui code lists the Python" if framed else "--with-stack") in text


@pytest.mark.parametrize(
    ("name", "part"),
    [("cpu/attn_naive.json.gz", "cpu-in-small-ops"), ("cpu/mlp_fwd.json.gz", "cpu-in-ops")],
)
def test_small_cpu_ops_are_weighed_by_time_not_by_calls(name, part):
    """Fixed per-op costs are the story only where most of the aten ops' own time is in short calls. mlp_fwd's
    aten ops average 4.7 us a call (many tiny t/transpose/view calls), but its time is in aten::mm at 34 us a call:
    it was called "small CPU ops whose fixed costs add up", and the saving it printed was aten::mm 2x faster. A
    call's cost is its op's warm median (a first, cold call left out: see test_analyses' tiny matmul)."""
    from tui.model.analyses.summary import CPU_SHORT_OP_US, _typical_call_us

    a = Results(load_trace(SAMPLES / name, use_cache=False))
    s = a.summary
    aten = [r for r in a.ops.rows if r.name.startswith("aten::") and not r.is_device]
    own = sum(r.self_cpu_us for r in aten)
    warm = _typical_call_us(a.trace, a.nesting.parent)  # a warm call's own time, per op
    short_names = {r.name for r in aten if warm[r.name] < CPU_SHORT_OP_US}
    assert s.cpu_short_op_share == pytest.approx(sum(r.self_cpu_us for r in aten if r.name in short_names) / own)
    assert s.cpu_op_avg_us < CPU_SHORT_OP_US  # by calls, both look small
    (f,) = [f for f in a.findings if f.rule == "cpu-time"]
    assert f.parts[0] == part
    if part == "cpu-in-small-ops":
        assert s.cpu_short_op_share >= 0.5 and f"{s.cpu_short_op_share:.0%} of the aten ops' own time" in note(f)
        named = set(re.findall(r"aten::\w+", f.saving.spec)) if f.saving else set()
        assert len(named) == 3 and named <= short_names  # what-if: the short ops 2x faster, not the top op
    else:
        assert s.cpu_short_op_share < 0.5 and "so their own work is the cost" in note(f)


@pytest.mark.parametrize(
    ("first_us", "said"),
    [(1700, "a cold start"), (1400, "some warm-up left, short of a cold start (1.5x)"), (1100, "about the same time")],
)
def test_a_first_step_a_little_slow_is_some_warm_up_not_steps_about_the_same(tmp_path, first_us, said):
    """A first step 1.4x the others was "Steps take about the same time ...: no cold start" (a user's MLP: 2.25 ms
    against 1.6 ms); under the cold start's 1.5x but over 1.2x it is some warm-up left, said with its figures."""
    from tui.model.analyses.explain.readings import cold_start_reading

    events, t = [], 0
    for k, dur in enumerate([first_us, 1000, 1010, 990, 1005]):
        events += [X(f"ProfilerStep#{k}", t, dur, cat="user_annotation"), X("aten::mm", t + 5, dur - 10)]
        t += dur + 20
    a = Results(load_trace(write_trace(tmp_path / "steps.json", events), use_cache=False))
    text = cold_start_reading(a.summary)
    assert text is not None and said in text
    if "warm-up" in said:
        assert text.startswith(f"ProfilerStep#0 took 1.40 ms: {first_us / 1002.5:.1f}x the typical step, the median ")


@pytest.mark.parametrize(
    "name", ["hta-2rank", "h100-bert-small.json.gz", "a100-train-control.json.gz", "v100-cudagraph-test.json.gz"]
)
def test_the_overview_lines_on_launches_tell_one_story(name):
    """hta-2rank: the launch reading said "the CPU cannot keep the GPU fed" (1.01 ms of the step's CPU work per
    launch, 463 us of GPU work) while the lines beside it said "the GPU has work to hide them" and "enough work
    per launch to hide its CPU cost": true of the 8 us launch call, read as the opposite verdict."""
    from tui.model.analyses.explain.readings import fact_readings, launch_reading

    s = Results(load_trace(SAMPLES / name, use_cache=False)).summary
    facts, launch = fact_readings(s), launch_reading(s) or ""
    unfed = "cannot keep the GPU fed" in launch
    assert unfed == (s.launches_cost_more or s.cpu_per_kernel_us > s.gpu_per_kernel_us or s.verdict == "overhead-bound")
    if unfed:
        assert facts["kernels"] != "enough work per launch to hide its CPU cost"
        assert facts["cpu_launch_us"] != "CPU time in launch calls: the GPU has work to hide them"
    if name == "hta-2rank":
        assert unfed and "not the step's CPU work around it" in facts["kernels"]


@pytest.mark.parametrize(
    ("name", "between"), [("cpu/linear_fwd.json.gz", True), ("cpu/matmul_add_512_warm_eager.json.gz", False)]
)
def test_time_in_the_ops_still_says_the_time_between_them_when_it_is_a_fair_part(name, between):
    """A capture of tiny ops in a Python loop: ops 55% of the window, and the 45% between them (the biggest lever)
    went unsaid beside "small CPU ops". From 20% of the window up, the note gives it, in the summary's reading too."""
    from tui.model.analyses.explain.readings import cpu_reading

    a = Results(load_trace(SAMPLES / name, use_cache=False))
    s = a.summary
    (f,) = [f for f in a.findings if f.rule == "cpu-time"]
    gap = s.wall_us - s.cpu_in_ops_us
    assert ("cpu-also-between" in f.parts) == between == (gap >= 0.2 * s.wall_us)
    said = f"The other {gap / s.wall_us:.0%} of the window ({duration(gap)}) is between the ops"
    assert (said in note(f)) == between and (said in cpu_reading(s)) == between


def test_a_gpu_trace_cut_before_its_device_records_is_not_called_cpu_only(tmp_path):
    """The H100 BERT sample cut at 20 KB keeps 342 CPU ops and none of its GPU records or Python frames (torch writes
    those after the ops): the CPU finding says what was read and that the rest may be lost, not that the run was CPU
    only, and does not tell a run that recorded its frames to record them."""
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes((SAMPLES / "h100-bert-small.json.gz").read_bytes()[:20_000])
    a = Results(load_trace(cut))
    assert a.summary.cut_short and a.summary.cpu_only
    (f,) = [f for f in RULES_BY_ID["cpu-time"](a, a.summary)]
    said = note(f)
    assert said.startswith("No GPU activity in the part of the file that was read; the file is cut short")
    assert "CPU only" not in said and "If the run recorded its Python frames, they are in the lost part too" in said


def test_a_cpu_trace_with_its_python_frames_is_sent_to_the_code_table_not_told_to_record_them():
    a = Results(load_trace(SAMPLES / "cpu" / "attn_sdpa_math.json.gz"))
    (f,) = [f for f in RULES_BY_ID["cpu-time"](a, a.summary)]
    said = note(f)
    assert said.startswith("No GPU activity in this trace: it ran on the CPU only.")
    assert "tracetui code lists the Python between them per function" in said and "--with-stack" not in said


RULES_BY_ID = {r.id: r.find for r in RULES}


@pytest.mark.parametrize("name", ["linear_fwd.json.gz", "mlp_fwd.json.gz", "attn_naive.json.gz"])
def test_a_cpu_trace_without_frames_is_never_sent_to_the_code_table_alone(name):
    """These captures have no Python frames (`tracetui code` says to capture with with_stack=True): the time between
    their ops is told to be recorded with --with-stack, never "tracetui code lists the Python" as if it could."""
    a = Results(load_trace(SAMPLES / "cpu" / name))
    assert not (a.trace.x.cat == int(Cat.PYTHON)).any()
    (f,) = [f for f in RULES_BY_ID["cpu-time"](a, a.summary)]
    said = note(f)
    assert "tracetui code lists the Python" not in said
    assert "between the ops" not in said or "Profile with --with-stack" in said


def test_the_idle_gaps_finding_says_its_cpu_work_holds_the_one_time_launch():
    """The MI250 sample's one real step: 'launch calls are not the cost', yet the CPU work it blames holds one
    6.5 ms hipLaunchKernel (the summary's outlier, left out of its launch figures). The finding says how much of it
    that call is, and where it is explained, so its two sentences do not contradict each other."""
    a = Results(load_trace(SAMPLES / "mi250-rocm-train.json.gz"))
    (f,) = [f for f in a.findings if f.rule == "overhead-gaps"]
    slow = [o for o in a.summary.launch_outliers if o.name == "hipLaunchKernel"]
    assert len(slow) == 1 and "overhead-cpu" in f.parts and "overhead-one-time" in f.parts
    said = note(f)
    assert f"Of that CPU work, {duration(slow[0].dur_us)} is 1 launch call far slower than the rest" in said
    b = Results(load_trace(SAMPLES / "h100-bert-small.json.gz"))
    assert not any("overhead-one-time" in g.parts for g in b.findings)  # no outlier, nothing to say


def test_every_rule_says_what_its_heading_counts():
    """A finding's heading counts its events as what they are (calls, kernels, copies, gaps ...): each rule is
    listed, none left to the bare "events" ("56 events e.g. aten::mm" read as 56 calls of aten::mm)."""
    from tui.model.analyses.explain.rules import KERNEL_HINTS
    from tui.tables.explain import COUNTED

    ids = {r.id for r in RULES} - {"kernel-names"} | {rule for rule, _ in KERNEL_HINTS}
    assert set(COUNTED) == ids


def test_a_headings_count_names_what_it_counts(monkeypatch):
    """The CPU sample's heading counted "15 events e.g. aten::mm", which were the calls of the three ops its note
    names: it says so, and names them."""
    from tui.reports.explain import render_explain

    monkeypatch.setenv("TRACETUI_COLUMNS", "100")
    a = Results(load_trace(SAMPLES / "cpu" / "mlp_fwd.json.gz"))
    (f,) = [f for f in a.findings if f.rule == "cpu-time"]
    names = [name for name, _ in a.summary.cpu_top_self]
    calls = sum(a.trace.name_of(i) in names for i in range(a.trace.n))
    assert names == ["aten::mm", "aten::gelu", "aten::mul"] and f.count == calls == 15
    said = render_explain(a, "text")
    assert "* CPU time in the ops' own work (15 calls of aten::mm, aten::gelu, aten::mul)" in said
    assert "* Cold first step (1 step: ProfilerStep#2)" in said and "e.g." not in said


def test_a_count_of_gaps_names_the_kernel_after_the_longest_and_a_cut_list_says_there_may_be_more():
    from tui.tables.explain import counted

    gaps = Finding("overhead-gaps", "GPU idle", {}, [3, 4], total=1089)
    assert counted(gaps, ["Memcpy HtoD", "attn_fwd"]) == "1,089 gaps, the longest before Memcpy HtoD"
    assert counted(Finding("overhead-gaps", "GPU idle", {}, [3]), ["attn_fwd"]) == "1 gap, before attn_fwd"
    assert (
        counted(Finding("final-sync", "Final", {}, [7]), ["cudaDeviceSynchronize"]) == "1 call of cudaDeviceSynchronize"
    )
    assert counted(Finding("slow-copies", "Slow", {}, [1, 2]), ["Memcpy HtoD", "…"]) == "2 copies of Memcpy HtoD, …"


MLP = ROOT / "tests" / "data" / "mlp-cpu"  # two CPU captures with torch's tables (its README says what is known)


def test_the_cpu_fix_speeds_up_the_op_first_on_the_typical_steps_path_not_the_windows_top():
    """mlp_steps: aten::addmm has the window's most self time (the cold first step's), aten::mm the most on the
    typical step's critical path, where the saving is solved: `critical --what-if` saves 10% with mm 2x faster, 7%
    with addmm (the data's README)."""
    a, found = findings(MLP / "mlp_steps.json.gz", "cpu-time")
    assert found[0].figures["top_op"] == "aten::addmm"
    assert found[0].saving is not None and found[0].saving.spec == "op:^aten::mm$=2"
    assert round(found[0].saving.share, 2) == 0.10


def test_a_cpu_headings_names_follow_the_notes_ranking():
    """mlp: the note ranks mm, addmm, gelu by self time; the heading named addmm first (its longest single call)."""
    a, found = findings(MLP / "mlp.json.gz", "cpu-time")
    ranked = [q.label for q in found[0].figures["top"]]
    assert ranked[:3] == ["aten::mm", "aten::addmm", "aten::gelu"]
    named = list(dict.fromkeys(a.trace.name_of(e) for e in found[0].events))
    assert named == ranked[: len(named)]


def test_setup_before_the_first_op_is_sized():
    a, found = findings(MLP / "mlp.json.gz", "setup-gap")
    said = note(found[0])
    assert said.startswith(
        "Optimizer.step#SGD.step ran 8.20 ms from its start to its first aten op, 98% of its 8.39 ms"
    )
    assert "the longest" not in said  # one span


def test_no_rule_fired_still_says_the_summarys_verdict():
    from tui.reports.explain import render_explain

    a = Results(load_trace(SAMPLES / "cpu-only-gloo.json.gz", use_cache=False))
    assert a.findings == []
    said = render_explain(a, "text")
    assert said.startswith("No explain rule fired on this trace. The summary's verdict is communication-bound:")
    assert a.summary.reason.rstrip(".") in said
