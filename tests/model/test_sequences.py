"""Recurring kernel sequences (`kernels --sequences`): found with the right count on a built trace whose answer is
known by construction, on real traces whose layer count is known, and never failing on traces in nanoseconds."""

from __future__ import annotations

import json
from pathlib import Path

import device_traces as D
import numpy as np
import pytest
from conftest import SAMPLES, SHARED, X, write_trace

from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.fusion import FUSIBLE, GRAPH, LONG, STEP, sequence_rows
from tui.model.analyses.results import Results
from tui.reports.sequences import render_sequences
from tui.tables.base import sort_rows
from tui.tables.sequences import SORTS

STEPS, LAYERS = 3, 4
LAYER = ("gemm", "bias", "gelu_k", "add_k")


def layered(tmp: Path) -> Path:
    """STEPS steps of LAYERS blocks (module frames nn.Module: Block_0..3), each an aten::linear over an aten::addmm
    (a GEMM and a bias kernel), a gelu and an add: the block's four kernels recur LAYERS x STEPS times, the linear's
    two as often, and each step (seven more kernels: a loss op's) STEPS times. A lone op launches once."""
    events, corr, t = [], 0, 0.0

    def launch(name: str, at: float) -> list[dict]:
        nonlocal corr
        corr += 1
        return [D.call("cudaLaunchKernel", at, 2, corr), D.on_device(name, at + 300, 3, corr)]

    for step in range(STEPS):
        s0 = t
        for layer in range(LAYERS):
            b0 = t
            events += [X(f"nn.Module: Block_{layer}", b0, 90, cat="python_function")]
            events += [X("aten::linear", b0 + 1, 40), X("aten::addmm", b0 + 2, 38)]
            events += launch("gemm", b0 + 5) + launch("bias", b0 + 20)
            events += [X("aten::gelu", b0 + 45, 20)] + launch("gelu_k", b0 + 50)
            events += [X("aten::add", b0 + 70, 15)] + launch("add_k", b0 + 75)
            t += 100
        events += [X("aten::mse_loss", t, 10)] + launch("loss_k", t + 2)
        t += 20
        events.insert(0, X(f"ProfilerStep#{step + 1}", s0 - 0.5, t - s0 + 1, cat="user_annotation"))
        t += 50
    events += [X("aten::lone", t, 30)] + launch("k1", t + 1) + launch("k2", t + 10) + launch("k3", t + 20)
    return write_trace(tmp / "layers.json", events)


def found(path: Path) -> dict[tuple[str, tuple[str, ...]], object]:
    a = Results(load_trace(path, use_cache=False))
    return {(s.op, tuple(s.kernels)): s for s in a.sequences}


def test_a_known_recurring_sequence_is_found_with_its_count(tmp_path):
    seqs = found(layered(tmp_path))
    block = seqs[("nn.Module: Block", LAYER)]  # every instance of the module class: one key
    assert block.count == LAYERS * STEPS
    assert block.device_ns == LAYERS * STEPS * len(LAYER) * 3_000
    assert block.stack == ["ProfilerStep*"]
    linear = seqs[("aten::linear", ("gemm", "bias"))]  # not aten::addmm too: the outermost of the same launches
    assert linear.count == LAYERS * STEPS and linear.stack == ["ProfilerStep*", "nn.Module: Block"]
    step = seqs[("ProfilerStep*", LAYER * LAYERS + ("loss_k",))]  # every ProfilerStep#N as one
    assert step.count == STEPS
    assert set(seqs) == {("nn.Module: Block", LAYER), ("aten::linear", ("gemm", "bias")), step_key()}
    assert len(block.occurrences) == block.count and len(block.activities) == block.count * len(LAYER)


def step_key() -> tuple[str, tuple[str, ...]]:
    return ("ProfilerStep*", LAYER * LAYERS + ("loss_k",))


def test_min_length_top_and_the_saving(tmp_path):
    a = Results(load_trace(layered(tmp_path), use_cache=False))
    rows = sequence_rows(a, a.sequences, 3, 0, "device")  # a step, no one fusion, after the blocks
    assert [(r.op, r.count) for r in rows] == [("nn.Module: Block", LAYERS * STEPS), ("ProfilerStep*", STEPS)]
    assert rows[1].saving == STEP and rows[1].saving_ns is None
    top = sequence_rows(a, a.sequences, 2, 1, "count")
    assert [(r.op, r.count) for r in top] == [("nn.Module: Block", LAYERS * STEPS)]  # ties: the most device time
    saving = top[0].saving
    assert saving.window.startswith("ProfilerStep#") and 0 <= saving.saving_ns <= saving.length_ns


def test_the_command_in_every_format(tmp_path, capsys):
    path = str(layered(tmp_path))
    assert main(["kernels", path, "--sequences", "--format", "json", "--no-cache"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [(r["op"], r["count"], r["length"]) for r in rows] == [("nn.Module: Block", 12, 4), ("ProfilerStep*", 3, 17)]
    assert rows[0]["kernels"] == list(LAYER) and rows[0]["device_total_us"] == pytest.approx(144.0)
    assert rows[1]["fused_saving_us"] is None and rows[1]["saving_why"] == "a whole step is no one fusion"
    assert main(["kernels", path, "--sequences", "--min-length", "2", "--top", "1", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("op,stack,kernels,length,count") and len(lines) == 2
    for fmt in ("text", "md"):
        assert main(["kernels", path, "--sequences", "--format", fmt]) == 0
        assert "nn.Module: Block" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["--sequences", "--sort", "count"],
        ["--min-length", "4"],
        ["--sequences", "--min-length", "1"],
        ["--queues", "--sequences"],
    ],
)
def test_usage_errors(tmp_path, capsys, argv):
    assert main(["kernels", str(layered(tmp_path)), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tracetui") and "Traceback" not in err


def test_the_layers_of_a_real_model():
    """Qwen1.5-0.5B (24 decoder layers, one profiled step): each layer's kernels recur 24 times; the BERT sample
    (4 layers, one step) 4 times."""
    qwen = SHARED / "tracelens-2025-07-h100-qwen1.5-0.5b" / "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
    if not qwen.is_file():
        pytest.skip("the shared traces are not here")
    by_op = {op: s for (op, _), s in found(qwen).items()}
    assert by_op["nn.Module: Qwen2DecoderLayer"].count == 24 and by_op["nn.Module: Qwen2MLP"].count == 24
    assert by_op["nn.Module: Linear"].count == 24 * 7  # q, k, v, o, gate, up, down
    bert = {op: s for (op, _), s in found(SAMPLES / "h100-bert-small.json.gz").items()}
    assert bert["nn.Module: BertLayer"].count == 4


@pytest.mark.parametrize("name", ["hta-2024-04-v100-ns-resolution", "cuda-h200-series/mlp_fwd_eager.json.gz"])
def test_traces_in_nanoseconds(name):
    """HTA's sequence analysis fails on traces in nanoseconds (its rounding makes negative durations); here every
    duration stays whole and nonnegative."""
    path = SHARED / name
    if not path.exists():
        pytest.skip("the shared traces are not here")
    files = sorted(path.glob("*.json.gz")) if path.is_dir() else [path]
    a = Results(load_trace(files[0], use_cache=False))
    rows = sequence_rows(a, a.sequences, 3, 5, "device")
    assert rows and all(r.count >= 2 and r.device_ns > 0 for r in rows)


def test_the_python_api_gives_the_commands_rows(tmp_path, capsys):
    import tracetui

    path = layered(tmp_path)
    doc = tracetui.load(path).sequences(min_length=2, top=0)
    assert main(["kernels", str(path), "--sequences", "--min-length", "2", "--top", "0", "--format", "json"]) == 0
    assert doc == json.loads(capsys.readouterr().out)
    assert [(r["op"], r["count"]) for r in doc["rows"]][:2] == [("nn.Module: Block", 12), ("aten::linear", 12)]


# HTA 0.5's get_frequent_cuda_kernel_sequences(operator_name="ProfilerStep") on the V100 trace in nanoseconds, run once
# with HTA_DISABLE_NS_ROUNDING=1 (as shipped it stops with a ValueError in its call graph): one pattern per step
# (it keys ProfilerStep#101, #102, ... apart), each of 1,219 GPU events, with these kernel durations (us).
HTA_NS_STEPS = {"ProfilerStep#101": 94569.795, "ProfilerStep#102": 94591.138, "ProfilerStep#103": 94459.362}
HTA_NS_STEPS |= {"ProfilerStep#104": 94561.467}


def test_a_steps_sequence_is_all_its_threads_work_as_htas():
    """A step's sequence holds the autograd thread's kernels too (1,219 a step, not the main thread's 460, which is
    the forward's): each step's device time equals HTA's, with its rounding off, to the nanosecond."""
    folder = SHARED / "hta-2024-04-v100-ns-resolution"
    if not folder.is_dir():
        pytest.skip("the shared traces are not here")
    a = Results(load_trace(sorted(folder.glob("*.json.gz"))[0], use_cache=False))
    x = a.trace.x
    seqs = {s.op: s for s in a.sequences}
    step, forward = seqs["ProfilerStep*"], seqs["## forward ##"]
    assert (step.count, step.length, forward.count, forward.length) == (5, 1219, 5, 460)
    acts = np.asarray(step.activities)
    calls = a.links.launcher[acts]
    for o in step.occurrences:
        name = a.trace.name_of(o)
        inside = acts[(x.ts[calls] >= x.ts[o]) & (x.ts[calls] < x.ts[o] + x.dur[o])]
        assert len(inside) == 1219
        if name in HTA_NS_STEPS:
            assert int(x.dur[inside].sum()) == round(HTA_NS_STEPS[name] * 1000)


def gpu_bound(tmp: Path) -> Path:
    """Three steps, each launching four blocks of three 10 us kernels within its first 20 us; the kernels run back to
    back on one stream from 20 us to 140 us: the GPU's work is the critical path."""
    events, corr = [], 0
    for step in range(3):
        s0 = step * 1000.0
        events.append(X(f"ProfilerStep#{step + 1}", s0, 20, cat="user_annotation"))
        for block in range(4):
            b0 = s0 + 1 + block * 4
            events.append(X(f"nn.Module: Block_{block}", b0, 3.5, cat="python_function"))
            for j, name in enumerate(("a_k", "b_k", "c_k")):
                corr += 1
                start = s0 + 20 + 10 * (3 * block + j)
                events += [D.call("cudaLaunchKernel", b0 + j, 0.5, corr), D.on_device(name, start, 10, corr)]
    return write_trace(tmp / "gpu_bound.json", events)


def test_fusing_a_gpu_bound_sequence_saves_half_its_kernels(tmp_path):
    """explain's fusion rule (kernels twice as fast) on a path of back-to-back kernels: the step's four blocks of
    3 x 10 us save 60 us of its 140 us; the launches are off the path."""
    a = Results(load_trace(gpu_bound(tmp_path), use_cache=False))
    rows = {r.op: r for r in sequence_rows(a, a.sequences, 3, 0, "device")}
    block = rows["nn.Module: Block"]
    assert block.count == 12 and block.kernels == ["a_k", "b_k", "c_k"]
    s = block.saving
    assert (s.length_ns, s.saving_ns, s.bound_before, s.why) == (140_000, 60_000, "gpu_compute_bound", "")


A100_DDP = SAMPLES / "a100-ddp-nccl.json.gz"


def test_no_saving_for_a_step_nor_a_long_annotation_and_rows_told_apart():
    """The DDP sample: its steps (1,258 activities) and its forward annotation (452) are no one fusion; they keep their
    figures but get no saving and come after every row that could be fused. Rows of one op are numbered."""
    a = Results(load_trace(A100_DDP, use_cache=False))
    rows = sequence_rows(a, a.sequences, 3, 0, "device")
    by_op = {r.op: r for r in rows}
    step, forward = by_op["ProfilerStep*"], by_op["## forward ##"]
    assert (step.length, step.count, step.saving) == (1258, 3, STEP)
    assert (forward.length, forward.count, forward.saving) == (452, 3, LONG)
    assert sort_rows(rows, SORTS, "device") == rows  # the viewer's device sort ranks them so too
    fusible = [r.saving_ns is not None for r in rows]
    assert fusible == sorted(fusible, reverse=True) and all(
        r.length <= FUSIBLE for r in rows if r.saving_ns is not None
    )
    conv = [r.label for r in rows if r.op == "autograd::engine::evaluate_function: ConvolutionBackward0"]
    assert len(conv) > 2 and conv == [
        f"autograd::engine::evaluate_function: ConvolutionBackward0 #{k}" for k in range(1, len(conv) + 1)
    ]
    assert len({r.label for r in rows}) == len(rows)


@pytest.mark.parametrize("width", [80, 160])
def test_the_sequence_shows_at_80_and_160_columns(width, capsys, monkeypatch):
    """The Sequence column is the table's point: kept at any width, its kernels' names cut to fit, the line within
    the width; at 80 the stack, the mean and the kernel count give way first."""
    monkeypatch.setenv("TRACETUI_COLUMNS", str(width))
    assert main(["kernels", str(A100_DDP), "--sequences", "--no-cache"]) == 0
    out = capsys.readouterr().out.splitlines()
    head = out[0]
    assert "Sequence" in head and "Fused saves" in head and "Op" in head
    rows = out[2:12]
    assert all(len(line) <= width for line in out)
    assert all("Kernel" in line for line in rows)  # each row's first kernel's short name ('Kernel<cutlass…>(…)')
    assert sum("+" in line for line in rows) == 10  # and how many more
    ops = [line[: head.index("Count")].rstrip() for line in rows]
    assert len(set(ops)) == len(ops) and sum(op.endswith((" #1", " #2")) for op in ops) >= 4  # rows of one op apart
    left = next(line for line in out if line.startswith("Left out to fit"))
    assert "Sequence" not in left and ("Kernels" in left) == (width == 80)


def test_the_layers_a_cuda_graph_replays():
    """SGLang's decode: one cudaGraphLaunch replays 676 kernels (the trace's README), no op launching them one by one;
    within the replay, Qwen3-MoE's 48 layers repeat the same 14 kernels back to back: one row keyed by the launch,
    48 occurrences (each repeat's first kernel), with no saving solved; the report says how the replay is counted."""
    path = SHARED / "tracelens-2026-06-b300-sglang-qwen3moe-decode-cudagraph"
    if not path.is_dir():
        pytest.skip("the shared traces are not here")
    trace = next(path.glob("*.json.gz"))
    a = Results(load_trace(trace, use_cache=False))
    (graph,) = [s for s in a.sequences if s.graph]
    assert (graph.op, graph.count, graph.length) == ("cudaGraphLaunch", 48, 14)
    assert len(graph.occurrences) == 48 and len(graph.activities) == 48 * 14
    x = a.trace.x
    names = [a.trace.name_of(e) for e in graph.occurrences]
    assert names == [graph.kernels[0]] * 48 and np.all(np.diff(x.ts[graph.occurrences]) > 0)
    assert graph.device_ns == int(x.dur[graph.activities].sum())
    (row,) = sequence_rows(a, a.sequences, 3, 0, "device")
    assert row.saving == GRAPH and row.saving_ns is None
    assert "1 graph launch replayed 676 device activities" in render_sequences(a, "text")


def test_no_sequence_says_why_where_a_graph_replayed_the_kernels(tmp_path):
    """Two graph launches of three kernels each, all different: nothing recurs, and the line says the replays are
    why (no op launched them)."""
    events = []
    for k, at in enumerate((0.0, 100.0)):
        events.append(D.call("cudaGraphLaunch", at, 5, 10 + k))
        events += [D.on_device(f"k{k}_{j}", at + 10 + 5 * j, 3, 10 + k) for j in range(3)]
    a = Results(load_trace(write_trace(tmp_path / "graphs.json", events), use_cache=False))
    assert render_sequences(a, "text") == (
        "No sequence of 3 device activities or more recurs in this trace outside CUDA graphs: 2 graph launches "
        "replayed 6 device activities, which no op launched one by one, so none keys a sequence."
    )
