"""One verdict, from the critical path of the typical step: each rule on a small trace whose answer is known by hand,
and on every shared trace the verdict names the group that holds the path (or mixed, when none holds half)."""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLES, X, shared_params, shared_traces, write_trace
from critical_traces import call, kernel, launched, op, step

from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.critical import parse_spec, what_if
from tui.model.analyses.results import Results
from tui.model.analyses.verdict import GROUP, MIXED_BELOW, path_verdict, shares


def results(path) -> Results:
    return Results(load_trace(path, use_cache=False))


def breakdown_us(a: Results) -> dict[str, float]:
    return {k: v / 1000 for k, v in a.critical.breakdown.items() if v}


def cpu_bound_third_busy(tmp) -> str:
    """Step [0,100]: three 11.4 us kernels, each launched after 30 us of Python between ops: GPU busy 34%."""
    events = [step(1, 0, 100)]
    for i in range(3):
        t = 30 * i + 25
        events += [op("aten::linear", t - 20, 25)]
        events += launched("gemm", t, 3, t + 5, 11.4, corr=i + 1)
    return str(write_trace(tmp / "cpu_bound.json", events))


def test_a_cpu_bound_step_a_third_busy_is_overhead_bound_not_mixed(tmp_path):
    a = results(cpu_bound_third_busy(tmp_path))
    s = a.summary
    assert 0.3 < s.gpu_utilization < 0.4  # the old busy-share rule said mixed
    assert s.verdict == "overhead-bound" and s.bound_by == "cpu_bound"
    assert s.bound_share >= 0.5
    assert s.reason.startswith("the critical path of ProfilerStep#1 (the typical step, 101.4 us) is 89% CPU work")
    assert "GPU busy 34% of the 101.4 us window" in s.reason  # the busy share stays, as a reason under the verdict


def compile_steps(tmp, all_compile: bool = False) -> str:
    """Three steps; the first (or every one) compiles (Dynamo's spans) before running a kernel."""
    events = []
    for n in range(3):
        t0 = n * 10_000
        long = n == 0 or all_compile
        dur = 9_000 if long else 500
        events += [step(n + 1, t0, dur)]
        if long:
            events += [op("dynamo", t0 + 10, 8_000), op("entire_frame_compile", t0 + 20, 7_900)]
            events += [op("compile_attempt_0 (dynamo_timed)", t0 + 30, 7_800)]
        run = t0 + dur - 300
        events += [
            op("Torch-Compiled Region: 0/0", run, 200),
            X("## Call CompiledFxGraph abc ##", run + 20, 150, cat="user_annotation"),
        ]
        events += launched("triton_poi_fused_add_0", run + 30, 5, run + 40, 100, corr=n + 1)
    return str(write_trace(tmp / ("all_compile.json" if all_compile else "compile.json"), events))


def test_steps_that_compiled_are_left_out_of_the_typical_step(tmp_path):
    a = results(compile_steps(tmp_path))
    c = a.compiling
    assert (c.frames, c.recompiles, c.graphs) == (1, 0, 1)
    assert c.us == 8_000 and [a.trace.name_of(i) for i in c.steps] == ["ProfilerStep#1"]
    assert a.typical is not None and a.typical.name in ("ProfilerStep#2", "ProfilerStep#3")
    assert a.summary.verdict != "compiling" and a.summary.path.window == a.typical.name
    found = [f for f in a.findings if f.rule == "compiling"]
    assert found and found[0].figures["steps"] == 1


def test_a_window_that_is_mostly_compiling_says_so(tmp_path, capsys):
    a = results(compile_steps(tmp_path, all_compile=True))
    assert a.summary.verdict == "compiling" and a.summary.bound_by == "compiling"
    assert main(["summary", compile_steps(tmp_path, all_compile=True), "--no-cache"]) == 0
    assert "torch.compile compiling" in capsys.readouterr().out


def watchdog(tmp) -> str:
    """No steps. The main thread launches one kernel in [0, 60]; a watchdog thread sleeps in a Python frame from 0
    to 5000 and launches nothing."""
    events = [op("aten::mm", 0, 50), *launched("gemm", 10, 5, 20, 40, corr=1)]
    events += [X("threading.py(359): wait", 0, 5_000, cat="python_function", tid=9)]
    events += [X("<built-in method acquire of _thread.lock object>", 1, 4_998, cat="python_function", tid=9)]
    return str(write_trace(tmp / "watchdog.json", events))


def test_a_sleeping_watchdog_thread_never_bounds_the_path(tmp_path):
    a = results(watchdog(tmp_path))
    p = a.critical
    assert p.window == "the whole trace" and p.length_ns == 60_000  # the work's extent, not the watchdog's
    assert not [it for it in p.items if "threading" in it.name or "acquire" in it.name]
    assert a.summary.verdict == "compute-bound"


def hidden_spin(tmp) -> str:
    """A dispatch op sits 185 us between its ops, until the kernel launched before it ends (a spin on host
    memory): no synchronize call is recorded."""
    events = [step(1, 0, 220), *launched("moe_dispatch_kernel", 5, 4, 12, 188, corr=1)]
    events += [op("moe::dispatch", 12, 190), op("aten::empty", 203, 5)]
    return str(write_trace(tmp / "spin.json", events))


def test_cpu_time_that_ends_when_the_device_drains_is_a_wait_on_the_device(tmp_path):
    a = results(hidden_spin(tmp_path))
    p = a.critical
    assert ("hidden_waits", 1) in p.caveats
    assert breakdown_us(a)["gpu_compute_bound"] == 188  # the path follows the kernel the CPU waited for
    assert breakdown_us(a).get("cpu_bound", 0) < 30
    assert a.summary.verdict == "compute-bound"
    spin = [it for it in p.items if it.name == "moe::dispatch" and it.kind == "sync"]
    assert spin and spin[0].bound_by == "sync" and spin[0].waits_for == "GPU 0 stream 7"


def test_a_kernel_still_queued_behind_others_is_not_a_hidden_wait(tmp_path):
    events = [step(1, 0, 220), *launched("k1", 5, 4, 12, 188, corr=1), *launched("k2", 8, 2, 200, 50, corr=2)]
    events += [op("moe::dispatch", 12, 190)]
    a = results(write_trace(tmp_path / "queued.json", events))
    assert not [code for code, _n in a.critical.caveats if code == "hidden_waits"]


def gloo(tmp) -> str:
    """CPU only: the step waits while two gloo threads all-reduce (its own thread records nothing inside)."""
    events = [step(551, 0, 210_000, tid=1074)]
    events += [X("gloo:all_reduce", 18_000, 173_000, cat="user_annotation", tid=3553)]
    events += [X("gloo:all_reduce", 26_000, 170_000, cat="user_annotation", tid=3554)]
    return str(write_trace(tmp / "gloo.json", events))


def test_collectives_on_a_cpu_only_capture_are_waits_on_other_ranks(tmp_path):
    a = results(gloo(tmp_path))
    assert a.summary.cpu_only and a.summary.verdict == "communication-bound"
    assert a.summary.bound_by == "communication"
    wake = [it for it in a.critical.items if it.waits_for]
    assert wake and "3554" in wake[-1].waits_for  # the step waits for the gloo thread that ended last


def contention(tmp) -> str:
    """Stream 8's GEMM holds the device 2 ms; stream 7's GEMM, launched right after, starts when it ends."""
    events = [step(1, 0, 40), *launched("gemm_side", 10, 3, 14, 2_000, corr=1, stream=8)]
    events += launched("gemm_main", 20, 3, 2_016, 2_000, corr=2, stream=7)
    return str(write_trace(tmp / "contention.json", events))


def test_a_kernel_held_by_another_streams_kernel_is_bound_by_that_compute_not_a_gap(tmp_path):
    a = results(contention(tmp_path))
    b = breakdown_us(a)
    assert b["gpu_compute_bound"] == 4_000 and b.get("gpu_kernel_launch_overhead", 0) < 10
    w = what_if(a, a.typical_window, [parse_spec("kernel:gemm=2")], a.graph_owner)
    assert w.saving_ns == 2_000_000  # both halves: the main GEMM starts when the faster side GEMM ends


def graph_region(tmp) -> str:
    """A compiled graph's call spends 60 us of CPU launching three 5 us kernels; the step ends when they do."""
    events = [step(1, 0, 100), X("## Call CompiledFxGraph abc ##", 20, 70, cat="user_annotation")]
    events += [op("aten::mm", 22, 15)]
    for i in range(3):
        events += launched(f"k{i}", 40 + 15 * i, 6, 48 + 15 * i, 5, corr=i + 1)
    return str(write_trace(tmp / "graphs.json", events))


def test_graphs_replaces_the_regions_cpu_work_by_one_replay(tmp_path):
    a = results(graph_region(tmp_path))
    w = what_if(a, a.typical_window, [parse_spec("graphs")], a.graph_owner)
    assert w.matched == [["## Call CompiledFxGraph abc ##"]]
    # the region (20 us in) costs one reduce-overhead call (100 us) instead of its 70 us, then 5 us launch delay,
    # three kernels of 5 us with 1.5 us replay gaps: 20 + 100 + 5 + 15 + 3 = 143 us, the step's own end after it
    assert w.after.length_ns == 143_000
    assert ("replay_cpu_trees", 100_000) in w.caveats
    mine = what_if(a, a.typical_window, [parse_spec("graphs:aten::mm")], a.graph_owner)
    assert mine.saving_ns == 15_000 - 10_000  # its 15 us of CPU, replaced by one bare graph launch (10 us)


def test_a_graphs_spec_that_matches_nothing_is_one_line(tmp_path, capsys):
    assert main(["critical", graph_region(tmp_path), "--what-if", "graphs:nothing_here"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "graphs:nothing_here" in err and "no span matching" in err


def test_the_verdict_groups():
    assert path_verdict({"cpu_bound": 45.0, "gpu_kernel_launch_overhead": 10.0, "gpu_compute_bound": 45.0}) == (
        "overhead-bound",
        "cpu_bound",
        0.55,
    )
    verdict, top, _share = path_verdict({"cpu_bound": 40.0, "gpu_compute_bound": 35.0, "gpu_memcpy_bound": 25.0})
    assert (verdict, top) == ("mixed", "cpu_bound")
    assert set(GROUP) >= {"sync", "compiling", "communication"}


def _every_trace():
    return [*sorted(SAMPLES.glob("*.json.gz")), *sorted(SAMPLES.glob("cpu/*.json.gz")), *shared_traces()]


@pytest.mark.parametrize("path", _every_trace(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_verdict_is_the_group_of_the_paths_top_class(path):
    """On every sample and shared trace: the summary's class is the typical step's path's top class, and its
    verdict that class's group when the group holds half the path, else mixed (CPU-only traces keep their own
    words for CPU work); its JSON says bound_by."""
    a = results(path)
    s = a.summary
    if s.device_records_missing:
        pytest.skip("device records missing: no GPU verdict to read")
    p = a.critical
    assert s.bound_by == p.bound_by, (s.bound_by, p.breakdown)
    by_group = shares(s.path.breakdown)
    group = GROUP.get(p.bound_by, "mixed")
    expected = group if by_group.get(group, 0.0) >= MIXED_BELOW and group != "mixed" else "mixed"
    if s.cpu_only and expected == "overhead-bound":
        assert s.verdict in ("cpu-in-ops", "cpu-between-ops")
    else:
        assert s.verdict == expected, (s.verdict, s.path.breakdown)
    assert s.path.window == p.window and s.bound_by in s.path.breakdown


def test_summary_json_gives_bound_by_beside_the_verdict(capsys):
    assert main(["summary", str(SAMPLES / "h100-bert-small.json.gz"), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["verdict"], doc["bound_by"]) == ("overhead-bound", "cpu_bound")
    assert doc["path"]["window"] == "ProfilerStep#6" and doc["path"]["breakdown"]["cpu_bound"] > 4000
    assert doc["cpu_per_kernel_us"] > 10 * doc["gpu_per_launch_us"]  # the CPU per kernel, not the call's 5.5 us


def test_a_blocking_copy_is_a_wait_not_a_launch_outlier(tmp_path):
    """A 6 ms cudaMemcpyAsync whose copy ends inside it (pageable memory): never a launch outlier, a wait."""
    events = [step(1, 0, 7_000), *launched("k", 10, 5, 20, 100, corr=1)]
    events += [
        call("cudaMemcpyAsync", 200, 6_000, corr=2),
        kernel("Memcpy DtoH (Device -> Pageable)", 6_100, 50, 2, cat="gpu_memcpy"),
    ]
    s = results(write_trace(tmp_path / "copy.json", events)).summary
    assert not s.launch_outliers and [c.name for c in s.blocking_copies] == ["cudaMemcpyAsync"]
    assert s.cpu_launch_us == 5


def test_hidden_waits_on_a_shared_trace_wait_for_a_stream():
    """The sampled 2-rank trace's rank 1 has copies and an optimizer step that sit until the device drains."""
    path = next(iter(p for p in shared_traces() if p.name == "sampled_rank-1.json.gz"), None)
    if path is None:
        pytest.skip("../shared is not here")
    p = results(path).critical
    hidden = dict(p.caveats).get("hidden_waits", 0)
    assert hidden >= 1
    waits = [it for it in p.items if it.bound_by == "sync"]
    assert waits and all(it.waits_for.startswith("GPU ") for it in waits)


@pytest.mark.parametrize("path", shared_params(shared_traces()), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_threads_that_do_no_work_never_hold_the_path(path):
    """On every shared trace: no stretch of the typical path belongs to a thread that launches nothing and runs no
    op, and without steps the window is the extent of the work."""
    from tui.model.analyses.critical.window import working_tracks

    a = results(path)
    try:
        p = a.critical
    except Exception as exc:  # noqa: BLE001 - a trace with nothing to walk says so elsewhere
        pytest.skip(f"no path: {exc}")
    t = a.trace
    working = working_tracks(t, p.rank)
    idle_lanes = {tr.id for tr in t.tracks if tr.rank == p.rank and tr.kind == "cpu" and not working[tr.id]}
    on_idle = [it for it in p.items if it.event >= 0 and int(t.x.track[it.event]) in idle_lanes]
    assert not [it for it in on_idle if it.event != p.event]  # (a step's own span is the window, wherever it is)


def queued_before_profiling(tmp) -> str:
    """Ten 1 ms kernels queued before the profiler started (no launch recorded), back to back from t=5 us; the step
    starts at 10 us with a device synchronize that waits for them, then launches one 2 ms kernel of its own."""
    events = [step(1, 10, 10_200)]
    events += [kernel(f"prev_gemm{i}", 5 + 1_001 * i, 1_000, corr=100 + i) for i in range(10)]
    events += [call("cudaDeviceSynchronize", 12, 10_005, corr=1)]  # ends as the last queued kernel does (10,014 us)
    events += launched("gemm", 10_020, 5, 10_030, 2_000, corr=2)
    return str(write_trace(tmp / "queued.json", events))


def test_a_synchronize_on_work_queued_before_profiling_waits_for_that_work(tmp_path):
    """The Qwen H100 trace: a step-opening cudaDeviceSynchronize waited 14 ms for kernels launched before the
    profiler started. Read as the CPU's own wait, it hid them: the verdict said 61% GPU compute, and kernels 100x
    faster saved 5%. Kernels that start as their stream's last one ends waited in its queue: the synchronize
    waits for them, and faster kernels shorten it."""
    a = results(queued_before_profiling(tmp_path))
    b = breakdown_us(a)
    assert b["gpu_compute_bound"] >= 11_900 and b.get("sync", 0) < 50, b
    assert a.summary.verdict == "compute-bound"
    w = what_if(a, a.typical_window, [parse_spec("kernel:gemm=2")], a.graph_owner)
    assert w.saving_ns >= 5_900_000  # both the queued kernels and the step's own run in half the time


def test_the_critical_report_gives_the_summarys_verdict_word_for_word(tmp_path, capsys):
    """`critical` on a CPU-only capture said overhead-bound (launch delays, gaps between kernels) beside a summary
    that said cpu-in-ops; on the summary's own window it now prints the summary's verdict and reason."""
    path = str(SAMPLES / "cpu" / "mlp_fwd.json.gz")
    s = results(path).summary
    assert main(["critical", path]) == 0
    line = next(t for t in capsys.readouterr().out.splitlines() if t.startswith("Verdict: "))
    assert line.startswith(f"Verdict: {s.verdict}: the critical path of ") and s.verdict.startswith("cpu-")
    assert "launch delays" not in line and line.endswith("(the summary's verdict)")


def test_a_step_whose_cpu_span_waits_for_work_queued_before_it_is_its_windows_length(tmp_path):
    """A step whose synchronize waits for work queued before it: that wait is inside its CPU span, so its elapsed
    time counts it as its critical path does (it left it out: the reason said '12.02 ms from its start to the end
    of its device work, 10.20 ms elapsed', the CPU span, neither the step's window nor its own work)."""
    s = results(queued_before_profiling(tmp_path)).summary
    (st,) = s.steps
    assert st.elapsed_us == s.typical.us == s.path.length_us == 12_020.0
    assert st.queued_us == 10_004.0  # the queued kernels ran from before its start (10 us) to 10,014 us
    assert "ProfilerStep#1 (the typical step, 12.02 ms)" in s.reason and "elapsed" not in s.reason
