"""A folder of ranks: each rank's path over one step, collective waits given to the rank that arrived last."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import SHARED, write_trace
from critical_traces import call, kernel, op, step

from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.critical.ranks import job_path
from tui.model.analyses.results import Results
from tui.tables import critical as C

DATA = Path(__file__).resolve().parents[1] / "data"
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"


def allreduce(ts: float, dur: float, corr: int, **args) -> dict:
    k = kernel(ALLREDUCE, ts, dur, corr)
    k["args"].update(args)
    return k


def job(tmp_path, seq: bool = False):
    """Rank 1 computes 100 us longer before its allreduce; rank 0's allreduce waits for it 100 us (on its path).
    With seq, rank 0 also runs an allreduce of its own first (Seq 6): only sequence numbers still match the pair."""
    folder = tmp_path / "job"
    folder.mkdir()
    extra = {"Seq": 7} if seq else {}
    r0 = [step(1, 0, 140), call("cudaLaunchKernel", 10, 5, corr=1), allreduce(20, 110, 1, **extra)]
    r0 += [call("cudaStreamSynchronize", 30, 101, corr=2)]
    if seq:
        r0 += [call("cudaLaunchKernel", 2, 2, corr=3), allreduce(5, 3, 3, Seq=6)]
    r1 = [step(1, 0, 140), op("slow", 5, 105), call("cudaLaunchKernel", 110, 5, corr=1), allreduce(120, 10, 1, **extra)]
    r1 += [call("cudaStreamSynchronize", 116, 15, corr=2)]
    for rank, events in ((0, r0), (1, r1)):
        write_trace(folder / f"trace_rank{rank}.json", events, distributedInfo={"rank": rank, "world_size": 2})
    return folder


def test_the_rank_that_arrives_last_at_a_collective_bounds_the_job(tmp_path):
    a = Results(load_trace(job(tmp_path)))
    j = job_path(a, a.graph_owner)
    assert (j.window, sorted(j.paths), j.matched_by) == ("ProfilerStep#1", [0, 1], "order per process group")
    assert {r: p.length_ns for r, p in j.paths.items()} == {0: 140_000, 1: 140_000}
    [w] = j.waits
    assert (w.rank, w.for_rank, w.wait_ns, w.on_path_ns) == (0, 1, 100_000, 100_000)
    assert (j.held_ns(), j.bound_rank) == ({0: 0, 1: 100_000}, 1)
    assert j.paths[0].breakdown["gpu_communication_bound"] == 110_000
    assert j.own_breakdown(0)["gpu_communication_bound"] == 10_000  # the transfer itself, once rank 1 arrived
    assert max(j.own_breakdown(1).items(), key=lambda kv: kv[1])[0] == "cpu_bound"


def test_sequence_numbers_match_collectives_that_order_would_not(tmp_path, capsys):
    a = Results(load_trace(job(tmp_path, seq=True)))
    j = job_path(a, a.graph_owner)
    assert j.matched_by == "sequence numbers"
    assert [(w.rank, w.for_rank, w.wait_ns) for w in j.waits] == [(0, 1, 100_000)]
    assert main(["critical", str(tmp_path / "job"), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert list(d) == ["window", "ranks", "left_out", "job"]
    assert d["job"].pop("verdict") == C.job_verdict(j)  # the text's "The job" line
    assert d["job"] == {
        "bound_rank": 1,
        "bound_by": "cpu_bound",
        "held_us": {"0": 0.0, "1": 100.0},
        "matched_by": "sequence numbers",
    }
    assert d["ranks"][0]["waits"] == [
        {
            "for_rank": 1,
            "collective": ALLREDUCE,
            "id": d["ranks"][0]["waits"][0]["id"],
            "wait_us": 100.0,
            "on_path_us": 100.0,
        }
    ]
    assert [r["length_us"] for r in d["ranks"]] == [140.0, 140.0]


def test_the_text_names_the_rank_that_bounds_the_step_and_shows_its_path(tmp_path, capsys):
    assert main(["critical", str(job(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert out.startswith("A job of 2 ranks, ProfilerStep#1 (collectives matched by order per process group)")
    assert (
        "* Rank 1 bounds the job's step: the other ranks' paths wait 100.0 us for it in their collectives; its own "
        "path runs mostly through the CPU (85%)"  # the synchronize's own 1 us tail is sync
    ) in out
    assert "Rank 1's path:\nCritical path of ProfilerStep#1" in out
    assert main(["critical", str(tmp_path / "job"), "--what-if", "cpu=2"]) == 2
    assert "--what-if works on one rank's path" in capsys.readouterr().err


def test_a_jobs_default_window_is_the_step_the_summary_reads_not_the_slowest(capsys):
    """The shared two-rank job: the summary's verdict reads ProfilerStep#551 (the typical step); critical read the
    slowest (#552) while its help says the typical step."""
    folder = SHARED / "hta-2023-trace-filter-2rank"
    if not folder.exists():
        pytest.skip("../shared is absent")
    assert main(["summary", str(folder), "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert main(["critical", str(folder), "--format", "json"]) == 0
    critical = json.loads(capsys.readouterr().out)
    assert summary["path"]["window"] == critical["window"] == "ProfilerStep#551"
    assert main(["critical", str(folder), "--step", "552", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["window"] == "ProfilerStep#552"


def test_a_slow_hand_over_to_gloos_thread_is_still_the_wait_for_the_last_rank():
    """tests/data/gloo-handover (its README): rank 0's gloo thread took the all-reduce up 15.23 ms after the call,
    all of it while rank 1 had not arrived. The whole wait, from the call to rank 1's arrival, holds rank 0's path:
    a prompt hand-over would have waited in gloo:all_reduce instead. The hand-over stays CPU time on the path of
    one rank; the job takes it out of that class, as it takes the rest out of communication."""
    a = Results(load_trace(DATA / "gloo-handover"))
    j = job_path(a, a.graph_owner, step=3)
    calls = {r: _call_ts(DATA / "gloo-handover" / f"rank-{r}.json.gz") for r in (0, 1)}
    [w] = j.waits
    assert (w.rank, w.for_rank, w.collective) == (0, 1, "gloo:all_reduce")
    assert w.wait_ns == pytest.approx((calls[1] - calls[0]) * 1000, abs=1000)  # the raw clocks' gap, 43.48 ms
    items = j.paths[0].items
    k = next(k for k, it in enumerate(items) if it.event == w.event)
    hand_over = items[k - 1]
    assert (hand_over.kind, hand_over.waits_for, hand_over.bound_by) == ("wait", "main thread", "cpu_bound")
    assert hand_over.dur_ns > 10_000_000  # the descheduled thread's 15 ms
    assert w.on_path_ns == w.wait_ns
    assert w.on_path_by == {"cpu_bound": hand_over.dur_ns, "communication": w.wait_ns - hand_over.dur_ns}
    own, full = j.own_breakdown(0), j.paths[0].breakdown
    assert full["cpu_bound"] - own["cpu_bound"] == hand_over.dur_ns
    assert j.bound_rank == 1 and j.held_ns()[1] == w.wait_ns


def _call_ts(trace) -> float:
    """When the rank called c10d::allreduce_ in ProfilerStep#3 (us, its raw clock)."""
    events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
    (s,) = [e for e in events if e.get("name") == "ProfilerStep#3"]
    return next(
        e["ts"] for e in events if e.get("name") == "c10d::allreduce_" and s["ts"] <= e["ts"] < s["ts"] + s["dur"]
    )
