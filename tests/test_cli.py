"""The headless commands: formats, sorting, limits, exit codes and one-line errors."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest
from conftest import SAMPLES

from tui.cli import main

BERT = str(SAMPLES / "h100-bert-small.json.gz")
CPU = str(SAMPLES / "cpu" / "linear_fwd.json.gz")


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_summary_json_has_the_contract_fields(capsys):
    code, out, _ = run(capsys, "summary", BERT, "--format", "json")
    doc = json.loads(out)
    assert code == 0
    for key in (
        "wall_us",
        "gpu_busy_us",
        "gpu_utilization",
        "cpu_launch_us",
        "device_self_total_us",
        "cpu_self_total_us",
        "verdict",
        "steps",
    ):
        assert key in doc
    assert doc["steps"][0]["name"].startswith("ProfilerStep#") and doc["steps"][0]["dur_us"] > 0


def test_ops_text_is_laid_out_like_torch_with_footers(capsys):
    code, out, _ = run(capsys, "ops", BERT, "--limit", "5")
    lines = out.splitlines()
    assert code == 0
    assert lines[0].split()[:3] == ["Name", "Self", "CPU"] and "Self CUDA %" in lines[0] and "# of Calls" in lines[0]
    assert lines[7].startswith("Self CPU time total: ") and lines[8].startswith("Self CUDA time total: ")
    assert lines[9:] == [
        "(ProfilerStep* on the GPU: a GPU-side annotation row, timed by the span it covers on the GPU; the kernels "
        "inside it are counted in their own rows, so its Self CUDA % can pass 100%. As in torch, the Self CUDA total "
        "leaves it out, and a CPU op's CUDA time counts only the kernels, copies and sets launched under it.)"
    ]  # torch's footers, then why the GPU-side ProfilerStep*'s Self CUDA passes 100%


def test_ops_json_sorted_and_limited(capsys):
    _, out, _ = run(capsys, "ops", BERT, "--format", "json", "--sort", "self_cpu", "--limit", "0")
    rows = json.loads(out)["rows"]
    assert set(rows[0]) >= {"name", "count", "self_cpu_us", "cpu_total_us", "self_device_us", "device_total_us"}
    values = [r["self_cpu_us"] for r in rows]
    assert values == sorted(values, reverse=True) and len(rows) > 100


def test_ops_accepts_torch_sort_names(capsys):
    _, a, _ = run(capsys, "ops", BERT, "--format", "json", "--sort", "cuda_time_total")
    _, b, _ = run(capsys, "ops", BERT, "--format", "json", "--sort", "device_total")
    assert a == b


def test_group_by_shape_adds_input_shapes(capsys):
    _, out, _ = run(capsys, "ops", CPU, "--group-by-shape", "--format", "json")
    rows = json.loads(out)["rows"]
    addmm = [r for r in rows if r["name"] == "aten::addmm"]
    assert addmm and addmm[0]["input_shapes"] == "[[64], [1024, 32], [32, 64], [], []]"


def test_kernels_csv_and_md(capsys):
    _, out, _ = run(capsys, "kernels", BERT, "--format", "csv", "--limit", "3")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 3 and float(rows[0]["total_us"]) >= float(rows[1]["total_us"])
    _, md, _ = run(capsys, "kernels", BERT, "--format", "md", "--sort", "count", "--limit", "2")
    assert md.startswith("| Name |") and md.count("\n| ") == 2


@pytest.mark.parametrize(
    "argv", [["ops", "/nonexistent/trace.json"], ["kernels", "EMPTY_DIR"], ["ops", BERT, "--sort", "bogus"]]
)
def test_errors_are_one_line_exit_2(capsys, argv, tmp_path):
    code, out, err = run(capsys, *[str(tmp_path) if a == "EMPTY_DIR" else a for a in argv])
    assert code == 2 and out == ""
    assert err.startswith("tracetui: error: ") and err.count("\n") == 1


def test_bad_trace_file_exit_2_no_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("this is not json")
    proc = subprocess.run([sys.executable, "-m", "tui", "summary", str(bad)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert (
        proc.stderr
        == f"tracetui: error: {bad}: not a JSON trace (expected '{{' or '[' at the start; a Perfetto .pftrace is not supported)\n"
    )
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "name, content, problem",
    [
        ("numbers.json", b"[1, 2, 3]\n", "no trace events in the file"),
        ("no-events.json", b'{"traceEvents": []}', "no trace events in the file"),
        ("head.json.gz", None, "the gzip stream is cut before any JSON"),  # 30 bytes of a real .json.gz
    ],
)
def test_a_file_with_nothing_to_show_is_an_error_not_an_empty_verdict(tmp_path, capsys, name, content, problem):
    path = tmp_path / name
    path.write_bytes(content if content is not None else (SAMPLES / "h100-bert-small.json.gz").read_bytes()[:30])
    before = path.read_bytes()
    code, out, err = run(capsys, "summary", str(path), "--no-cache")
    assert (code, out, err) == (2, "", f"tracetui: error: {path}: {problem}\n")
    assert path.read_bytes() == before


def test_salvaged_trace_exits_0_with_one_warning_line(tmp_path, capsys):
    text = (SAMPLES / "cpu" / "matmul_add_64_cold_eager.json.gz").read_bytes()
    import gzip

    raw = gzip.decompress(text)
    cut = tmp_path / "cut.json"
    cut.write_bytes(raw[: len(raw) // 2])
    code, out, err = run(capsys, "summary", str(cut))
    assert code == 0 and out
    assert err.startswith(f"tracetui: warning: {cut}: the JSON is truncated") and err.count("\n") == 1


def test_internal_errors_exit_1_and_debug_shows_the_traceback(monkeypatch, capsys):
    import tui.reports

    monkeypatch.setattr(tui.reports, "render_summary", lambda *a: 1 / 0)
    code, _, err = run(capsys, "summary", CPU)
    assert code == 1 and "internal error: ZeroDivisionError" in err and "Traceback" not in err
    code, _, err = run(capsys, "summary", CPU, "--debug")
    assert code == 1 and "Traceback" in err


def test_workloads_lists_one_line_each(capsys):
    code, out, _ = run(capsys, "workloads")
    names = [line.split()[0] for line in out.splitlines()]
    assert code == 0 and names[:4] == ["matmul_add", "linear", "mlp", "attention"]


def test_explain_text_and_json(capsys):
    code, out, _ = run(capsys, "explain", str(SAMPLES / "b300-moe-small.json.gz"))
    assert code == 0 and "* Profiler buffer request (1 event" in out and "profiler flushing" in out
    _, out, _ = run(capsys, "explain", str(SAMPLES / "b300-moe-small.json.gz"), "--format", "json")
    rules = {f["rule"] for f in json.loads(out)["findings"]}
    assert {"final-sync", "activity-buffer", "metadata-op"} <= rules
    _, out, _ = run(capsys, "explain", str(SAMPLES / "cpu-only-gloo.json.gz"))
    assert out.strip() == "No explain rule fired on this trace."


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        ([], "required: COMMAND"),
        (["ops"], "required: TRACE"),
        (["ops", BERT, "--format", "xml"], "invalid choice: 'xml'"),
    ],
)
def test_usage_errors_are_one_line(capsys, argv, text):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.startswith("tracetui: error: ") and text in err and err.count("\n") == 1


def test_memory_columns_when_memory_was_profiled(capsys):
    _, out, _ = run(capsys, "ops", BERT, "--limit", "3")
    assert "CPU Mem" in out.splitlines()[0] and "Self CUDA Mem" in out.splitlines()[0]
    _, out, _ = run(capsys, "ops", BERT, "--format", "json", "--sort", "name", "--limit", "0")
    addmm = next(r for r in json.loads(out)["rows"] if r["name"] == "aten::addmm")
    assert addmm["device_memory_bytes"] > 0
    _, out, _ = run(capsys, "ops", CPU)  # captured without profile_memory
    assert "CPU Mem" not in out.splitlines()[0]


def test_a_bug_while_rendering_exits_1_even_when_it_is_a_value_error(monkeypatch, capsys):
    import tui.reports

    def broken(*args):
        raise ValueError("a bug, not bad usage")

    monkeypatch.setattr(tui.reports, "render_ops", broken)
    code, _, err = run(capsys, "ops", CPU)
    assert code == 1 and "internal error: ValueError: a bug, not bad usage" in err


def test_csv_header_is_the_json_keys_even_without_rows(capsys, tmp_path):
    from conftest import write_trace

    gloo = str(SAMPLES / "cpu-only-gloo.json.gz")  # no GPU activity: no kernel rows
    _, full, _ = run(capsys, "kernels", BERT, "--format", "csv", "--limit", "1")
    _, empty, _ = run(capsys, "kernels", gloo, "--format", "csv")
    assert empty.splitlines() == [full.splitlines()[0]] and full.startswith("name,kind,role,count,total_us,")
    marker = write_trace(
        tmp_path / "t.json", [{"ph": "i", "s": "g", "name": "Record Window End", "pid": 1, "tid": 1, "ts": 5}]
    )
    _, empty_ops, _ = run(capsys, "ops", str(marker), "--format", "csv")
    assert empty_ops == "name,count,self_cpu_us,cpu_total_us,self_device_us,device_total_us,kind\n"
