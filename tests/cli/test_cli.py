"""The headless commands: formats, sorting, limits, exit codes and one-line errors."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, SAMPLES

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
        "leaves it out, and a CPU op's CUDA time counts only the kernels, copies and sets launched under it.)",
        "(Python frames: no rows, as torch's table up to 2.11, a frame's time in the self time of the op it ran under; "
        "--python-frames lists them, as 2.12-2.13 do; torch 2.6.0+cu124 wrote this trace: its table has no such rows)",
    ]  # torch's footers, why the GPU-side ProfilerStep*'s Self CUDA passes 100%, and which table this is


def test_ops_json_sorted_and_limited(capsys):
    _, out, _ = run(capsys, "ops", BERT, "--format", "json", "--sort", "self_cpu", "--limit", "0")
    rows = json.loads(out)["rows"]
    assert set(rows[0]) >= {"name", "count", "self_cpu_us", "cpu_total_us", "self_device_us", "device_total_us"}
    values = [r["self_cpu_us"] for r in rows]
    assert values == sorted(values, reverse=True) and len(rows) == 54  # every row: --limit 0


def test_ops_accepts_torch_sort_names(capsys):
    _, a, _ = run(capsys, "ops", BERT, "--format", "json", "--sort", "cuda_time_total")
    _, b, _ = run(capsys, "ops", BERT, "--format", "json", "--sort", "device_total")
    assert a == b


@pytest.mark.parametrize(
    "ours, torch, field",
    [
        ("self_cpu_memory", "self_cpu_memory_usage", "self_cpu_memory_bytes"),
        ("cpu_memory", "cpu_memory_usage", "cpu_memory_bytes"),
        ("self_device_memory", "self_cuda_memory_usage", "self_device_memory_bytes"),
        ("device_memory", "device_memory_usage", "device_memory_bytes"),
    ],
)
def test_ops_sort_by_memory_the_most_allocated_first(capsys, ours, torch, field):
    """BERT recorded memory: each memory column sorts, the most allocated first, frees (negative) last; torch's
    sort_by names say the same, and --help lists the key."""
    _, out, _ = run(capsys, "ops", BERT, "--format", "json", "--sort", ours, "--limit", "0")
    values = [r[field] for r in json.loads(out)["rows"]]
    assert len(set(values)) > 1 and values == sorted(values, reverse=True)
    assert run(capsys, "ops", BERT, "--format", "json", "--sort", torch, "--limit", "0")[1] == out
    with pytest.raises(SystemExit):
        main(["ops", "--help"])
    assert ours in " ".join(capsys.readouterr().out.split())


def test_kernels_sort_by_the_launch_latency_p95_without_one_last(capsys):
    graphs = str(SAMPLES / "v100-cudagraph-test.json.gz")  # kernels replayed from graphs: no launch call
    _, out, _ = run(capsys, "kernels", graphs, "--format", "json", "--sort", "latency_p95", "--limit", "0")
    values = [r["launch_latency_p95_us"] for r in json.loads(out)["rows"]]
    known = [v for v in values if v is not None]
    assert len(set(known)) > 1 and None in values
    assert values == sorted(known, reverse=True) + [None] * (len(values) - len(known))
    with pytest.raises(SystemExit):
        main(["kernels", "--help"])
    assert "latency_p95" in capsys.readouterr().out


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


def test_an_unknown_sort_key_names_torchs_spellings_too(capsys):
    """The README says torch's sort_by names are taken; the error listed ours alone."""
    code, _, err = run(capsys, "ops", BERT, "--sort", "bogus")
    assert code == 2 and "choose from self_cpu, cpu_total" in err and "cuda_time_total" in err
    assert run(capsys, "ops", BERT, "--sort", "cuda_time_total", "--limit", "1")[0] == 0


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


@pytest.mark.parametrize("command", ["summary", "open"])
def test_random_bytes_named_gz_say_they_are_no_gzip(tmp_path, capsys, command):
    bad = tmp_path / "x.json.gz"
    bad.write_bytes(bytes(range(7, 256)) * 12)
    before = bad.read_bytes()
    code, out, err = run(capsys, command, str(bad))
    assert (code, out) == (2, "")
    assert err == f"tracetui: error: {bad}: not gzip (a .gz name, but no gzip header) and not a JSON trace either\n"
    assert bad.read_bytes() == before


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
    assert (
        code == 0
        and "* Profiler buffer request (1 span of Activity Buffer Request)" in out
        and "profiler flushing" in out
    )
    _, out, _ = run(capsys, "explain", str(SAMPLES / "b300-moe-small.json.gz"), "--format", "json")
    rules = {f["rule"] for f in json.loads(out)["findings"]}
    assert {"final-sync", "activity-buffer", "metadata-op"} <= rules
    _, out, _ = run(capsys, "explain", str(SAMPLES / "cpu-only-gloo.json.gz"))
    assert out.startswith("No explain rule fired on this trace. The summary's verdict is communication-bound: ")


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        ([], "required: COMMAND (see tracetui --help)"),
        (["ops"], "required: TRACE (see tracetui ops --help)"),
        (["ops", BERT, "--format", "xml"], "invalid choice: 'xml'"),
        (["steps", BERT, "--limit", "2"], "unrecognized arguments: --limit 2 (see tracetui steps --help)"),
        (["ops", BERT, "--bogus"], "unrecognized arguments: --bogus (see tracetui ops --help)"),
        (["--bogus"], "(see tracetui --help)"),
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


def test_the_cpus_reserved_memory_reads_as_none_kept_not_zero(capsys):
    """GIVEN the BERT capture, whose CPU [memory] samples write Total Reserved 0 (the CPU allocator caches nothing)
    WHEN `memory` lists the devices THEN the CPU's Peak reserved is "-" with a line that says why, and the GPU's is
    its caching allocator's figure; the JSON keeps the number torch wrote."""
    _, out, _ = run(capsys, "memory", BERT)
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith(("cpu ", "cuda:0 "))}
    assert rows["cpu"].split()[3] == "-" and rows["cuda:0"].split()[3:5] == ["116.00", "MiB"], rows
    assert "the CPU's allocator keeps none (-)" in out
    _, out, _ = run(capsys, "memory", BERT, "--format", "json")
    assert json.loads(out)["devices"][0] | {"device": "cpu", "peak_reserved_bytes": 0} == json.loads(out)["devices"][0]


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
    assert empty.splitlines() == [full.splitlines()[0]] and full.startswith("name,kind,role,unit,dtype,count,total_us,")
    marker = write_trace(
        tmp_path / "t.json", [{"ph": "i", "s": "g", "name": "Record Window End", "pid": 1, "tid": 1, "ts": 5}]
    )
    _, empty_ops, _ = run(capsys, "ops", str(marker), "--format", "csv")
    assert empty_ops == "name,count,self_cpu_us,cpu_total_us,self_device_us,device_total_us,kind\n"


def _parsers():
    from tui.cli import build_parser

    root = build_parser()
    sub = next(a for a in root._actions if a.dest == "command")
    return [("", root), *sub.choices.items()]  # type: ignore[attr-defined]


@pytest.mark.parametrize("columns", ["80", "200"])
def test_every_help_line_fits_80_columns_and_every_argument_is_described(monkeypatch, columns):
    import argparse

    monkeypatch.setenv("COLUMNS", columns)  # a wide terminal once gave help lines of 113 columns
    for name, parser in _parsers():
        text = parser.format_help()
        long = [line for line in text.splitlines() if len(line) > 80]
        assert not long, (name, long)
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._VersionAction | argparse._SubParsersAction):
                continue
            assert action.help and (action.help == argparse.SUPPRESS or len(action.help) > 8), (name, action.dest)


def test_a_negative_percentage_is_a_usage_error(capsys):
    code = None
    with pytest.raises(SystemExit) as exit_:
        main(["diff", BERT, BERT, "--fail-if-slower", "-5"])
    err = capsys.readouterr().err
    code = exit_.value.code
    assert code == 2 and err.count("\n") == 1 and "--fail-if-slower: must be 0 or more, got -5" in err
    assert run(capsys, "diff", BERT, BERT, "--fail-if-slower", "0")[0] == 0  # identical traces pass a 0% gate


@pytest.mark.parametrize(
    "name, entry",
    [
        ("a100", "A100 SXM4 80GB"),  # one GPU in four forms: its SXM part, said on stderr
        ("h100 sxm", "H100 SXM"),
        ("SXM H100", "H100 SXM"),
        ("h100-pcie", "H100 PCIe"),
        ("H100", "H100 SXM"),
        ("mi250", "MI250 (one GCD)"),  # the MI250 itself, not also the MI250X
        ("mi250x", "MI250X (one GCD)"),
        ("4090", "GeForce RTX 4090"),
        ("a10", "A10"),
        ("b200", "B200"),
    ],
)
def test_gpu_names_match_on_any_unambiguous_part(name, entry):
    from tui.cli.gpu import match_gpu

    device, note = match_gpu(name)
    assert device.name == entry
    assert bool(note) == (name.lower() in ("a100", "h100")), note


def test_an_ambiguous_gpu_lists_its_candidates_one_per_line(capsys):
    code, out, err = run(capsys, "roofline", BERT, "--gpu", "mi3")
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert lines[0] == "tracetui: error: --gpu 'mi3' matches 3 GPUs; name one of them:"
    assert [line.strip() for line in lines[1:]] == ["MI300X", "MI325X", "MI355X"]
    code, out, err = run(capsys, "roofline", BERT, "--gpu", "tpu")
    assert code == 2 and err.count("\n") == 1 and len(err) < 200 and "A100, A10," in err


def test_gpu_a100_prints_the_a100s_roofs_and_says_which(capsys):
    code, out, err = run(capsys, "roofline", BERT, "--gpu", "a100", "--format", "json")
    assert code == 0 and json.loads(out)["device"]["name"] == "A100 SXM4 80GB"
    assert "taken as the A100 SXM4 80GB" in err and "A100 PCIe 40GB" in err


async def test_the_palettes_screenshot_goes_to_the_working_directory_or_the_one_given(tmp_path, monkeypatch):
    from conftest import wait_for_main

    from tui.app import TraceApp

    monkeypatch.chdir(tmp_path)
    for given, where in [(None, tmp_path), (str(tmp_path / "shots"), tmp_path / "shots")]:
        (tmp_path / "shots").mkdir(exist_ok=True)
        app = TraceApp([CPU], use_cache=False, screenshot_dir=given)
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for_main(pilot)
            saved = app.save_screenshot_here()
            assert saved is not None and saved.parent == where and saved.suffix == ".svg" and saved.exists()
            await pilot.pause()
            assert any(str(saved) in n.message for n in app._notifications)
    app = TraceApp([CPU], use_cache=False, screenshot_dir=str(tmp_path / "no" / "such"))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_main(pilot)
        assert app.save_screenshot_here() is None
        await pilot.pause()
        said = [n.message for n in app._notifications if n.severity == "error"]
        assert said and str(tmp_path / "no" / "such") in said[0] and "No such file or directory" in said[0]


def test_profiles_verdict_lines_fit_the_width_as_the_summarys_prose(monkeypatch):
    """What `tracetui profile` prints after a capture (CaptureReader.verdict) wraps at the width; it was one line
    of 300 characters that the terminal broke mid-word."""
    from tui.cli.profile import CaptureReader

    monkeypatch.setenv("TRACETUI_COLUMNS", "80")
    lines = CaptureReader(debug=False).verdict(SAMPLES / "h100-bert-small.json.gz")
    assert lines[0].startswith("verdict: overhead-bound (the critical path of ProfilerStep#6") and len(lines) > 3
    assert all(len(line) <= 80 for line in lines) and lines[1].startswith("    ")
    assert any(line.startswith("steps: ProfilerStep#") for line in lines)
    monkeypatch.setenv("TRACETUI_COLUMNS", "0")  # no width: one line each
    assert len(CaptureReader(debug=False).verdict(SAMPLES / "h100-bert-small.json.gz")) == 2


def _stdout_env(buffered: bool) -> dict[str, str]:
    """The environment with stdout block-buffered (a user's default) or unbuffered (PYTHONUNBUFFERED=1, as some
    CI machines set it): a write error shows at the write when unbuffered, only at a flush when buffered."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return env if buffered else env | {"PYTHONUNBUFFERED": "1"}


BUFFERING = pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])


def _summary_into(stdout_setup: str, buffered: bool = True) -> subprocess.CompletedProcess:
    """tracetui summary of the CPU sample with its stdout as the shell sets it up (`>&-`, `> /dev/full`)."""
    command = f'"{sys.executable}" -m tui summary "{CPU}" --no-cache {stdout_setup}'
    return subprocess.run(
        ["sh", "-c", command], capture_output=False, stderr=subprocess.PIPE, text=True, env=_stdout_env(buffered)
    )


@BUFFERING
@pytest.mark.parametrize(
    ("setup", "reason"),
    [(">&-", "standard output is closed"), ("> /dev/full", "No space left on device")],
)
def test_output_that_cannot_be_written_is_one_line_exit_2(setup, reason, buffered):
    if "full" in setup and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    proc = _summary_into(setup, buffered)
    assert (proc.returncode, proc.stderr) == (2, f"tracetui: error: cannot write the output: {reason}\n")


def test_a_closed_pipe_ends_quietly_with_exit_0():
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui", "ops", str(CPU), "--no-cache", "--format", "csv"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # before the command (0.3 s of imports at least) writes its first line
    assert proc.wait(timeout=60) == 0 and proc.stderr is not None and proc.stderr.read() == b""


def test_a_closed_stderr_drops_the_notes_and_the_command_still_runs(tmp_path):
    cut = tmp_path / "cut.json"
    cut.write_bytes(gzip.decompress(open(CPU, "rb").read())[:-200])
    proc = subprocess.run(
        ["sh", "-c", f'"{sys.executable}" -m tui summary "{cut}" --no-cache 2>&-'], capture_output=True, text=True
    )
    assert proc.returncode == 0 and proc.stdout.startswith("Summary")


@BUFFERING
@pytest.mark.parametrize("argv", [["--help"], ["summary", "--help"], ["--version"], ["sql", "--help"]])
def test_help_that_cannot_be_written_is_said_and_a_closed_pipe_is_quiet(argv, buffered):
    """argparse swallowed the write error of --help (exit 0, nothing said); a reader gone early stays quiet. With
    stdout buffered (no PYTHONUNBUFFERED) the help sat in the buffer past the guard, and Python said the error at
    exit (120, "Exception ignored in ...")."""
    env = _stdout_env(buffered)
    if os.path.exists("/dev/full"):
        words = " ".join(argv)
        command = f'"{sys.executable}" -m tui {words} > /dev/full'
        proc = subprocess.run(["sh", "-c", command], stderr=subprocess.PIPE, env=env)
        assert (proc.returncode, proc.stderr) == (
            2,
            b"tracetui: error: cannot write the output: No space left on device\n",
        )
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    assert (proc.wait(timeout=60), proc.stderr.read()) == (0, b"")


@pytest.mark.parametrize(
    ("trace", "key", "lacks"),
    [
        (
            SAMPLES / "a100-train-control.json.gz",
            "self_cpu_memory",
            "recorded no memory (profile_memory=True records it)",
        ),
        (CPU, "self_device", "has no GPU work"),
    ],
)
def test_ops_sorted_by_a_column_the_trace_lacks_says_why_the_order_is_its_own(capsys, trace, key, lacks):
    """torch sorts by a column that is all 0 without a word; the table says the order is its own, and why."""
    code, out, _ = run(capsys, "ops", str(trace), "--sort", key, "--limit", "3")
    assert code == 0 and f"but this trace {lacks}: every row reads 0" in out
    _, unsorted, _ = run(capsys, "ops", str(trace), "--limit", "3")
    assert "every row reads 0" not in unsorted
    _, recorded, _ = run(capsys, "ops", BERT, "--sort", key, "--limit", "3")  # BERT has memory and GPU work
    assert "every row reads 0" not in recorded


def test_a_summary_without_steps_says_how_a_capture_records_them(capsys):
    """A capture without a schedule records no ProfilerStep#N (torch sets record_steps only with one): the summary
    says so where its steps' table would be (tests/data/mlp-cpu: the same loop without and with a schedule)."""
    from tui.tables.summary import NO_STEPS

    mlp = ROOT / "tests" / "data" / "mlp-cpu"
    code, out, _ = run(capsys, "summary", str(mlp / "mlp.json.gz"), "--no-cache")
    assert code == 0 and out.rstrip().endswith(NO_STEPS)
    _, out, _ = run(capsys, "summary", str(mlp / "mlp_steps.json.gz"), "--no-cache")
    assert NO_STEPS not in out and "ProfilerStep#3" in out
