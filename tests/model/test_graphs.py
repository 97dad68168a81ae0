"""CUDA/HIP graphs: launches own their replays, and replayed kernels are credited to the code that captured them."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES, SHARED, X, raw_events, write_trace

import tracetui
from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.calltree import CallTree
from tui.model.analyses.critical.queue import launch_latency
from tui.model.analyses.details import describe
from tui.model.analyses.graphs.capture import CaptureMismatch, credit, load_credited
from tui.model.analyses.graphs.replay import CreditedTrace, graph_launches, graph_owner, own_launches, replay_of
from tui.model.analyses.results import Results
from tui.model.view import navigate
from tui.tables.explain import note
from tui.widgets.details import launch_text, replay_text

DATA = Path(__file__).parents[1] / "data" / "vllm_piecewise"
PAIR = DATA / "graph_execution.json.gz"
V100 = SAMPLES / "v100-cudagraph-test.json.gz"
SHARED_GRAPHS = [
    SHARED / "hta-2022-08-v100-cudagraph-test" / "test.json.gz",
    SHARED / "hta-2023-05-a100-16rank-triton-cudagraph" / "rank0.json.gz",
    SHARED / "tracelens-2026-07-mi300-vllm-piecewise-graph-pair" / "graph_execution.json.gz",
]
GRAPH_NAME = re.compile(r"^(cuda|hip|cu)GraphLaunch")
DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}


def plain_reading(path: Path) -> tuple[int, int]:
    """Graph launch calls, and the device activities sharing their correlation ids, read with json alone."""
    events = [e for e in raw_events(path) if e.get("ph") == "X"]
    ids = {
        e["args"]["correlation"]
        for e in events
        if GRAPH_NAME.match(e.get("name", "")) and "correlation" in e.get("args", {})
    }
    launches = sum(
        1 for e in events if GRAPH_NAME.match(e.get("name", "")) and e.get("cat") in ("cuda_runtime", "cuda_driver")
    )
    replayed = sum(
        1 for e in events if e.get("cat", "").lower() in DEVICE_CATS and e.get("args", {}).get("correlation") in ids
    )
    return launches, replayed


def summary_json(capsys, *argv: str) -> tuple[dict, str]:
    assert main(["summary", *argv, "--format", "json", "--no-cache"]) == 0
    out = capsys.readouterr()
    return json.loads(out.out), out.err


# ---- counting -----------------------------------------------------------------------------------


def test_graph_counts_are_a_plain_reading_of_correlation_ids(capsys):
    s, _ = summary_json(capsys, str(V100))
    assert (s["graph_launches"], s["graph_kernels"]) == plain_reading(V100) == (12, 5046)
    assert s["graph_launches_empty"] == 0 and s["graph_kernels_credited"] == 0


@pytest.mark.parametrize("path", SHARED_GRAPHS, ids=lambda p: p.parent.name)
def test_graph_counts_on_shared_traces(path, capsys):
    if not path.exists():
        pytest.skip("../shared/traces is absent")
    s, _ = summary_json(capsys, str(path))
    assert (s["graph_launches"], s["graph_kernels"]) == plain_reading(path)
    assert s["graph_launches"] > 0


def test_traces_without_graphs_count_none(capsys):
    s, _ = summary_json(capsys, str(SAMPLES / "h100-bert-small.json.gz"))
    assert (s["graph_launches"], s["graph_kernels"]) == (0, 0)
    assert "graph" not in s["reason"]


def test_graph_launches_are_not_launch_outliers():
    s = Results(load_trace(V100, use_cache=False)).summary
    assert s.graphs.launches == 12 and s.graphs.eager_launches > 0
    assert not [o for o in s.launch_outliers if "Graph" in o.name]
    assert s.graphs.cost_per_kernel_us == pytest.approx(s.graphs.launch_cpu_us / 5046)
    assert s.graphs.launches_saved == 5046 - 12


# ---- crediting a separate capture (vLLM) -------------------------------------------------------


def _credited() -> Results:
    trace, told = load_credited(str(PAIR), use_cache=False)
    assert isinstance(trace, CreditedTrace), told
    assert told == [
        "note: credited 361 of 361 replayed kernels (25 of 25 graph launches) to the ops that launched them in the "
        f"capture {DATA / 'capture_traces' / 'graph_capture_rank_0.trimmed.pt.trace.json.gz'}"
    ]
    return Results(trace)


def test_credited_ops_agree_with_tracelens_within_two_percent():
    ops = {r.name: r for r in _credited().ops.rows if not r.is_device}
    with open(DATA / "tracelens_ops_summary.csv") as f:
        reference = list(csv.DictReader(f))
    assert len(reference) == 16
    for row in reference:
        want = float(row["total_direct_kernel_time_sum"])
        assert ops[row["name"]].self_device_us == pytest.approx(want, rel=0.02), row["name"]
        assert ops[row["name"]].count == int(row["Count"]), row["name"]


def test_crediting_keeps_every_device_total():
    plain, merged = Results(load_trace(PAIR, use_cache=False)), _credited()
    assert merged.summary.kernels == plain.summary.kernels == 413
    assert merged.summary.gpu_busy_us == plain.summary.gpu_busy_us
    assert merged.ops.self_device_total_us == pytest.approx(plain.ops.self_device_total_us)
    assert merged.ops.self_cpu_total_us == pytest.approx(plain.ops.self_cpu_total_us, rel=1e-6)
    assert merged.summary.launches == plain.summary.launches  # the copied launch calls are not launches
    assert (merged.summary.graph_launches, merged.summary.graph_kernels) == (25, 361)
    # before crediting no op owns the replayed kernels (they carry no External id); after, the ops own them
    owned = sum(r.self_device_us for r in plain.ops.rows if not r.is_device)
    assert owned < 0.05 * plain.summary.gpu_busy_us
    assert sum(r.self_device_us for r in merged.ops.rows if not r.is_device) == pytest.approx(156_085.9, rel=1e-4)


def test_credited_kernels_sit_under_their_capture_stack():
    a = _credited()
    trace = a.trace
    kernel = int(np.flatnonzero(a.graph_owner >= 0)[0])
    chain = [trace.name_of(i) for i in CallTree(a).path_to(kernel)]
    assert "hipGraphLaunch" in chain and chain[-2].endswith("(replayed)")
    captured = chain[chain.index("hipGraphLaunch") + 1 : -2]  # the capture's stack, under the graph launch
    assert (
        any(n.startswith("## Call CompiledFxGraph") for n in captured) and captured[-1] == "<built-in function launch>"
    )
    assert chain[-1] == "triton_poi_fused_0" and "triton_poi_fused_0" in captured
    d = describe(a, a.links.launcher[kernel], 0)
    assert d.copied and d.args.get("kernel")  # the capture's own args, read from the capture file


def test_code_view_credits_the_captured_source_lines():
    rows = {r.frame: r for r in _credited().code.rows}
    top = max(rows.values(), key=lambda r: r.self_device_us)
    assert top.frame == "triton_kernels/matmul_ogs.py(352): matmul_ogs" and top.self_device_us > 120_000
    assert rows["vllm/compilation/cuda_graph.py(208): __call__"].self_device_us < 1_000  # not the graph's caller


def test_a_capture_of_another_model_is_refused_in_one_line(capsys):
    capture = DATA / "capture_traces"
    s, err = summary_json(capsys, str(V100), "--graph-capture", str(capture))
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "does not match the replay: 0 of 12 graph launches matched" in lines[0]
    assert lines[0].startswith(f"tracetui: warning: {capture / 'graph_capture_rank_0.trimmed.pt.trace.json.gz'}")
    plain, _ = summary_json(capsys, str(V100))
    assert s == plain  # the replay is shown as it is
    with pytest.raises(CaptureMismatch, match="0 of 12"):
        credit(load_trace(V100, use_cache=False), load_trace(PAIR, use_cache=False), "other")


def test_a_missing_capture_is_an_error(capsys):
    assert main(["ops", str(PAIR), "--graph-capture", "/nonexistent/capture", "--no-cache"]) == 2
    assert capsys.readouterr().err.strip() == "tracetui: error: /nonexistent/capture: no such capture file or folder"


def test_explain_takes_the_capture_its_note_names(tmp_path, capsys):
    """The replay alone: explain's note says to pass --graph-capture PATH, and explain takes it: the 361 replayed
    kernels are then credited, the note is gone and the credited ops are judged against their roofs."""
    alone = tmp_path / PAIR.name
    alone.write_bytes(PAIR.read_bytes())  # no capture_traces/ beside it
    assert main(["explain", str(alone), "--no-cache"]) == 0
    bare = capsys.readouterr().out
    assert "Pass the capture trace with --graph-capture PATH" in bare
    assert main(["explain", str(alone), "--graph-capture", str(DATA / "capture_traces"), "--no-cache"]) == 0
    out = capsys.readouterr()
    assert "credited 361 of 361 replayed kernels" in out.err
    assert "Graph kernels without their capture" not in out.out and "--graph-capture" not in out.out
    assert out.out.count("against its roof") > bare.count("against its roof")


# ---- the in-trace capture, missing and extra events, lost records -------------------------------


def _launch(name, ts, corr, kernel=None, ext=None, dur=4):
    args = {"correlation": corr} | ({"kernel": kernel} if kernel else {}) | ({"External_id": ext} if ext else {})
    return X(name, ts, dur, cat="cuda_runtime", **args)


def _kernel(name, ts, corr, dur=5):
    return X(name, ts, dur, cat="kernel", pid=0, tid=7, correlation=corr, device=0, stream=7)


def captured_trace(tmp_path, kernels: list[str], replayed: list[list[str]], named: bool = True) -> Path:
    """A thread that captures one op per kernel between Begin/EndCapture (named: the launches say which kernel),
    then replays the graph."""
    events = [_launch("cudaStreamBeginCapture", 100, 1)]
    t = 110
    for k, name in enumerate(kernels):
        events += [
            X(f"aten::op{k}", t, 20, External_id=1000 + k),
            _launch("cudaLaunchKernel", t + 5, 10 + k, name if named else None, 1000 + k),
        ]
        t += 30
    events.append(_launch("cudaStreamEndCapture", t, 2))
    for r, names in enumerate(replayed):
        start, corr = 10_000 * (r + 1), 500 + r
        events += [X("CUDAGraph::replay", start - 5, 200), _launch("cudaGraphLaunch", start, corr, dur=100)]
        events += [_kernel(n, start + 150 + 10 * j, corr) for j, n in enumerate(names)]
    return write_trace(tmp_path / "captured.json", events)


def test_a_capture_in_the_same_trace_credits_its_ops(tmp_path, capsys):
    path = captured_trace(tmp_path, ["gemm", "relu"], [["gemm", "relu"], ["gemm", "relu"]])
    trace, told = load_credited(str(path), use_cache=False)
    assert "credited 4 of 4 replayed kernels (2 of 2 graph launches)" in told[0] and "recorded in the trace" in told[0]
    a = Results(trace)
    ops = {r.name: r for r in a.ops.rows}
    assert (ops["aten::op0"].count, ops["aten::op0"].self_device_us) == (3, 10.0)  # the capture's call, two replays
    assert ops["cudaLaunchKernel (replayed)"].count == 4
    assert a.summary.launches == 2  # the two graph launches: the capture's launch calls ran nothing (captured)
    assert [(c.name, c.count) for c in a.summary.other_runtime if c.name == "cudaLaunchKernel"] == [
        ("cudaLaunchKernel", 2)
    ]
    rules = {f.rule: f for f in a.findings}
    assert "graph-capture-in-window" in rules and "graph-uncredited" not in rules
    assert "2 stream captures" not in note(rules["graph-capture-in-window"])
    assert "1 stream captures ran inside the profiled window" in note(rules["graph-capture-in-window"])


def test_a_capture_that_names_no_kernel_is_matched_by_position(tmp_path):
    path = captured_trace(tmp_path, ["gemm", "relu"], [["gemm", "relu"]], named=False)
    trace, _ = load_credited(str(path), use_cache=False)
    assert isinstance(trace, CreditedTrace) and trace.credit.matched == 2
    short = captured_trace(tmp_path, ["gemm", "relu"], [["gemm"]], named=False)
    assert not isinstance(load_credited(str(short), use_cache=False)[0], CreditedTrace)  # refused: nothing to go by


def test_a_few_missing_and_extra_kernels_are_tolerated(tmp_path):
    names = [f"k{i}" for i in range(20)]
    replay = names[:7] + names[8:13] + ["extra"] + names[13:]  # k7 lost, one kernel the capture never launched
    path = captured_trace(tmp_path, names, [replay])
    trace, told = load_credited(str(path), use_cache=False)
    assert isinstance(trace, CreditedTrace) and (trace.credit.matched, trace.credit.replayed) == (19, 20)
    a = Results(trace)
    launch = int(graph_launches(trace)[0])
    left = a.links.launched(launch)
    assert [trace.name_of(i) for i in left] == ["extra"]  # not matched: it stays under the graph launch
    found = [f for f in a.findings if f.rule == "graph-uncredited"]
    assert found and "1 of 20 replayed activities" in note(found[0])
    assert navigate.follow_flow(a, launch, True) == int(np.flatnonzero(a.graph_owner == launch)[0])


def test_a_graph_launch_without_device_activity_is_counted_and_noted(tmp_path):
    events = [_launch("cudaGraphLaunch", 10, 7, dur=50), _launch("cudaGraphLaunch", 100, 8, dur=50)]
    events += [_kernel("k", 160, 8), _launch("cudaLaunchKernel", 300, 9), _kernel("k", 310, 9)]
    a = Results(load_trace(write_trace(tmp_path / "t.json", events), use_cache=False))
    g = a.summary.graphs
    assert (g.launches, g.kernels, g.empty) == (2, 1, 1)
    found = [f for f in a.findings if f.rule == "graph-launches"]
    assert "No device activity carries the correlation id of 1 graph launch:" in note(found[0])
    assert "replays no device activity" in replay_text(describe(a, 0, 0))


# ---- the viewer's model: details, tree, ] and the replay's extent ------------------------------


def test_details_tree_and_navigation_of_a_graph_launch():
    a = Results(load_trace(V100, use_cache=False))
    launch = int(graph_launches(a.trace)[0])
    replay = replay_of(a.trace, a.graph_owner, launch)
    d = describe(a, launch, 0)
    assert d.replay is not None and d.replay.count == replay.count == int((a.graph_owner == launch).sum()) > 1
    assert replay_text(d).startswith(f"replays {replay.count:,} kernels, ")
    assert d.replay.device_us == pytest.approx(a.trace.x.dur[replay.events].sum() / 1000)
    assert describe(a, int(replay.events[0]), 0).replayed_by == (launch, "cudaGraphLaunch")
    first = navigate.follow_flow(a, launch, True)
    assert first == int(replay.events[0]) and a.trace.x.ts[first] == replay.start_ns
    span = navigate.replay_span(a, launch)
    assert span is not None and span[1:] == (replay.start_ns, replay.end_ns)
    node = _node_of(CallTree(a, merge=False), launch)
    kids = CallTree(a, merge=False).children(node)
    assert len({k.name for k in kids}) == len(kids) < replay.count  # grouped by name, not one line each
    assert sum(k.count for k in kids) == replay.count


def _node_of(tree: CallTree, event: int):
    """The tree node of one event, found by walking its path from the root."""
    path = tree.path_to(event)
    nodes = tree.roots()
    node = next(n for n in nodes if path[0] in n.events or (n.kind == "step" and event in n.events))
    for want in path[1:]:
        node = next(n for n in tree.children(node) if want in n.events)
    return node


async def test_the_timeline_brackets_the_replay_and_goes_to_its_first_kernel():
    from conftest import wait_for_main

    from tui.app import TraceApp
    from tui.model.view.viewport import fit

    app = TraceApp([str(V100)], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        tl = screen.timeline
        a = tl.analysis
        launch = int(next(i for i in a.nesting.order if a.trace.name_of(i) == "cudaGraphLaunch"))
        kernels = a.links.launched(launch)
        tl.select(launch)
        await pilot.press("]")
        assert tl.selected == int(kernels[np.argmin(a.trace.x.ts[kernels])])
        tl.select(launch)
        track = int(a.trace.x.track[kernels[0]])
        line = next(k for k, ln in enumerate(tl.lines) if ln.kind == "row" and ln.track == track and ln.depth == 0)
        span = navigate.replay_span(a, launch)
        assert span is not None and span[0] == track
        tl.view = fit(span[1], span[2], tl.cells_width, margin=0.2)
        text = "".join(seg.text for seg in tl._cells(tl.lines[line]))
        assert text.index("[") < text.rindex("]")  # the replay's first start and last end, in view
        tl.select(int(kernels[0]))  # a kernel: nothing to bracket
        assert "[" not in "".join(seg.text for seg in tl._cells(tl.lines[line]))


def test_a_credited_replay_is_still_one_launch_per_graph_launch_from_its_call():
    """Credited to its capture, each replayed kernel links to a copy of its capture-time launch call (laid out
    inside the graph launch's span); the launch figures still count the 25 hipGraphLaunch calls once each, from
    the graph launch's start to its replay's first activity, as on the replay read alone."""
    a, plain = _credited(), Results(load_trace(PAIR, use_cache=False))
    for r in (a, plain):
        graphs = graph_launches(r.trace)
        owner = graph_owner(r.trace)
        call = own_launches(r.trace, r.links.launcher)
        replayed = np.flatnonzero(owner >= 0)
        assert len(graphs) == 25 and len(replayed) == 361
        assert sorted(call[replayed][call[replayed] >= 0].tolist()) == sorted(graphs.tolist())
    dev, latency = launch_latency(a.trace, a.links.launcher)
    dev0, latency0 = launch_latency(plain.trace, plain.links.launcher)
    assert len(dev) == len(dev0) == 87 and sorted(latency.tolist()) == sorted(latency0.tolist())  # 62 eager + 25


def test_a_replayed_kernel_has_no_launch_latency_of_its_own_but_the_first():
    """Details: the replay's first kernel is the graph launch's (launch → start from the call), the others are
    nodes the GPU ran in order, with no launch latency of their own (it read milliseconds from the one call)."""
    a = Results(load_trace(V100, use_cache=False))
    x = a.trace.x
    g = int(graph_launches(a.trace)[0])
    r = replay_of(a.trace, graph_owner(a.trace), g)
    first, second = describe(a, int(r.events[0])), describe(a, int(r.events[1]))
    assert first.launch[0] == second.launch[0] == g
    assert first.launch_latency_ns == int(x.ts[r.events[0]] - x.ts[g]) and second.launch_latency_ns is None
    assert "no launch → start of its own" in launch_text(second) and "launch → start" in launch_text(first)
    sql = tracetui.load(V100).sql(
        f"SELECT count(*) AS n, count(latency_us) AS timed FROM launches WHERE launch_id = {g}"
    )["rows"]
    assert sql == [{"n": r.count, "timed": 1}]


H200 = SAMPLES / "cuda-h200"


@pytest.mark.parametrize(
    ("capture", "kernels", "gpu_us", "share_pct"),
    [("matmul_add_4096_warm_compiled_reduce_overhead", 6, 146.8, 28), ("mlp_fwd_compiled_reduce_overhead", 2, 34.1, 8)],
)
def test_reduce_overhead_names_the_input_copies_before_each_replay(capture, kernels, gpu_us, share_pct):
    """torch.compile(mode='reduce-overhead') copies each non-static input into the graph's buffer with one
    aten::_foreach_copy_ beside the graph launch, under the same compiled call (cudagraph_trees.py). On the H200
    captures those copies are 28% and 8% of the device time of copies and replays: the finding counts the kernels
    each copy launched (the multi_tensor_apply kernels read in the raw events), not the replays'."""
    path = H200 / f"{capture}.json.gz"
    a = Results(load_trace(path, use_cache=False))
    (found,) = [f for f in a.findings if f.rule == "graph-input-copies"]
    raw = [e for e in raw_events(path) if e.get("cat") == "kernel" and "multi_tensor_apply" in e["name"]]
    assert found.figures["kernels"] == len(raw) == kernels
    assert found.figures["copy_us"].value == pytest.approx(sum(e["dur"] for e in raw), abs=1e-3)
    assert round(found.figures["copy_us"].value, 1) == gpu_us
    assert round(100 * found.figures["share"].value) == share_pct
    assert f"{gpu_us} us of GPU time" in note(found) and "mark_static_address" in note(found)


@pytest.mark.parametrize("capture", ["matmul_add_4096_warm_compiled", "matmul_add_4096_warm_eager"])
def test_no_input_copies_are_said_where_no_graph_replays(capture):
    a = Results(load_trace(H200 / f"{capture}.json.gz", use_cache=False))
    assert not [f for f in a.findings if f.rule == "graph-input-copies"]
