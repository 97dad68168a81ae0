"""Each op's kernel sequence and its delays (`ops --kernels`, SQL op_kernels), by hand on a built trace and against
HTA's get_aten_op_kernels_and_delay on the DDP sample (recorded by tests/hta_analyses.py)."""

from __future__ import annotations

import json
from pathlib import Path

import device_traces as D
import pytest
from conftest import SAMPLES, X, write_trace

import tracetui
from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.op_kernels import op_kernels
from tui.model.analyses.results import Results

HTA = json.loads((Path(__file__).parents[1] / "data" / "hta_analyses.json").read_text())["traces"]
DDP = SAMPLES / "a100-ddp-nccl.json.gz"
COPIES = ("Memcpy", "Memset")


def ops_trace(tmp: Path) -> Path:
    """Two aten::linear calls whose addmm launches a GEMM and a bias kernel; a relu; a Triton op (no aten op
    above its launch); a copy; a graph replay (left out)."""
    events = []
    for t0 in (0, 100):
        events += [X("aten::linear", t0, 50), X("aten::addmm", t0 + 5, 40)]
        events += [D.call("cudaLaunchKernel", t0 + 10, 2, t0 + 1), D.on_device("gemm", t0 + 30, 10, t0 + 1)]
        events += [D.call("cudaLaunchKernel", t0 + 20, 2, t0 + 2), D.on_device("bias", t0 + 45, 2, t0 + 2)]
    events += [X("aten::relu", 60, 10), D.call("cudaLaunchKernel", 62, 2, 3), D.on_device("relu_k", 70, 3, 3)]
    events += [X("triton_poi_fused_add", 200, 20), D.call("cuLaunchKernel", 205, 3, 5)]
    events += [D.on_device("triton_poi_fused_add_0", 215, 4, 5)]
    events += [X("aten::copy_", 230, 20), D.call("cudaMemcpyAsync", 232, 3, 6)]
    events += [D.on_device("Memcpy HtoD (Pinned -> Device)", 240, 5, 6, cat="gpu_memcpy", bytes=64)]
    events += [X("aten::replay", 260, 20), D.call("cudaGraphLaunch", 262, 3, 7)]
    events += [D.on_device("graph_k1", 270, 2, 7), D.on_device("graph_k2", 273, 2, 7)]
    return write_trace(tmp / "ops.json", events)


def rows(path: Path):
    a = Results(load_trace(path, use_cache=False))
    return {(r.op, tuple(r.kernels)): r for r in op_kernels(a.trace, a.links.launcher, a.nesting.parent)}


def test_kernel_sequences_by_hand(tmp_path):
    found = rows(ops_trace(tmp_path))
    assert set(found) == {
        ("aten::addmm", ("gemm", "bias")),
        ("aten::relu", ("relu_k",)),
        ("triton_poi_fused_add", ("triton_poi_fused_add_0",)),  # no aten op above: its innermost op
        ("aten::copy_", ("Memcpy HtoD (Pinned -> Device)",)),  # copies are in the sequence (HTA leaves them out)
    }  # the graph replay is left out
    addmm = found[("aten::addmm", ("gemm", "bias"))]
    assert (addmm.count, addmm.op_to_launch_ns, addmm.launch_to_start_ns, addmm.device_ns) == (2, 5e3, 20e3, 12e3)
    relu = found[("aten::relu", ("relu_k",))]
    assert (relu.count, relu.op_to_launch_ns, relu.launch_to_start_ns) == (1, 2e3, 8e3)


def test_the_ddp_trace_agrees_with_htas_sequences():
    """HTA's sequences are the kernels alone: with the copies and sets taken out of ours, the same ops, lengths and
    counts; where a sequence holds no copy or set, delays within 1 us (HTA cuts the times to whole microseconds).
    HTA finds no copies: aten::copy_ is ours alone."""
    groups: dict[tuple[str, tuple[str, ...]], list] = {}
    for r in rows(DDP).values():
        groups.setdefault((r.op, tuple(k for k in r.kernels if not k.startswith(COPIES))), []).append(r)
    ours = sorted((op, len(seq), sum(r.count for r in rs)) for (op, seq), rs in groups.items() if seq and aten(op))
    hta = HTA["hta-2024-05-a100-ddp-nccl/nccl_data.json.gz"]["op_kernels"]["0"]
    assert len(hta) > 40 and sorted((h["op"], h["kernels"], h["count"]) for h in hta) == ours
    pure: dict[tuple[str, int, int], list] = {}  # sequences with no copy or set: the same first launch as HTA's
    for (op, seq), rs in groups.items():
        if len(rs) == 1 and rs[0].kernels == list(seq):
            pure.setdefault((op, len(seq), rs[0].count), []).append(rs[0])
    checked = 0
    for h in hta:
        found = pure.get((h["op"], h["kernels"], h["count"]), [])
        if found:
            assert any(
                abs(r.op_to_launch_ns / 1e3 - h["op_to_launch_us"]) < 1
                and abs(r.launch_to_start_ns / 1e3 - h["launch_to_start_us"]) < 1
                for r in found
            ), h
            checked += 1
    assert checked > 30
    assert any(op == "aten::copy_" for op, _ in groups) and not any(h["op"] == "aten::copy_" for h in hta)
    assert {op for op, _ in groups if not aten(op)} == {"record_param_comms"}  # no aten op above: HTA drops them
    bn = [r for (op, _), rs in groups.items() for r in rs if op == "aten::cudnn_batch_norm"]
    assert max(r.op_to_launch_ns for r in bn) / 1e3 == pytest.approx(374.5, abs=0.1)


def aten(op: str) -> bool:
    return op.startswith("aten::")


def test_ops_kernels_in_every_format(tmp_path, capsys):
    path = ops_trace(tmp_path)
    assert main(["ops", str(path), "--kernels", "--format", "json", "--sort", "launch_to_start"]) == 0
    doc = json.loads(capsys.readouterr().out)["rows"]
    assert doc[0]["op"] == "aten::addmm" and doc[0]["kernels"] == ["gemm", "bias"] and doc[0]["count"] == 2
    assert main(["ops", str(path), "--kernels"]) == 0
    assert "gemm → bias" in capsys.readouterr().out
    assert main(["ops", str(path), "--kernels", "--format", "csv"]) == 0
    assert "aten::addmm,gemm -> bias,2," in capsys.readouterr().out
    assert main(["ops", str(path), "--kernels", "--group-by-shape"]) == 2
    assert main(["ops", str(path), "--kernels", "--sort", "self_cpu"]) == 2
    assert "unknown sort key 'self_cpu'" in capsys.readouterr().err


def test_sql_and_the_api_give_the_same_rows(tmp_path):
    pytest.importorskip("duckdb")
    t = tracetui.load(ops_trace(tmp_path))
    assert t.sql("SELECT * FROM op_kernels")["rows"] == t.op_kernels()["rows"]


def test_a_trace_without_launches_has_no_sequences(tmp_path, capsys):
    path = write_trace(tmp_path / "cpu.json", [X("aten::mm", 0, 10)])
    assert rows(path) == {}
    assert main(["ops", str(path), "--kernels"]) == 0
    assert "No op launched device work in this trace." in capsys.readouterr().out
