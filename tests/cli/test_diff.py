"""tracetui diff: real pairs, the kernel matching rule, the CI gate, and the compare screen."""

from __future__ import annotations

import json
import re

import pytest
from conftest import SAMPLES, X, raw_events, wait_for_main, write_trace

from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.diff import diff, kernel_key
from tui.model.analyses.results import Results

CONTROL = SAMPLES / "a100-train-control.json.gz"
TEST = SAMPLES / "v100-cudagraph-test.json.gz"


def _diff(a, b):
    return diff(Results(load_trace(a)), Results(load_trace(b)))


def test_hta_control_vs_test_pair():
    d = _diff(CONTROL, TEST)
    assert len(d.steps_a) == len(d.steps_b) == 6
    assert [s.name for s in d.steps_a] == [f"ProfilerStep#{i}" for i in range(1009, 1015)]
    # steps and kernel counts agree with the raw JSON
    raw = [e for e in raw_events(TEST) if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
    first = min((e for e in raw if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    assert d.steps_b[0].dur_us == pytest.approx(first["dur"])
    sgemm = next(r for r in d.kernels if r.name == "volta_sgemm_128x32_nt")
    assert sgemm.status == "only B"
    assert sgemm.count_b == sum(1 for e in raw_events(TEST) if e.get("name") == "volta_sgemm_128x32_nt")
    assert d.kernels == sorted(d.kernels, key=lambda r: -abs(r.delta_us))
    assert d.slower_pct == pytest.approx(100 * (d.step_time_b - d.step_time_a) / d.step_time_a)
    assert d.step_time_b > d.step_time_a


def test_triton_kernels_match_across_counters(tmp_path):
    def trace(name, suffix):
        return write_trace(
            tmp_path / name,
            [
                X(f"triton_poi_fused_add_mul_{suffix}", 10, 5, cat="kernel", pid=0, tid=7),
                X("void gemm_kernel<1>", 20, 5, cat="kernel", pid=0, tid=7),
            ],
        )

    d = _diff(trace("a.json", 0), trace("b.json", 3))
    statuses = {r.name: r.status for r in d.kernels}
    assert statuses == {"triton_poi_fused_add_mul": "both", "void gemm_kernel<1>": "both"}
    assert kernel_key("void kernel<4, 2>") == "void kernel<4, 2>"  # digits in C++ names are kept


@pytest.mark.slow
def test_eager_vs_compile_capture_shows_the_fusion(tmp_path, capsys):
    pytest.importorskip("torch", reason="capturing needs torch")
    paths = []
    for mode in ([], ["--compile"]):
        out = tmp_path / f"t{len(paths)}.json"
        assert main(["profile", "matmul_add", "--device", "cpu", "--warmup", "--no-open", "-o", str(out), *mode]) == 0
        paths.append(out)
    capsys.readouterr()
    d = _diff(*paths)
    status = {r.name: r.status for r in d.ops}
    assert status["aten::mm"] == "only A" and status["aten::add"] == "only A"
    assert status["aten::addmm"] == "only B"
    assert any(n.startswith("Torch-Compiled Region") and s == "only B" for n, s in status.items())
    assert [s.launches for s in d.steps_a] == [0, 0, 0]


def test_cli_diff_json_and_the_regression_gate(capsys):
    assert main(["diff", str(CONTROL), str(TEST), "--format", "json", "--limit", "5"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["ops"]) == len(doc["kernels"]) == 5
    assert {"only A", "only B", "both"} >= {r["status"] for r in doc["kernels"]}
    assert doc["summary"]["verdict"] == {"a": "mixed", "b": "compute-bound"}  # the typical steps' paths
    assert main(["diff", str(CONTROL), str(TEST), "--fail-if-slower", "10"]) == 3
    assert "slower than A's" in capsys.readouterr().err
    assert main(["diff", str(CONTROL), str(TEST), "--fail-if-slower", "60"]) == 0
    assert main(["diff", str(TEST), str(CONTROL), "--fail-if-slower", "0"]) == 0


def test_text_diff_marks_rows_present_on_one_side(capsys):
    main(["diff", str(CONTROL), str(TEST), "--limit", "10"])
    out = capsys.readouterr().out
    assert "[only B]" in out and "Verdict" in out and "ProfilerStep#1014" in out and "step 6" not in out  # names


async def test_compare_screen_shows_the_tables():
    from tui.app import TraceApp
    from tui.screens.compare import CompareScreen
    from tui.widgets.lazy_table import LazyTable

    app = TraceApp(
        [
            str(SAMPLES / "cpu" / "matmul_add_64_warm_eager.json.gz"),
            str(SAMPLES / "cpu" / "matmul_add_64_warm_compiled.json.gz"),
        ],
        use_cache=False,
        compare=True,
    )
    async with app.run_test(size=(140, 35)) as pilot:
        assert isinstance(await wait_for_main(pilot), CompareScreen)
        await pilot.press("3")
        await pilot.pause()
        table = app.screen.query_one("ViewPane#ops LazyTable", LazyTable)
        names = [table.source.cell(k, 0) for k in range(table.row_count)]
        assert "aten::addmm  [only B]" in names and "aten::mm  [only A]" in names


def test_open_with_two_traces_needs_compare(capsys):
    assert main(["open", str(CONTROL), str(TEST)]) == 2
    assert "--compare" in capsys.readouterr().err


def test_diff_json_summary_has_numbers_under_the_summary_keys(capsys):
    """The diff's summary uses summary's own JSON keys and numbers, never display strings."""
    assert main(["diff", str(CONTROL), str(TEST), "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    for side, path in (("a", CONTROL), ("b", TEST)):
        assert main(["summary", str(path), "--format", "json"]) == 0
        alone = json.loads(capsys.readouterr().out)
        for key in ("wall_us", "gpu_busy_us", "cpu_launch_us", "cpu_self_total_us", "device_self_total_us"):
            assert isinstance(summary[key][side], float) and summary[key][side] == alone[key], key
        assert summary["gpu_utilization"][side] == alone["gpu_utilization"]
        assert summary["launches"][side] == alone["launches"] and summary["verdict"][side] == alone["verdict"]


EAGER = SAMPLES / "cpu" / "matmul_add_64_warm_eager.json.gz"
COMPILED = SAMPLES / "cpu" / "matmul_add_64_warm_compiled.json.gz"


def test_cpu_only_pair_leaves_the_gpu_rows_out(capsys):
    assert main(["diff", str(EAGER), str(COMPILED), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "Wall time" in out and "Self CPU total" in out and "CPU B" in out and "aten::addmm  [only B]" in out
    for gpu in ("GPU busy", "Self CUDA", "GPU utilization", "Launch calls", "GPU A", "Launches A", "GPU kernels"):
        assert gpu not in out, gpu
    assert out.rstrip().endswith("No GPU activity in either trace: both ran on the CPU only.")
    assert main(["diff", str(EAGER), str(COMPILED), "--format", "json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["cpu_only"] is True and doc["kernels"] == []
    # a CPU-only trace against a GPU one keeps every row
    assert main(["diff", str(EAGER), str(CONTROL), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "GPU busy" in out and "GPU kernels" in out and "Launches A" in out


def test_diff_counts_graph_replays_and_the_launches_graphs_change(capsys):
    import json

    from tui.cli import main

    a, b = (str(SAMPLES / n) for n in ("a100-train-control.json.gz", "v100-cudagraph-test.json.gz"))
    assert main(["diff", a, b, "--format", "json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    s = doc["summary"]
    assert s["graph_launches"] == {"a": 0, "b": 12} and s["graph_kernels"] == {"a": 0, "b": 5046}
    assert doc["launches_saved"] == s["launches"]["a"] - s["launches"]["b"]
    assert main(["diff", a, b, "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "Graphs: B replays 5,046 device activities from 12 graph launches" in text
    assert "Kernels replayed by graphs" in text


def test_a_diff_of_captures_with_different_step_counts_says_the_tables_compare_totals():
    from tui.tables import diff as D

    def results(name):
        return Results(load_trace(str(SAMPLES / name), use_cache=False))

    six, one = results("a100-train-control.json.gz"), results("h100-bert-small.json.gz")
    head = D.head_lines(diff(six, one), ("six.json", "one.json"))
    assert head[:2] == ["A: six.json", "B: one.json"] and head[2].startswith("Typical step: A ")
    d = diff(six, one)  # the headline says which side is faster, by the same ratio as the percentage
    ratio = d.step_time_b / d.step_time_a
    said = f": B is {ratio:.2f}x slower" if ratio > 1 else f": B is {1 / ratio:.2f}x faster"
    assert said in head[2] and f"({d.slower_pct:+.1f}%, beyond the runs' own spread of ±3.6%;" in head[2]
    assert head[-1].startswith("Steps: A profiled 6, B 1; the ops and kernels below compare totals")
    cold, warm = results("cpu/matmul_add_64_cold_eager.json.gz"), results("cpu/matmul_add_64_warm_eager.json.gz")
    assert not any(line.startswith("Steps:") for line in D.head_lines(diff(cold, warm), ("a", "b")))


def test_names_that_differ_only_by_an_object_address_or_a_triton_counter_are_one_row(tmp_path):
    """Two captures of the same code: a bound method's object sits at another address in each run."""

    def trace(name, address, counter):
        return write_trace(
            tmp_path / name,
            [
                X(f"<built-in method append of list object at {address}>", 0, 5),  # a frame is no ops row now: an
                X(f"<built-in method append of list object at {address}>", 10, 5),  # op's name follows the same rule
                X(f"triton_poi_fused_add_{counter}", 20, 5),
                X(f"triton_poi_fused_add_{counter}", 30, 5, cat="kernel", pid=0, tid=7),
            ],
        )

    d = _diff(trace("a.json", "0x7fdb1a2b3c4d", 0), trace("b.json", "0x7f3e99887766", 3))
    ops = {r.name: r for r in d.ops}
    assert set(ops) == {"<built-in method append of list object at 0x…>", "triton_poi_fused_add"}
    assert all(r.status == "both" for r in d.ops + d.kernels)
    assert (
        ops["<built-in method append of list object at 0x…>"].count_a
        == 2
        == ops["<built-in method append of list object at 0x…>"].count_b
    )
    assert [r.name for r in d.kernels] == ["triton_poi_fused_add"]


@pytest.mark.slow
def test_two_captures_of_the_same_code_have_no_row_on_one_side_only(tmp_path, capsys):
    """with_stack records bound methods with their object's address, which differs from run to run."""
    pytest.importorskip("torch", reason="capturing needs torch")
    paths = [tmp_path / f"run{k}.json" for k in range(2)]
    for out in paths:
        args = ["attention", "--variant", "sdpa", "--backend", "math", "--warmup", "--with-stack", "--steps", "2"]
        assert main(["profile", *args, "--device", "cpu", "--no-open", "-o", str(out)]) == 0
    capsys.readouterr()
    raw = [{e["name"] for e in raw_events(p) if " at 0x" in str(e.get("name", ""))} for p in paths]
    assert raw[0]  # with_stack wrote bound methods with their object's address
    if raw[0] == raw[1]:  # both runs ran in this process and freed memory got reused: move B's objects elsewhere
        text = paths[1].read_text()
        paths[1].write_text(re.sub(r" at 0x([0-9a-f]+)", lambda m: f" at 0x{int(m.group(1), 16) + 0x1000:x}", text))
        raw[1] = {e["name"] for e in raw_events(paths[1]) if " at 0x" in str(e.get("name", ""))}
    assert raw[0] != raw[1]  # the same code, objects at other addresses
    from tui.model.analyses.diff import kernel_key

    # the frames that name an object's address are one row in both runs, once the address is read as 0x…; (torch's
    # table has no frame rows, so the diff's ops table carries none of them: none of its rows is on one side only
    # for an address)
    assert {kernel_key(n) for n in raw[0]} == {kernel_key(n) for n in raw[1]}
    d = _diff(*paths)
    assert not [r.name for r in d.ops if r.status != "both" and ("object" in r.name or "0x" in r.name)]
