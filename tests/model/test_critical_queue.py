"""The launch queue behind the critical path: queue length per stream, launch-to-start latency, empty and full."""

from __future__ import annotations

from conftest import write_trace
from critical_traces import launched, step
from test_critical import results

from tui.model.analyses.critical.queue import MIN_ACTIVITIES, launch_latency, queue_series, stream_queues


def queued(tmp_path, launches: list[float], starts: list[float], dur: float = 10, name: str = "q.json"):
    events = [step(1, 0, max(starts) + dur)]
    for i, (lt, st) in enumerate(zip(launches, starts, strict=True)):
        events += launched(f"k{i}", lt, 0.5, st, dur, corr=i + 1)
    a = results(write_trace(tmp_path / name, events))
    return a.trace, a.links.launcher


def test_the_queue_counts_launches_from_their_call_until_their_kernel_starts(tmp_path):
    trace, launcher = queued(tmp_path, [0, 1, 2, 3], [5, 15, 25, 35])
    [s] = queue_series(trace, launcher)
    assert trace.tracks[s.track].name == "GPU 0 stream 7"
    assert ((s.ts - trace.origin) // 1000).tolist() == [0, 1, 2, 3, 5, 15, 25, 35]
    assert s.length.tolist() == [1, 2, 3, 4, 3, 2, 1, 0]
    ev, latency = launch_latency(trace, launcher)
    assert [trace.name_of(i) for i in ev] == ["k0", "k1", "k2", "k3"]
    assert (latency // 1000).tolist() == [5, 14, 23, 32]
    [q] = stream_queues(trace, launcher)
    assert (q.max_length, q.idle_launches, q.median_latency_ns) == (4, 0.25, 18_500)


def test_a_stream_fed_one_kernel_at_a_time_is_starved(tmp_path):
    n = MIN_ACTIVITIES + 5
    trace, launcher = queued(tmp_path, [20.0 * i for i in range(n)], [20.0 * i + 8 for i in range(n)], dur=2)
    [q] = stream_queues(trace, launcher)
    assert (q.idle_launches, q.max_length, q.verdict) == (1.0, 1, "empty")


def test_a_queue_that_stays_deep_is_full_and_a_late_kernel_is_an_outlier(tmp_path):
    n, depth = 800, 300
    starts = [100.0 + 10 * i for i in range(n)]
    # the CPU fills the queue, then each launch waits for a kernel to start and free a slot
    launches = [0.1 * i if i < depth else starts[i - depth] + 0.2 for i in range(n)]
    trace, launcher = queued(tmp_path, launches, starts)
    [q] = stream_queues(trace, launcher)
    assert (q.max_length, q.verdict) == (depth, "full")
    assert q.full_share > 0.5 and q.idle_launches < 0.01 and q.outlier_count == 0
    few = [0.1 * i for i in range(30)]
    trace2, launcher2 = queued(tmp_path, few, [10.0 + 11 * i for i in range(29)] + [5000.0], name="late.json")
    [q2] = stream_queues(trace2, launcher2)
    assert q2.outlier_count == 1 and trace2.name_of(q2.outliers[0]) == "k29"
    assert q2.verdict == ""  # neither empty nor full


def test_a_graph_replay_is_one_entry_of_the_launch_queue_for_its_verdict():
    """The B300 SGLang decode replays 676 kernels from one cudaGraphLaunch (its README): the series counts each
    replayed kernel as queued from that launch (HTA's definition, up to 569 deep on stream 13), but the CPU
    never waited for a slot, so no stream is "full" and explain says nothing of a full queue. With the replay
    counted as eager launches, the same stream read "full"."""
    from pathlib import Path

    import pytest

    from tui.model import load_trace
    from tui.model.analyses.critical.queue import FULL_MIN
    from tui.model.analyses.results import Results

    folder = Path(__file__).resolve().parents[3] / "shared" / "traces"
    found = sorted(folder.glob("tracelens-2026-06-b300-sglang-*/*.json.gz"))
    if not found:
        pytest.skip("the shared B300 SGLang trace is not here (../shared/traces)")
    a = Results(load_trace(found[0], use_cache=False))
    deep = [q for q in a.launch_queues.streams if q.max_length >= FULL_MIN]
    assert deep and all(q.eager_full is False and q.verdict != "full" for q in deep)
    assert not [f for f in a.findings if "queue-full" in f.parts]
