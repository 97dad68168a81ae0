"""Runtime-to-GPU links: correlation, the External id fallback, graph launches, flows."""

from __future__ import annotations

from conftest import SAMPLES, X, write_trace

from tui.model import load_trace
from tui.model.analyses.results import Results


def _launch(name, ts, corr=None, ext=None):
    args = {k: v for k, v in (("correlation", corr), ("External_id", ext)) if v is not None}
    return X(name, ts, 2, cat="cuda_runtime", **args)


def _kernel(name, ts, corr=None, ext=None):
    args = {k: v for k, v in (("correlation", corr), ("External_id", ext)) if v is not None}
    return X(name, ts, 5, cat="kernel", pid=0, tid=7, **args)


def test_kernel_links_to_its_launch_by_correlation(tmp_path):
    events = [_launch("cudaLaunchKernel", 10, corr=100, ext=1), _kernel("k", 15, corr=100, ext=1)]
    links = Results(load_trace(write_trace(tmp_path / "t.json", events), use_cache=False)).links
    assert links.launcher.tolist() == [-1, 0]
    assert links.launched(0).tolist() == [1]


def test_external_id_is_the_fallback_when_correlation_is_missing(tmp_path):
    events = [_launch("cudaLaunchKernel", 10, ext=5), _kernel("k", 15, ext=5)]
    links = Results(load_trace(write_trace(tmp_path / "t.json", events), use_cache=False)).links
    assert links.launcher.tolist() == [-1, 0]
    assert links.via_external_id == 1


def test_graph_launch_maps_to_many_kernels(tmp_path):
    events = [_launch("cudaGraphLaunch", 10, corr=9)] + [_kernel(f"k{i}", 20 + 10 * i, corr=9) for i in range(4)]
    links = Results(load_trace(write_trace(tmp_path / "t.json", events), use_cache=False)).links
    assert links.launched(0).tolist() == [1, 2, 3, 4]


def test_correlation_does_not_cross_ranks(tmp_path):
    write_trace(tmp_path / "rank0.json", [_launch("cudaLaunchKernel", 10, corr=3)], distributedInfo={"rank": 0})
    write_trace(tmp_path / "rank1.json", [_kernel("k", 15, corr=3)], distributedInfo={"rank": 1})
    links = Results(load_trace(tmp_path, use_cache=False)).links
    assert (links.launcher < 0).all()


def test_ac2g_flows_agree_with_correlation_on_real_traces():
    for name in ("a100-ddp-nccl.json.gz", "a100-train-control.json.gz", "v100-2021-small.json.gz"):
        links = Results(load_trace(SAMPLES / name, use_cache=False)).links
        assert links.flows_paired > 0
        assert links.flows_agree == links.flows_paired
