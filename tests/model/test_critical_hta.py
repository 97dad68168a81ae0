"""The class that bounds each shared trace's default window, against HTA's critical path on the same window.

HTA's figures are recorded by tests/hta_critical.py (HTA 0.5 needs pandas older than 2.2: its own venv). Where
HTA runs, the class with the most time on the path agrees, except on the traces below, where HTA's rules and
ours differ for the reason given. A trace that comes to agree should leave this list.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SHARED

from tui.model import load_trace
from tui.model.analyses.critical import HTA_CLASS, critical_path, find_window
from tui.model.analyses.results import Results

REFERENCE = json.loads((Path(__file__).parents[1] / "data" / "critical_hta.json").read_text())
DIFFER = {
    "hta-2022-08-a100-8rank-control/control.json.gz": "HTA counts a stream's idle time before a late launch as "
    "kernel-to-kernel overhead (its launch test needs exactly one launch in the queue): 43 ms on stream 20 before "
    "a kernel launched 3.7 ms ahead of its start; here the CPU that launched late is on the path",
    "hta-2022-08-v100-cudagraph-test/test.json.gz": "the same launch test, and waits on other streams without "
    "cuda_sync records: HTA counts them as gaps, here they lead to the kernels waited for",
    "hta-2023-trace-filter-2rank/sampled_rank-0.json.gz": "a sampled trace (events dropped): the engine thread's "
    "ops cover 14% of the main thread's wait in ## backward ##, so the hand-over cannot be followed",
    "tracelens-2025-12-mi210-gpu-only/gpu_only_trace.json.gz": "a GPU-only capture without launch records: HTA's "
    "longest chain strings kernels along their gaps; the path here walks back from the window's end",
    "tracelens-2026-02-mi300x-resnet-actckpt-8rank/resnet_act_checkpoint.json.gz": "HTA counts a stream's wait "
    "for another stream as kernel-to-kernel overhead: the copies on stream 0 wait 8.5 ms for the NCCL kernel on "
    "stream 4 (no event recorded); here that time is the collective's, and gaps are only where the GPU ran nothing",
    "tracelens-2026-06-b300-sglang-qwen3moe-decode-cudagraph/1782799835.6885648-TP-0-DECODE.trace.json.gz": "the "
    "replay's kernels overlap on their stream (programmatic dependent launch): HTA strings them along kernel-kernel "
    "edges, 81% of its path kernel-kernel overhead and 0.3% GPU compute; here the overlapped stretch is the running "
    "kernel's and the path is 59% GPU compute, as the trace's README says (recorded with HTA_DISABLE_NS_ROUNDING=1)",
    "tracelens-2026-05-mi300x-torch-compile-triton/trace.json.gz": "HTA does not know hipDeviceSynchronize blocks: "
    "it counts the 11.9 ms wait for the GPU as CPU work",
    "tracelens-2026-07-mi300-vllm-piecewise-graph-pair/graph_execution.json.gz": "HTA drops the graph replays' "
    "kernels (its issue 290): 156 ms of them are on the path here, 7.9 ms in HTA's",
}


def bound_by(us: dict[str, float]) -> str:
    totals: dict[str, float] = {}
    for cls, t in us.items():  # HTA's own classes (theirs map to themselves), ours as HTA would class the stretch
        name = HTA_CLASS.get(cls, cls)
        totals[name] = totals.get(name, 0.0) + t
    return max((c for c in totals if c), key=lambda c: totals[c])  # "": a dependency edge, which HTA leaves out


@pytest.mark.parametrize("name", sorted(REFERENCE["traces"]))
def test_the_class_that_bounds_the_window_agrees_with_htas(name):
    path = SHARED / name
    if not path.exists():
        pytest.skip("the shared traces are not here")
    hta = REFERENCE["traces"][name]
    if "error" in hta:
        pytest.skip(f"HTA fails on it: {hta['error']}")
    a = Results(load_trace(path))
    window = find_window(a.trace)
    assert window.name == hta["window"]
    ours = bound_by({k: v / 1000 for k, v in critical_path(a, window, a.graph_owner).breakdown.items() if v})
    if name in DIFFER:
        assert ours != bound_by(hta["us"]), f"now agrees with HTA: take it out of DIFFER ({DIFFER[name]})"
    else:
        assert ours == bound_by(hta["us"])


def test_hta_runs_on_most_shared_traces_and_agrees_on_most_of_them():
    ran = [n for n, h in REFERENCE["traces"].items() if "error" not in h]
    assert (len(REFERENCE["traces"]), len(ran), len(ran) - len(DIFFER)) == (31, 25, 17)
