"""What-if on small traces: the graph re-solved with edges faster or gone, and specs that are wrong said so."""

from __future__ import annotations

import pytest
from critical_traces import gpu_bound, launch_bound, serial_cpu, sync_middle
from test_critical import results

from tui.model.analyses.critical import WhatIfError, find_window, parse_spec, what_if, what_if_for_event
from tui.tables.critical import sentence


def solved(path, *specs: str):
    a = results(path)
    return what_if(a, find_window(a.trace), [parse_spec(s) for s in specs], a.graph_owner)


def after_us(w) -> float:
    return w.after.length_ns / 1000


def test_a_faster_kernel_on_the_path_saves_what_it_loses(tmp_path):
    w = solved(gpu_bound(tmp_path), "kernel:K3=2")
    assert (w.before.length_ns, w.saving_ns) == (155_000, 30_000)
    assert {k: v / 1000 for k, v in w.after.breakdown.items() if v} == {
        "cpu_bound": 8,
        "gpu_kernel_launch_overhead": 7,
        "gpu_compute_bound": 108,
        "sync": 2,
    }
    assert sum(w.after.breakdown.values()) == w.after.length_ns
    assert w.matched == [["K3"]]
    assert sentence(w) == "K3 2× faster saves 30.0 us of 155.0 us (19%); the path still runs mostly through GPU compute"


def test_kernels_gone_leave_their_launches_with_the_typical_launch_delay(tmp_path):
    # each kernel then starts at its launch plus the median launch delay where a launch bound (7 us): K3 at 32,
    # the synchronize returns 2 us later (its own tail), the step 3 us after that
    w = solved(gpu_bound(tmp_path), "kernel:^K=0")
    assert after_us(w) == 40
    assert w.after.bound_by == "cpu_bound"
    assert sentence(w).endswith("the path then runs mostly through the CPU")


def test_launch_overhead_gone(tmp_path):
    w = solved(launch_bound(tmp_path), "launch=0")
    assert (w.before.length_ns, after_us(w)) == (49_500, 8.5)  # only the CPU between launches is left
    assert sentence(w).startswith(
        "no launch overhead (the launch calls and delays gone) saves 41.0 us of 49.5 us (83%)"
    )
    assert "CUDA graphs" not in sentence(w)  # launch=0 is not what CUDA graphs do: graphs is its own what-if


def test_cpu_and_op_self_time_faster_and_specs_combine(tmp_path):
    trace = serial_cpu(tmp_path)
    assert after_us(solved(trace, "cpu=2")) == 50
    assert after_us(solved(trace, "op:^B$=2")) == 85  # B's own 30 us, not C's 10 inside it
    assert after_us(solved(trace, "op:^C$=0")) == 90
    assert after_us(solved(trace, "op:^B$=2", "op:^C$=0")) == 75
    assert after_us(solved(trace, "cpu=2", "op:^A$=3")) == 40  # the other 70 us halved, A (30 us) six times faster


def test_a_synchronize_removed_lets_the_cpu_run_on(tmp_path):
    w = solved(sync_middle(tmp_path), "sync:StreamSync=0")
    assert (w.saving_ns, w.matched) == (82_000, [["cudaStreamSynchronize"]])
    assert sentence(w) == (
        "without the waits of cudaStreamSynchronize saves 82.0 us of 200.0 us (41%); "
        "the path still runs mostly through the CPU"
    )


def test_a_change_off_the_path_saves_nothing_and_a_slower_one_costs(tmp_path):
    trace = sync_middle(tmp_path)
    assert solved(trace, "op:ProfilerStep=1").saving_ns == 0
    slower = solved(trace, "kernel:K1=0.5")
    assert slower.saving_ns == -80_000
    assert sentence(slower).startswith("K1 2× slower costs 80.0 us: 280.0 us instead of 200.0 us (+40%)")


def test_a_change_that_saves_nothing_says_whether_it_is_on_the_path(tmp_path):
    """The device synchronize's own CPU time is not what the step waits on (its wait for K3 is): faster, it saves
    nothing, and the sentence says it is off the path rather than "off the path, or replaced by as long"."""
    w = solved(gpu_bound(tmp_path), "op:cudaDeviceSynchronize=2")
    assert (w.saving_ns, w.on_path) == (0, False)
    assert sentence(w).startswith(
        "cudaDeviceSynchronize (self time) 2× faster saves nothing of 155.0 us: what it changes is not on the "
        "critical path;"
    )
    assert solved(gpu_bound(tmp_path), "kernel:K3=2").on_path  # K3 is on the path: it saves 30 us
    # 1x faster changes nothing at all, on the path or off it: said so, not "not on the critical path"
    assert sentence(solved(gpu_bound(tmp_path), "kernel:K3=1")).startswith(
        "K3 1× faster saves nothing of 155.0 us: at 1× nothing changes;"
    )


def test_what_if_for_one_event_runs_in_the_step_that_holds_it(tmp_path):
    a = results(serial_cpu(tmp_path))
    b = next(i for i in range(a.trace.n) if a.trace.name_of(i) == "B")
    w = what_if_for_event(a, b, 2.0)
    assert (w.before.window, w.saving_ns) == ("ProfilerStep#1", 20_000)  # B and C inside it: 40 us halved
    g = results(gpu_bound(tmp_path))
    k2 = next(i for i in range(g.trace.n) if g.trace.name_of(i) == "K2")
    assert what_if_for_event(g, k2, 2.0).saving_ns == 20_000


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("gemm=2", "start it with one of kernel, op, sync, launch, cpu"),
        ("kernel:gemm", "say how much faster after '='"),
        ("kernel:=2", "give a pattern (kernel:REGEX=FACTOR)"),
        ("kernel:(=2", "bad regular expression"),
        ("kernel:gemm=fast", "the factor must be a number of times faster, or 0 for gone"),
        ("kernel:gemm=-1", "the factor must be a number"),
        ("sync:Stream=2", "a synchronize can only be removed (sync:REGEX=0)"),
        ("launch:x=0", "launch takes no pattern"),
        ("cpu", "say how much faster"),
    ],
)
def test_a_spec_that_does_not_parse_names_itself_and_what_is_wrong(spec, says):
    with pytest.raises(WhatIfError) as err:
        parse_spec(spec)
    assert str(err.value).startswith(f"--what-if {spec!r}: ") and says in str(err.value)


def test_specs_parse_with_their_factor_and_a_pattern_holding_equals_signs():
    assert parse_spec("kernel:a=b=2x") == parse_spec("kernel:a=b=2x")
    s = parse_spec("kernel:a=b=2x")
    assert (s.what, s.pattern, s.factor) == ("kernel", "a=b", 2.0)
    assert parse_spec("launch=0").factor == 0 and parse_spec("cpu=1.5").factor == 1.5


def test_a_spec_that_matches_nothing_in_the_window_is_an_error(tmp_path):
    with pytest.raises(WhatIfError, match=r"--what-if 'kernel:nothing=2' matches nothing in ProfilerStep#1"):
        solved(gpu_bound(tmp_path), "kernel:nothing=2")
    with pytest.raises(WhatIfError, match="matches nothing"):
        solved(serial_cpu(tmp_path), "launch=0")  # no launches in a CPU-only step


def test_graphs_says_how_much_of_its_saving_is_a_launch_a_warm_step_would_not_pay():
    """The MI250 sample's only real step holds a 6.5 ms hipLaunchKernel (a kernel's first use: the summary leaves it
    out of its launch figures as an outlier). A replay takes it away with the rest; the what-if says how much of the
    recorded path it was, so the saving is not read as what graphs buy a warm step. The H100 BERT sample (warm,
    no outlier) says nothing of the kind."""
    from conftest import SAMPLES

    from tui.model import load_trace
    from tui.model.analyses.results import Results

    a = Results(load_trace(SAMPLES / "mi250-rocm-train.json.gz"))
    slow = [o for o in a.summary.launch_outliers if o.name == "hipLaunchKernel"]
    assert len(slow) == 1 and 6_000 < slow[0].dur_us < 7_000
    w = what_if(a, a.typical_window, [parse_spec("graphs")], a.graph_owner)
    on_path = sum(it.dur_ns for it in w.before.items if it.event == slow[0].event)
    assert ("one_time_launches", on_path) in w.caveats and on_path >= slow[0].dur_us * 1000 * 0.99
    assert w.saving_ns > on_path  # the rest of the saving is the step's other CPU work
    b = Results(load_trace(SAMPLES / "h100-bert-small.json.gz"))
    assert not b.summary.launch_outliers
    assert not [
        c
        for c in what_if(b, b.typical_window, [parse_spec("graphs")], b.graph_owner).caveats
        if c[0] == "one_time_launches"
    ]


def test_graphs_refuses_a_trace_without_device_work(capsys):
    """GIVEN a CPU-only capture (matmul_add on the CPU: no kernel, copy or set) WHEN a graphs what-if is asked, on
    the command line or for one op as the viewer's g asks it THEN both refuse in one line saying why: there is no
    device work to replay (it predicted "saves 21.7 us of 47.5 us (46%)", the ops' own CPU work taken away)."""
    from conftest import SAMPLES

    from tui.cli import main
    from tui.model.analyses.critical.whatif import NO_DEVICE_WORK

    path = SAMPLES / "cpu" / "matmul_add_64_warm_eager.json.gz"
    a = results(path)
    op = next(i for i in range(a.trace.n) if a.trace.name_of(i) == "aten::matmul")
    with pytest.raises(WhatIfError) as caught:
        what_if_for_event(a, op, 0.0, a.graph_owner, graph=True)
    assert str(caught.value) == f"aten::matmul: {NO_DEVICE_WORK}"
    assert "no device work" in NO_DEVICE_WORK and "nothing to replay" in NO_DEVICE_WORK
    for spec in ("graphs", "graphs:matmul_add"):
        assert main(["critical", str(path), "--what-if", spec]) == 2
        err = capsys.readouterr().err
        assert err.strip().splitlines() == [f"tracetui: error: --what-if {spec!r}: {NO_DEVICE_WORK}"]
    # an op faster still works there: it is CPU work the trace has
    assert what_if_for_event(a, op, 2.0, a.graph_owner).specs[0].what == "event"
