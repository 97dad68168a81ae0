"""Launches are the runtime and driver calls that put work on the device; every figure built on them follows.

On the H100 BERT sample, 61 calls launched work (60 kernels and a copy); 22 cudaMemsetAsync calls and
the synchronizes, attribute queries and the like put nothing on the device and are reported beside them.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import SAMPLES, X, shared_traces, write_trace
from lost_records import lost_records
from matmul_add import matmul_add

from tui.cli import main
from tui.model.analyses.explain.rules import explain
from tui.model.analyses.results import Results
from tui.model.cats import Cat
from tui.model.load import load_trace
from tui.tables import summary as S
from tui.tables.explain import note

BERT = SAMPLES / "h100-bert-small.json.gz"
GPU_TRACES = [p for p in sorted(SAMPLES.glob("*.json.gz")) if "cpu" not in p.name] + shared_traces()


@pytest.fixture(scope="module")
def bert() -> Results:
    return Results(load_trace(BERT, use_cache=False))


def test_bert_launches_are_the_61_calls_that_put_work_on_the_gpu(bert):
    s = bert.summary
    assert s.launches == 61 and s.kernels == 60 and s.work.copy_count == 1
    assert round(s.window_gpu_per_launch_us, 1) == 5.1  # 309.437 us of GPU work over 61 launches
    other = {c.name: c for c in s.other_runtime}
    assert other["cudaMemsetAsync"].count == 22 and "cudaLaunchKernel" not in other
    assert {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaDeviceGetAttribute"} <= set(other)
    x = bert.trace.x
    runtime = x.cat == int(Cat.RUNTIME)
    assert s.launches + s.other_runtime_calls == int(runtime.sum())
    assert s.cpu_launch_us + s.other_runtime_us == pytest.approx(x.dur[runtime].sum() / 1000)


def test_the_summary_says_launches_and_the_other_calls_beside_them(bert):
    lines = {key: text for key, _, text in S.lines(bert.summary)}
    assert lines["cpu_launch_us"].startswith("61 calls that put work on the GPU, 332.494us of CPU, median 4.940us")
    assert lines["cpu_launch_us"].endswith(
        "; 61 launches in ProfilerStep#6: 5.073us of GPU work per launch, 72.303us of the step's CPU work per launch"
    )
    assert lines["other_runtime_us"].startswith("71 calls, 56.261us of CPU, none put work on the GPU: ")
    doc = S.fields(bert.summary)
    assert doc["launches"] == 61 and doc["gpu_per_launch_us"] == pytest.approx(309.437 / 61)
    assert any(c["name"] == "cudaMemsetAsync" and c["count"] == 22 for c in doc["other_runtime_calls"])


def test_a_memset_call_that_sets_nothing_and_an_event_record_are_not_launches(tmp_path):
    s = Results(load_trace(matmul_add(tmp_path), use_cache=False)).summary
    assert s.launches == 6  # two cudaLaunchKernel per step
    assert [(c.name, c.count, c.cpu_us) for c in s.other_runtime] == [
        ("cudaMemsetAsync", 3, 6.0),
        ("cudaEventRecord", 3, 3.0),
    ]
    assert s.cpu_launch_us == pytest.approx(12.0) and s.typical_launch_us == pytest.approx(2.0)


def test_a_synchronize_with_a_sync_record_is_not_a_launch(tmp_path):
    """CUPTI links a cuda_sync record to the call that waited: a wait, not work put on the device."""
    events = [
        X("aten::mm", 0, 30, External_id=1),
        X("cudaLaunchKernel", 2, 5, cat="cuda_runtime", External_id=1, correlation=10),
        X("cudaStreamSynchronize", 10, 15, cat="cuda_runtime", correlation=11),
        X("gemm", 8, 14, cat="kernel", pid=0, tid=7, External_id=1, correlation=10),
        X("Stream Sync", 10, 12, cat="cuda_sync", pid=0, tid=7, correlation=11),
    ]
    s = Results(load_trace(write_trace(tmp_path / "sync.json", events), use_cache=False)).summary
    assert s.launches == 1 and [c.name for c in s.other_runtime] == ["cudaStreamSynchronize"]


def test_a_trace_whose_device_records_were_lost_counts_the_calls_its_flows_send_to_the_device(tmp_path):
    s = Results(load_trace(lost_records(tmp_path), use_cache=False)).summary
    assert s.device_records_missing and s.launches == 61  # as many as the full trace: the ac2g flows say which


@pytest.mark.parametrize("path", GPU_TRACES, ids=lambda p: p.parent.name if p.parent != SAMPLES else p.name)
def test_explain_never_contradicts_its_own_launch_figures(path):
    a = Results(load_trace(path))
    s = a.summary
    launches = np.flatnonzero(a.trace.x.cat == int(Cat.RUNTIME))
    assert s.launches <= len(launches)
    for f in explain(a, s):
        if f.rule != "overhead-gaps":
            continue
        gpu, cpu = f.figures["per_launch_gpu"].value, f.figures["call_cpu"].value
        launching = "overhead-launches" in f.parts
        assert launching == (cpu > gpu) == s.launches_cost_more, path
        text = note(f)
        assert ("cannot launch fast enough" in text) == launching
        assert "Kernels average" not in text  # the old, self-contradicting comparison


def test_explain_on_bert_compares_what_a_launch_costs_with_what_it_buys(bert):
    found = next(f for f in bert.findings if f.rule == "overhead-gaps")
    text = note(found)
    assert (
        "Each of the 61 launches in ProfilerStep#6 buys 5.1 us of GPU work but costs the step 72.3 us of CPU work on its critical path"
        in text
    )
    assert "(the launch call itself takes 5.5 us, median 4.9 us)" in text
    assert found.parts[-2:] == ["overhead-launches", "next/cpu-eager"]  # then what comes next for an eager run


def test_summary_json_and_text_agree_on_launches(capsys):
    assert main(["summary", str(BERT), "--format", "json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["launches"] == 61 and doc["other_runtime_us"] == pytest.approx(56.261)
    assert main(["summary", str(BERT), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert (
        "61 launches in ProfilerStep#6, each buying 5.1 us of GPU work for 72.3 us of the step's CPU work (the call "
        "itself 5.5 us on average)" in (" ".join(out.split()))
    )


H200 = SAMPLES / "cuda-h200"


def test_the_per_launch_figures_are_said_with_the_count_they_divide_by():
    """GIVEN matmul_add_64 on the H200, 4 launches in the window and 2 in each step WHEN the summary and explain say
    what a launch costs the typical step (its path's CPU work over its launches) THEN the count beside it is the
    step's 2, named ("Each of the 4 launches ... costs the step 36.7 us" divided by 2 and said 4)."""
    a = Results(load_trace(H200 / "matmul_add_64_warm_eager.json.gz", use_cache=False))
    s = a.summary
    assert (s.launches, s.path.launches, s.path.window) == (4, 2, "ProfilerStep#3")
    assert s.cpu_per_kernel_us == pytest.approx(s.path.cpu_us / 2)
    lines = {key: text for key, _, text in S.lines(s)}
    assert lines["cpu_launch_us"].startswith("4 calls that put work on the GPU")
    assert lines["cpu_launch_us"].endswith(
        "; 2 launches in ProfilerStep#3: 1.424us of GPU work per launch, 36.676us of the step's CPU work per launch"
    )
    assert "2 launches in ProfilerStep#3, each buying 1.4 us of GPU work for 36.7 us of the step's CPU work" in s.reason
    found = next(f for f in a.findings if f.rule == "overhead-gaps")
    assert "Each of the 2 launches in ProfilerStep#3 buys 1.4 us of GPU work but costs the step 36.7 us" in note(found)


def test_no_cpu_work_on_the_path_is_said_as_none_not_as_a_cost_of_zero(capsys, monkeypatch):
    """GIVEN matmul_add 4096 on the H200, whose typical step's path is all GPU work WHEN the summary says what a
    launch costs the step THEN it says no CPU work is on the path ("0.000us of the step's CPU work per launch" and
    "for 0.0 us of the step's CPU work" read as a measured cost)."""
    monkeypatch.setenv("TRACETUI_COLUMNS", "0")
    assert main(["summary", str(H200 / "matmul_add_4096_warm_eager.json.gz"), "--no-cache"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "0.000us of the step's CPU work" not in out and "0.0 us of the step's CPU work" not in out
    assert (
        "; 3 launches in ProfilerStep#3: 63.744us of GPU work per launch, no CPU work on the step's critical path"
        in out
    )
    assert (
        "3 launches in ProfilerStep#3, each buying 63.7 us of GPU work, with no CPU work on the step's critical path"
        in out
    )
