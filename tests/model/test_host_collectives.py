"""Collectives that launched nothing (world size 1, or gloo moving CUDA tensors through the host) are named in the
summary and explain; a run whose collectives launched their kernels, or a CPU-only capture, says nothing of it."""

from __future__ import annotations

import json

from conftest import SAMPLES, X, write_trace
from critical_traces import launched, step

from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.results import Results
from tui.tables.explain import note
from tui.tables.summary import collectives_line, fields, lines

GEMM = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"


def _allreduce(ts: float, backend: str, copies: bool = False) -> list[dict]:
    """c10d::allreduce_ > record_param_comms > <backend>:all_reduce; with copies, gloo's trip through the host."""
    events = [
        X("c10d::allreduce_", ts, 40),
        X("record_param_comms", ts + 2, 36, **{"Collective name": "allreduce", "Group size": 1}),
        X(f"{backend}:all_reduce", ts + 4, 30, cat="user_annotation"),
    ]
    if copies:
        events += [X("cudaMemcpyAsync", ts + 6, 5, cat="cuda_runtime", correlation=900 + ts)]
        events += [
            X("Memcpy DtoH (Device -> Pageable)", ts + 8, 3, cat="gpu_memcpy", pid=0, tid=7, correlation=900 + ts)
        ]
        events += [X("cudaMemcpyAsync", ts + 20, 5, cat="cuda_runtime", correlation=950 + ts)]
        events += [
            X("Memcpy HtoD (Pageable -> Device)", ts + 22, 3, cat="gpu_memcpy", pid=0, tid=7, correlation=950 + ts)
        ]
    return events


def one_rank(tmp, backend: str = "nccl", world: int = 1, copies: bool = False):
    events = [step(1, 0, 300), *launched(GEMM, 5, 5, 12, 60, corr=1)]
    events += _allreduce(100, backend, copies) + _allreduce(200, backend, copies)
    info = {"backend": backend, "rank": 0, "world_size": world}
    return write_trace(tmp / f"{backend}{world}.json", events, distributedInfo=info)


def test_world_size_one_nccl_is_named_in_summary_and_explain(tmp_path):
    a = Results(load_trace(one_rank(tmp_path), use_cache=False))
    h = a.summary.host_collectives
    assert (h.calls, h.world_size, h.backend, h.copies) == (2, 1, "nccl", 0)
    assert h.names == [("c10d::allreduce_", 2)] and h.cpu_us == 80
    line = dict((k, v) for k, _, v in lines(a.summary))["collectives"]
    assert line == collectives_line(h) and "launched no collective kernel: world size 1, nothing to exchange" in line
    assert fields(a.summary)["collectives_without_kernels"]["calls"] == 2
    (found,) = [f for f in a.findings if f.rule == "collective-no-kernel"]
    assert "no-kernel-one-rank" in found.templates and len(found.events) == 2
    assert "nothing to exchange" in note(found) and "c10d::allreduce_ ×2" in note(found)
    assert found.saving is not None
    assert found.saving.spec == "op:^(?:c10d::allreduce_|nccl:all_reduce|record_param_comms)$=0"
    assert found.saving.saving_ns == 2 * 40_000  # the two calls' CPU time, off a CPU-bound step


def test_gloo_on_cuda_tensors_copies_through_the_host(tmp_path):
    a = Results(load_trace(one_rank(tmp_path, "gloo", world=2, copies=True), use_cache=False))
    h = a.summary.host_collectives
    assert (h.calls, h.world_size, h.backend, h.copies) == (2, 2, "gloo", 4)
    (found,) = [f for f in a.findings if f.rule == "collective-no-kernel"]
    assert "no-kernel-host" in found.templates and "4 copies to and from the GPU" in note(found)


def test_collectives_that_launched_their_kernels_say_nothing(capsys):
    a = Results(load_trace(SAMPLES / "a100-ddp-nccl.json.gz", use_cache=False))
    assert a.summary.host_collectives.calls == 0
    assert not [f for f in a.findings if f.rule == "collective-no-kernel"]
    cpu = Results(load_trace(SAMPLES / "cpu-only-gloo.json.gz", use_cache=False))  # CPU collectives: no device at all
    assert cpu.summary.host_collectives.calls == 0
    assert main(["summary", str(SAMPLES / "a100-ddp-nccl.json.gz"), "--format", "json", "--no-cache"]) == 0
    assert json.loads(capsys.readouterr().out)["collectives_without_kernels"] is None
