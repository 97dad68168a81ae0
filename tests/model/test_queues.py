"""Each stream's launch queue and every launch's delays (`kernels --queues`, SQL queues and launch_stats), by hand
on a built trace and against HTA's own figures on the samples (recorded by tests/hta_analyses.py)."""

from __future__ import annotations

import json
from pathlib import Path

import device_traces as D
import numpy as np
import pytest
from conftest import SAMPLES, write_trace

import tracetui
from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.graphs.replay import graph_launches, graph_owner
from tui.model.analyses.queues import launch_stats, queue_rows
from tui.model.analyses.results import Results

HTA = json.loads((Path(__file__).parents[1] / "data" / "hta_analyses.json").read_text())["traces"]
TWO_RANKS = SAMPLES / "hta-2rank"
DDP = SAMPLES / "a100-ddp-nccl.json.gz"


def three_queued(tmp: Path) -> Path:
    """Three 1 us launches at 0, 1 and 2; their kernels run back to back from 10: [10,20], [20,30], [30,40]."""
    events = []
    for k in range(3):
        events += D.launched(f"K{k}", k, 10 + 10 * k, 10, k + 1, call_dur=1)
    return write_trace(tmp / "queued.json", events)


def results(path: Path) -> Results:
    return Results(load_trace(path, use_cache=False))


def test_a_queue_by_hand(tmp_path):
    """Lengths 1, 2, 3 after the launches, then 2, 1, 0 after the starts, over [0, 30]."""
    a = results(three_queued(tmp_path))
    (q,) = queue_rows(a.trace, a.links.launcher)
    assert (q.lane, q.launches, q.span_ns, q.max) == ("GPU 0 stream 7", 3, 30_000, 3)
    assert q.mean_per_sample == pytest.approx((1 + 2 + 3 + 2 + 1 + 0) / 6)
    assert q.mean == pytest.approx((1 + 2 + 3 * 8 + 2 * 10 + 1 * 10) / 30)
    assert (q.p50, q.p95) == (2, 3)  # 1 and 2 held 11 us each, 3 held 8 us
    assert (q.delay_p50_ns, q.slow_calls, q.late_starts, q.full_ns) == (19_000, 0, 0, 0)
    s = launch_stats(a.trace, a.links.launcher)
    assert s.delay_ns.tolist() == [10_000, 19_000, 28_000] and s.hta_delay_ns.tolist() == [9_000, 18_000, 27_000]
    assert s.cpu_ns.tolist() == [1_000] * 3 and s.gpu_ns.tolist() == [10_000] * 3


def test_a_call_that_ends_after_its_kernel_starts_has_no_hta_delay(tmp_path):
    path = write_trace(tmp_path / "t.json", D.launched("K", 0, 3, 5, 1, call_dur=8))
    a = results(path)
    s = launch_stats(a.trace, a.links.launcher)
    assert (s.delay_ns.tolist(), s.hta_delay_ns.tolist()) == ([3_000], [0])


def test_the_two_rank_jobs_queues_and_launches_equal_htas():
    """Whole microseconds: the mean per sample and the maximum of every stream, and per rank the launches, their
    CPU, device and delay sums and HTA's outlier counts, all equal HTA 0.5's."""
    a = results(TWO_RANKS)
    ours = {(q.rank, q.lane.split(" ", 2)[2]): q for q in queue_rows(a.trace, a.links.launcher)}
    hta = HTA["hta-2023-trace-filter-2rank"]
    for rank, streams in hta["queues"].items():
        for stream, h in streams.items():
            q = ours[(int(rank), f"stream {stream}")]
            assert (q.launches * 2, q.max) == (h["count"], h["max"])
            assert q.mean_per_sample == pytest.approx(h["mean"], abs=1e-9)
    s = launch_stats(a.trace, a.links.launcher)
    rank = np.array([a.trace.tracks[int(t)].rank for t in a.trace.x.track[s.activity]])
    for r, h in hta["launches"].items():
        mine = rank == int(r)
        found = {
            "launches": int(mine.sum()),
            "cpu_us": s.cpu_ns[mine].sum() / 1000,
            "gpu_us": s.gpu_ns[mine].sum() / 1000,
            "launch_delay_us": s.hta_delay_ns[mine].sum() / 1000,
            "runtime_outliers": int((s.cpu_ns[mine] > 50_000).sum()),
            "delay_outliers": int((s.hta_delay_ns[mine] > 100_000).sum()),
        }
        assert found == h


def test_the_ddp_traces_queues_reach_htas_maxima():
    a = results(DDP)
    ours = {q.lane.split(" ", 2)[2]: q.max for q in queue_rows(a.trace, a.links.launcher)}
    hta = HTA["hta-2024-05-a100-ddp-nccl/nccl_data.json.gz"]["queues"]["0"]
    assert ours == {f"stream {s}": int(h["max"]) for s, h in hta.items()}


def test_kernels_queues_in_every_format(tmp_path, capsys):
    path = three_queued(tmp_path)
    assert main(["kernels", str(path), "--queues", "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["streams"]
    assert row["stream"] == "GPU 0 stream 7" and row["max"] == 3 and row["mean"] == pytest.approx(1.9)
    assert main(["kernels", str(path), "--queues"]) == 0
    text = capsys.readouterr().out
    assert "GPU 0 stream 7" in text and "Mean/sample is HTA's" in text
    assert main(["kernels", str(path), "--queues", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("rank,stream,launches,span_us,mean,mean_per_sample")
    assert main(["kernels", str(path), "--queues", "--sort", "total"]) == 2
    assert "--queues prints one row per stream" in capsys.readouterr().err


def test_sql_and_the_api_give_the_same_rows():
    pytest.importorskip("duckdb")
    t = tracetui.load(TWO_RANKS)
    assert t.sql("SELECT * FROM queues")["rows"] == t.queues()["streams"]
    n = t.sql("SELECT count(*) AS n, sum(late_start::INT) AS late FROM launch_stats")["rows"][0]
    assert n == {"n": 2358, "late": 937 + 880}
    joined = t.sql(
        "SELECT count(*) AS n FROM launch_stats s JOIN launches l ON l.activity_id = s.activity_id "
        "WHERE l.launch_id = s.launch_id AND l.latency_us = s.delay_us"
    )
    assert joined["rows"] == [{"n": 2358}]


def test_a_graph_launch_is_one_entry_of_the_queue_as_htas_eager_series_shows():
    """HTA's queue series (trace_counters.py) counts the eager launch calls only (its launch mask names no graph
    launch). On the V100 CUDA-graph test, tracetui's stream 7 is HTA's series plus one entry per graph launch: the
    same maximum (1,013) and median, HTA's launches plus the 12 graph launches. Counting each replayed kernel as a
    launch of its own, the queue read 14,526 launches up to 1,338 deep."""
    a = results(SAMPLES / "v100-cudagraph-test.json.gz")
    hta = HTA["hta-2022-08-v100-cudagraph-test/test.json.gz"]["queues"]["1"]["7"]
    (q,) = [r for r in queue_rows(a.trace, a.links.launcher) if r.lane == "GPU 1 stream 7"]
    graphs = graph_launches(a.trace)
    owner = graph_owner(a.trace)
    on_7 = {int(owner[k]) for k in np.flatnonzero(owner >= 0) if a.trace.tracks[a.trace.x.track[k]].name == q.lane}
    assert len(graphs) == len(on_7) == 12
    assert (q.launches, q.max, q.p50) == (hta["count"] // 2 + 12, hta["max"], hta["50%"])
    s = launch_stats(a.trace, a.links.launcher)
    assert sorted(s.launch[np.isin(s.launch, graphs)].tolist()) == sorted(graphs.tolist())  # each once
