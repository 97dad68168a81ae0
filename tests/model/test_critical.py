"""The critical path on small traces whose path is known by hand: every rule, and the path covering its window."""

from __future__ import annotations

import numpy as np
import pytest
from critical_traces import (
    backward,
    event_wait,
    gpu_bound,
    graph_replay,
    launch_bound,
    records_lost,
    serial_cpu,
    sync_middle,
)

from tui.model import load_trace
from tui.model.analyses.critical import CriticalPath, WindowError, critical_path, find_window
from tui.model.analyses.critical.path import graph
from tui.model.analyses.critical.solve import solve
from tui.model.analyses.results import Results


def results(path) -> Results:
    return Results(load_trace(path, use_cache=False))


def path_of(path, **window) -> CriticalPath:
    a = results(path)
    return critical_path(a, find_window(a.trace, **window), a.graph_owner)


def us(p: CriticalPath) -> dict[str, float]:
    """The breakdown's non-zero classes in us."""
    return {k: v / 1000 for k, v in p.breakdown.items() if v}


def steps(p: CriticalPath) -> list[tuple[str, str, float, float]]:
    """The path as (name, class, start, duration) in us."""
    return [(it.name, it.bound_by, it.start_ns / 1000, it.dur_ns / 1000) for it in p.items]


def covers(p: CriticalPath) -> None:
    """The items follow each other without a gap from the window's start to its end, and add up to the breakdown."""
    t = p.start_ns
    for it in p.items:
        assert it.start_ns == t and it.dur_ns > 0
        t += it.dur_ns
    assert t == p.end_ns
    assert sum(p.breakdown.values()) == p.length_ns


def test_serial_cpu_is_all_cpu_and_attributes_each_stretch_to_its_innermost_op(tmp_path):
    p = path_of(serial_cpu(tmp_path))
    covers(p)
    assert us(p) == {"cpu_bound": 100}
    assert steps(p) == [
        ("ProfilerStep#1", "cpu_bound", 0, 10),
        ("A", "cpu_bound", 10, 30),
        ("ProfilerStep#1", "cpu_bound", 40, 10),
        ("B", "cpu_bound", 50, 10),
        ("C", "cpu_bound", 60, 10),
        ("B", "cpu_bound", 70, 20),
        ("ProfilerStep#1", "cpu_bound", 90, 10),
    ]


@pytest.mark.parametrize("record", [False, True])
def test_a_device_synchronize_waits_for_the_last_kernel_and_the_path_runs_through_the_stream(tmp_path, record):
    p = path_of(gpu_bound(tmp_path, record))
    covers(p)
    assert us(p) == {
        "cpu_bound": 8,
        "gpu_compute_bound": 138,
        "gpu_kernel_launch_overhead": 7,
        "sync": 2,
    }  # sync: its tail
    assert [n for n, *_ in steps(p)] == [
        "ProfilerStep#1",
        "K1",  # the launch delay, named for the kernel that waited
        "K1",
        "K2",
        "K3",
        "cudaDeviceSynchronize",
        "ProfilerStep#1",
    ]
    assert [it.kind for it in p.items] == ["cpu_op", "wait", "kernel", "kernel", "kernel", "sync", "cpu_op"]
    inferred = [n for code, n in p.caveats if code == "syncs_inferred"]
    assert inferred == ([] if record else [1])


def test_launch_bound_tiny_kernels_leave_the_path_on_the_cpu_until_the_last_launch(tmp_path):
    p = path_of(launch_bound(tmp_path))
    covers(p)
    assert us(p) == {"cpu_bound": 40, "gpu_kernel_launch_overhead": 9, "gpu_compute_bound": 0.5}
    assert p.end_ns / 1000 == 49.5 and p.span_end_ns / 1000 == 48  # the last kernel ends after the step's CPU side
    assert steps(p)[-2:] == [("tiny4", "gpu_kernel_launch_overhead", 40, 9), ("tiny4", "gpu_compute_bound", 49, 0.5)]


def test_a_sync_in_the_middle_hands_the_path_to_the_gpu_and_back(tmp_path):
    p = path_of(sync_middle(tmp_path))
    covers(p)
    assert us(p) == {"cpu_bound": 108, "gpu_compute_bound": 80, "gpu_kernel_launch_overhead": 10, "sync": 2}
    assert steps(p) == [
        ("ProfilerStep#1", "cpu_bound", 0, 10),
        ("K1", "gpu_kernel_launch_overhead", 10, 10),
        ("K1", "gpu_compute_bound", 20, 80),
        ("cudaStreamSynchronize", "sync", 100, 2),  # its own tail, back from the wait
        ("ProfilerStep#1", "cpu_bound", 102, 8),
        ("X", "cpu_bound", 110, 80),
        ("ProfilerStep#1", "cpu_bound", 190, 10),
    ]


@pytest.mark.parametrize("record", [False, True])
def test_an_event_wait_across_two_streams_is_followed_to_the_kernel_waited_for(tmp_path, record):
    p = path_of(event_wait(tmp_path, record))
    covers(p)
    assert us(p) == {
        "cpu_bound": 10,
        "gpu_kernel_launch_overhead": 10,
        "gpu_compute_bound": 130,
        "gpu_kernel_kernel_overhead": 1,
    }
    assert [n for n, *_ in steps(p)] == ["ProfilerStep#1", "K1", "K1", "K2", "K2"]


def test_a_graph_replay_runs_in_order_on_its_streams_after_its_launch(tmp_path):
    p = path_of(graph_replay(tmp_path))
    covers(p)
    assert us(p) == {
        "cpu_bound": 10,
        "gpu_kernel_launch_overhead": 15,
        "gpu_compute_bound": 63,
        "gpu_kernel_kernel_overhead": 2,
    }
    assert steps(p) == [
        ("ProfilerStep#1", "cpu_bound", 0, 10),
        ("G1", "gpu_kernel_launch_overhead", 10, 15),
        ("G1", "gpu_compute_bound", 25, 10),
        ("G2", "gpu_kernel_kernel_overhead", 35, 1),
        ("G2", "gpu_compute_bound", 36, 14),
        ("G4", "gpu_kernel_kernel_overhead", 50, 1),  # G4 on stream 8 waits for G2 of its own replay
        ("G3", "gpu_compute_bound", 51, 1),  # ... while G3 already runs on stream 7: the GPU is not idle
        ("G4", "gpu_compute_bound", 52, 38),
    ]
    assert ("graph_replays", 1) in p.caveats


def test_the_thread_that_called_backward_waits_for_the_engine_thread_and_the_engine_for_it(tmp_path):
    p = path_of(backward(tmp_path))
    covers(p)
    assert us(p) == {"cpu_bound": 300}
    names = [n for n, *_ in steps(p)]
    assert names == [
        "ProfilerStep#1",
        "## backward ##",
        "aten::ones_like",
        "## backward ##",  # the main thread hands over: the engine starts 10 us after ones_like ends
        "autograd::engine::evaluate_function: MulBackward0",
        "(CPU outside any recorded op)",
        "autograd::engine::evaluate_function: AddBackward0",
        "## backward ##",  # backward() returns 10 us after the engine's last op
        "ProfilerStep#1",
    ]
    assert [it.kind for it in p.items if it.name == "## backward ##"][1:] == ["wait", "wait"]


def test_lost_device_records_leave_a_cpu_only_path_that_says_why(tmp_path):
    p = path_of(records_lost(tmp_path))
    covers(p)
    assert us(p) == {"cpu_bound": 100}
    assert ("device_records_missing", 1) in p.caveats  # one launch call; a synchronize launches nothing


@pytest.mark.parametrize(
    "make", [serial_cpu, gpu_bound, launch_bound, sync_middle, event_wait, graph_replay, backward, records_lost]
)
def test_solving_the_graph_with_its_own_weights_gives_back_every_recorded_time(tmp_path, make):
    a = results(make(tmp_path))
    g = graph(a, find_window(a.trace), a.graph_owner)
    times, _ = solve(g, g.dp_weight(), np.ones(len(g.e), bool))
    assert np.array_equal(times, g.ts)


def test_windows_a_step_an_annotations_instance_or_the_whole_trace(tmp_path):
    a = results(backward(tmp_path))
    assert find_window(a.trace).name == "ProfilerStep#1"
    assert find_window(a.trace, step=1).name == "ProfilerStep#1"
    w = find_window(a.trace, annotation="Backward0", instance=1)
    assert (w.name, w.start / 1000 - a.trace.origin / 1000) == (
        "autograd::engine::evaluate_function: AddBackward0",
        160,
    )
    with pytest.raises(WindowError, match=r"no ProfilerStep#7; the trace has ProfilerStep#1"):
        find_window(a.trace, step=7)
    with pytest.raises(WindowError, match=r"--instance 2: 2 span\(s\) hold 'Backward0' \(instances 0-1\)"):
        find_window(a.trace, annotation="Backward0", instance=2)
    with pytest.raises(WindowError, match="no span's name holds 'nothing'"):
        find_window(a.trace, annotation="nothing")


def test_a_trace_without_steps_takes_the_whole_trace_and_the_slowest_step_is_the_default(tmp_path):
    from conftest import X, write_trace

    p = path_of(write_trace(tmp_path / "t.json", [X("a", 0, 10), X("b", 20, 10)]))
    assert (p.window, p.length_ns) == ("the whole trace", 30_000)
    assert us(p) == {"cpu_bound": 30}
    two = write_trace(
        tmp_path / "s.json",
        [X("ProfilerStep#1", 0, 10, "user_annotation"), X("ProfilerStep#2", 10, 30, "user_annotation")],
    )
    assert path_of(two).window == "ProfilerStep#2"


def test_a_window_that_lasts_no_time_is_an_error(tmp_path):
    from conftest import X, write_trace

    t = write_trace(tmp_path / "z.json", [X("ProfilerStep#1", 0, 0, "user_annotation"), X("a", 5, 1)])
    with pytest.raises(WindowError, match=r"ProfilerStep#1 holds no events \(it lasts 0 us\)"):
        path_of(t)
