"""The critical path through overlapping work: Python frames that hold the window, the profiler's final synchronize,
a thread that only waits, kernels that overlap on their stream, streams that wait for one another; and on every
shared trace, the path's gaps between kernels are the device's idle time."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT, SHARED, shared_params, shared_traces
from critical_traces import (
    allreduce,
    graph_replay,
    moe_spin,
    overlapped,
    python_held,
    replayed_step,
    side_stream_unlinked,
    sync_middle,
    sync_other_device,
)
from test_critical import covers, path_of, results, steps, us

from tui.model import load_trace
from tui.model.analyses.breakdown import breakdown
from tui.model.analyses.critical import find_window, parse_spec, what_if
from tui.model.analyses.results import Results
from tui.model.cats import BUSY_CATS, of_cats
from tui.tables.critical import notes, sentence, whatif_notes

B300 = ROOT / "tests" / "data" / "b300-sglang"  # (the shared trace, copied: see its README)


def test_frames_that_hold_the_window_are_not_work_and_the_final_synchronize_waits_for_the_kernel(tmp_path):
    p = path_of(python_held(tmp_path))
    covers(p)
    assert us(p) == {"cpu_bound": 187, "gpu_kernel_launch_overhead": 10, "gpu_compute_bound": 800, "sync": 3}
    names = [n for n, *_ in steps(p)]
    assert "gemm" in names and "threading.py(359): wait" not in names  # the waiting thread is never on it
    assert [it.name for it in p.items if it.kind == "sync"] == ["cudaDeviceSynchronize"]
    assert any("the profiler's final synchronize" in n for n in notes(p))


def test_kernels_that_overlap_on_their_stream_are_compute_not_gaps(tmp_path):
    p = path_of(overlapped(tmp_path))
    covers(p)
    assert us(p) == {"cpu_bound": 10, "gpu_kernel_launch_overhead": 5, "gpu_compute_bound": 50}
    assert steps(p)[-2:] == [("K1", "gpu_compute_bound", 15, 20), ("K2", "gpu_compute_bound", 35, 30)]


def test_a_faster_kernel_that_the_next_overlaps_lets_the_next_one_start_sooner(tmp_path):
    """K1 [15, 37] is on the path for 20 us, up to K2's start at 35 (K2 started while K1 ran and waited inside for
    it): K1 2x faster saves those 20 us' half, and K1 gone saves all of them (before: nothing, K2 kept its start)."""
    a = results(overlapped(tmp_path))
    window = find_window(a.trace)
    for spec, saved in (("kernel:K1=2", 10_000), ("kernel:K1=0", 20_000), ("kernel:K2=2", 15_000)):
        assert what_if(a, window, [parse_spec(spec)], a.graph_owner).saving_ns == saved, spec


def test_a_stream_waiting_on_another_takes_the_class_of_what_ran_there(tmp_path):
    p = path_of(side_stream_unlinked(tmp_path))
    covers(p)
    assert us(p) == {"gpu_memcpy_bound": 20, "gpu_communication_bound": 8002, "gpu_kernel_kernel_overhead": 18}
    assert [(s, d) for _n, c, s, d in steps(p) if c == "gpu_kernel_kernel_overhead"] == [(8012, 18)]
    assert ("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "gpu_communication_bound", 10, 8002) in steps(p)


def test_the_b300_decode_is_mostly_gpu_compute_and_the_waiting_thread_is_not_on_it():
    """Its README: the replay runs to 9.21 ms of a 9.25 ms window, the profiler's final cudaDeviceSynchronize
    returns when it ends; more than half of the path is the replay's GPU compute; thread 0 only waits."""
    a = Results(load_trace(next(B300.glob("*.json.gz"))))
    p = a.critical
    assert p.breakdown["gpu_compute_bound"] > p.length_ns / 2
    assert p.bound_by == "gpu_compute_bound" and a.summary.verdict == "compute-bound"
    lanes = {(a.trace.track_of(it.event).kind, a.trace.track_of(it.event).tid) for it in p.items if it.event >= 0}
    assert {tid for kind, tid in lanes if kind == "cpu"} == {267}  # the main thread; thread 0 only waits
    syncs = [it for it in p.items if it.kind == "sync"]
    assert [it.name for it in syncs] == ["cudaDeviceSynchronize"] and syncs[0].dur_ns < 10_000  # its tail only
    assert any("the profiler's final synchronize" in n for n in notes(p))


def test_the_b300_replays_overlapped_kernels_made_faster_save_their_share_of_the_path():
    """In the B300 replay nearly every kernel starts before the one before it ends; the path counts the bmm kernels
    for 3.13 ms (their own spans up to the next kernel's start). Twice as fast, they save half of that (before: 0 us)."""
    a = Results(load_trace(next(B300.glob("*.json.gz"))))
    p = a.critical
    on_path = sum(it.dur_ns for it in p.items if it.kind == "kernel" and "bmm" in it.name)
    assert 3.0e6 < on_path < 3.3e6
    saved = what_if(a, find_window(a.trace), [parse_spec("kernel:bmm=2")], a.graph_owner).saving_ns
    assert saved == pytest.approx(on_path / 2, rel=0.01)


def test_the_b300_final_synchronize_taken_away_leaves_the_replay_it_waited_for():
    """Its README: the profiler's final cudaDeviceSynchronize returns at 9.24 ms, when the replay's last kernel has
    ended (9.21; the last device activity 9.23). Without its wait the replay still runs: the path ends with it, its GPU compute as before
    (before: the path ended with the call, at 6.37 ms, and called 99.9% of it CPU work)."""
    a = Results(load_trace(next(B300.glob("*.json.gz"))))
    w = what_if(a, find_window(a.trace), [parse_spec("sync:cudaDeviceSynchronize=0")], a.graph_owner)
    assert 0 < w.saving_ns < 50_000  # the call's tail after the last kernel, and its return
    assert w.after.breakdown["gpu_compute_bound"] == w.before.breakdown["gpu_compute_bound"]
    x = a.trace.x
    device = of_cats(x.cat, BUSY_CATS)
    last_device_end = int((x.ts + x.dur)[device].max()) - a.trace.origin  # (README: 9.23 ms, of all 718)
    assert w.after.end_ns == last_device_end


def _busy(trace, rank: int) -> np.ndarray:
    """The device's busy intervals (the union of its activities on every stream) of a rank, merged."""
    x = trace.x
    gpu = np.array([t.kind == "gpu" and t.rank == rank for t in trace.tracks])
    m = of_cats(x.cat, BUSY_CATS) & gpu[x.track]
    order = np.argsort(x.ts[m])
    out: list[list[int]] = []
    for s, e in zip(x.ts[m][order].tolist(), (x.ts[m] + x.dur[m])[order].tolist(), strict=True):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return np.array(out, np.int64).reshape(-1, 2)


@pytest.mark.parametrize("path", shared_params(shared_traces()), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_paths_gaps_between_kernels_are_time_the_breakdown_calls_idle(path):
    """On every shared trace (those with more than one stream are the test), the typical step's path calls a stretch
    a gap between kernels only where no stream of its device ran (within 1% of the path), and so its gaps never
    exceed the breakdown's idle time of the same step (within 1%)."""
    a = Results(load_trace(path))
    p = a.critical
    busy = _busy(a.trace, p.rank)
    o = a.trace.origin
    gap = busy_in_gap = 0
    for it in p.items:
        if it.bound_by == "gpu_kernel_kernel_overhead":
            s, e = it.start_ns + o, it.start_ns + o + it.dur_ns
            gap += it.dur_ns
            busy_in_gap += int((np.clip(busy[:, 1], s, e) - np.clip(busy[:, 0], s, e)).sum())
    assert busy_in_gap <= 0.01 * p.length_ns, (busy_in_gap, p.length_ns)
    window = np.clip(busy, p.start_ns + o, p.end_ns + o)
    assert gap <= p.length_ns - int((window[:, 1] - window[:, 0]).sum()) + 0.01 * p.length_ns
    if p.window.startswith("ProfilerStep#"):  # the breakdown of the same step, as `tracetui breakdown --step` cuts it
        b = breakdown(a.trace, a.links.launcher, a.graph_owner, int(p.window.split("#")[1]))
        assert gap <= sum(r.idle_ns for r in b.devices if r.rank == p.rank) + 0.01 * p.length_ns


@pytest.mark.parametrize(("world_size", "cls"), [(1, "cpu_bound"), (2, "communication")])
def test_the_cpu_inside_a_collective_waits_on_other_ranks_only_where_there_are_some(tmp_path, world_size, cls):
    p = path_of(allreduce(tmp_path, world_size))
    covers(p)
    assert us(p) == ({"cpu_bound": 200} if cls == "cpu_bound" else {"cpu_bound": 50, "communication": 150})
    assert {c for n, c, *_ in steps(p) if n in ("c10d::allreduce_", "record_param_comms")} == {cls}


def test_a_synchronize_waits_for_the_device_work_it_returns_with_on_any_device(tmp_path):
    p = path_of(sync_other_device(tmp_path))
    covers(p)
    assert us(p) == {"cpu_bound": 105, "gpu_kernel_launch_overhead": 10, "gpu_compute_bound": 7185}
    assert ("long", "gpu_compute_bound", 60, 7145) in steps(p)  # not 7.1 ms of coming back from the wait


def test_a_synchronize_that_returns_while_a_kernel_runs_on_did_not_wait_for_it(tmp_path):
    """sync_middle: the stream synchronize waits for K1 [20, 100]; only its 2 us after K1 are back from the wait."""
    p = path_of(sync_middle(tmp_path))
    assert us(p)["sync"] == 2


def test_a_spin_inside_an_op_is_a_hidden_wait_on_the_kernel_it_waited_for(tmp_path):
    p = path_of(moe_spin(tmp_path))
    covers(p)
    assert us(p) == {"cpu_bound": 105, "gpu_kernel_launch_overhead": 10, "gpu_compute_bound": 680, "sync": 5}
    assert ("dispatch(F)", "sync", 700, 5) in steps(p)  # its own CPU time is the wait's tail only
    said = notes(p)
    assert any(n.startswith("1 hidden wait (") for n in said)
    assert (
        "hidden wait: dispatch(F) waits for routing_counts_kernel (GPU 0 stream 7), 680.0 us of it on the path" in said
    )


def test_graphs_on_a_step_that_replays_graphs_already_predicts_it_unchanged(tmp_path):
    a = results(replayed_step(tmp_path))
    w = what_if(a, find_window(a.trace), [parse_spec("graphs")], a.graph_owner)
    assert w.saving_ns == 0 and w.after.breakdown == w.before.breakdown
    assert ("already_replayed", 4) in w.caveats
    assert sentence(w) == "CUDA graphs: already replayed: 4 graph launches; the step is predicted unchanged (260.0 us)"
    assert whatif_notes(w)[0].startswith("already replayed: 4 graph launches in the region")
    # the queued replays' kernels wait for the ones before them: GPU time, not launch delays to take away
    assert w.before.breakdown["gpu_compute_bound"] == 240_000


@pytest.mark.parametrize(
    ("path", "launches"), [(SHARED / "cuda-h200-series/mlp_fwd_compiled_reduce_overhead.json.gz", 2), (B300, 1)]
)
def test_graphs_on_real_runs_that_replay_already_saves_nothing(path, launches):
    if not path.exists():
        pytest.skip("the shared traces are not here")
    a = Results(load_trace(next(path.glob("*.json.gz")) if path.is_dir() else path))
    w = what_if(a, a.typical_window, [parse_spec("graphs")], a.graph_owner)
    assert w.saving_ns == 0 and ("already_replayed", launches) in w.caveats


def test_a_what_ifs_path_cuts_its_gaps_by_the_device_work_at_its_new_times(tmp_path):
    """graph_replay with G1 twice as fast: every kernel after it moves 5 us earlier, and the 1 us where G4 waits
    for G2 while G3 already runs is still G3's compute, not a gap."""
    a = results(graph_replay(tmp_path))
    w = what_if(a, find_window(a.trace), [parse_spec("kernel:G1=2")], a.graph_owner)
    assert w.saving_ns == 5_000
    assert us(w.after) == {
        "cpu_bound": 10,
        "gpu_kernel_launch_overhead": 15,
        "gpu_compute_bound": 58,
        "gpu_kernel_kernel_overhead": 2,
    }
    assert ("G3", "gpu_compute_bound", 46, 1) in steps(w.after)
