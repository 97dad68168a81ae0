"""The launch queue behind the critical path: queue length per stream, launch-to-start latency, empty and full."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import write_trace
from critical_traces import launched, step
from test_critical import results

from tui.model.analyses.critical.queue import MIN_ACTIVITIES, launch_latency, queue_series, stream_queues
from tui.model.analyses.graphs.replay import graph_launches, graph_owner

B300 = Path(__file__).resolve().parents[1] / "data" / "b300-sglang"  # one cudaGraphLaunch replaying 676 kernels


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


def test_a_graph_replay_is_one_launch_from_its_call_to_its_first_kernel():
    """The B300 SGLang decode (tests/data/b300-sglang, its README): ONE cudaGraphLaunch at 2.88 ms, 0.98 ms long,
    replays 676 kernels on stream 13 from 3.86 ms. That is one launch, queued from 2.88 until the replay's first
    kernel starts at 3.86; its other 675 kernels are no launches (counted as 676 launches made at 2.88, stream 13
    read 676 slow calls, 667 late starts, a queue 676 deep and a median latency of 3.7 ms)."""
    a = results(next(B300.glob("*.json.gz")))
    t, x, launcher = a.trace, a.trace.x, a.links.launcher
    owner = graph_owner(t)
    [graph] = graph_launches(t)
    assert (owner >= 0).sum() == 676
    ev, latency = launch_latency(t, launcher)
    replayed = ev[owner[ev] >= 0]
    assert len(replayed) == 1 and replayed[0] == np.flatnonzero(owner >= 0)[np.argmin(x.ts[owner >= 0])]
    ms = lambda ns: round((int(ns) - t.origin) / 1e6, 2)  # noqa: E731
    assert (ms(x.ts[graph]), round(x.dur[graph] / 1e6, 2), ms(x.ts[replayed[0]])) == (2.88, 0.98, 3.86)
    assert round(latency[ev == replayed[0]][0] / 1e6, 2) == 0.98  # 2.88 -> 3.86
    rows = {r.lane: r for r in a.queues}
    s13 = rows["GPU 0 stream 13"]
    eager13 = int(((x.track[ev] == x.track[replayed[0]]) & (owner[ev] < 0)).sum())
    assert (s13.launches, s13.slow_calls) == (eager13 + 1, 1)  # the 0.98 ms graph launch is the one slow call
    # the queue: the replay is one entry; it peaks with the four launches made at 4.0-4.1 ms that wait behind the
    # replay until it ends at 9.21 ms (they are the stream's late starts)
    assert (s13.max, s13.late_starts) == (4, 4)
    late = ev[(x.track[ev] == x.track[replayed[0]]) & (latency > 1_000_000)]
    assert len(late) == 4 and all(ms(x.ts[k]) >= 9.2 for k in late) and all(owner[late] < 0)
    q = {s.track: s for s in a.launch_queues.streams}[int(x.track[replayed[0]])]
    assert q.activities == s13.launches and q.verdict == ""  # 17 launches: too few to call it empty or full
    assert not [f for f in a.findings if "queue-full" in f.parts]


def test_a_replays_kernels_have_no_launch_latency_but_the_first():
    """The kernels table: a name only ever replayed has no launch latency (no launch of its own), where it read
    about 3,700 us from the one graph launch; the replay's first kernel carries the graph launch's 0.98 ms."""
    a = results(next(B300.glob("*.json.gz")))
    t, x = a.trace, a.trace.x
    owner = graph_owner(t)
    rows = {r.name: r for r in a.kernels}
    eager_names = {t.name_of(int(i)) for i in np.flatnonzero((owner < 0) & (a.links.launcher >= 0))}
    replayed = np.flatnonzero(owner >= 0)
    first = t.name_of(int(replayed[np.argmin(x.ts[replayed])]))
    only_replayed = {t.name_of(int(i)) for i in replayed} - eager_names - {first}
    assert only_replayed and all(rows[n].latency_median_us is None for n in only_replayed)
    assert first not in eager_names and round(rows[first].latency_median_us / 1000, 2) == 0.98
