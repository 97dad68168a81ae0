"""`tracetui profile`: captures of each workload on the CPU, user code, and the error paths."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tui.cli import main

torch = pytest.importorskip("torch", reason="capturing needs torch")
pytestmark = pytest.mark.slow

CASES = {
    "matmul_add": (["--size", "32"], "matmul_add", {"aten::matmul", "aten::add"}),
    "linear": (["--batch", "16"], "linear_fwd", {"aten::linear", "aten::addmm"}),
    "mlp": (
        ["--batch", "1", "--seq", "4", "--dim", "16", "--hidden", "32"],
        "mlp_fwd",
        {"aten::linear", "aten::gelu", "aten::mul"},
    ),
    "attention-naive": (["--variant", "naive", "--seq", "16"], "attn_fwd", {"aten::masked_fill", "aten::softmax"}),
    "attention-inplace": (["--variant", "inplace", "--seq", "16"], "attn_fwd", {"aten::masked_fill_", "aten::softmax"}),
    "attention-sdpa": (
        ["--variant", "sdpa", "--backend", "math", "--seq", "16"],
        "attn_fwd",
        {"aten::scaled_dot_product_attention"},
    ),
}


def _profile(tmp_path, capsys, *args):
    out = tmp_path / "out" / "trace.json"
    try:
        code = main(["profile", *args, "--device", "cpu", "--no-open", "-o", str(out)])
    except SystemExit as exc:  # a usage error argparse caught
        code = exc.code
    return code, out, capsys.readouterr()


def _names(path):
    doc = json.loads(path.read_text())
    return {e.get("name") for e in doc["traceEvents"]}


@pytest.mark.parametrize("case", list(CASES))
def test_each_workload_captures_a_valid_trace_with_its_table(tmp_path, capsys, case):
    extra, label, ops = CASES[case]
    code, out, io = _profile(tmp_path, capsys, case.split("-")[0], "--dtype", "fp32", *extra)
    assert code == 0, io.err
    names = _names(out)
    assert label in names and ops <= names
    assert {f"ProfilerStep#{i}" for i in (2, 3, 4)} <= names
    table = out.with_suffix(".txt").read_text()
    assert "Self CPU time total" in table and label in table
    assert "verdict:" in io.out
    assert sorted(p.name for p in out.parent.iterdir()) == ["trace.json", "trace.txt"]  # no temp files left


def test_default_output_path_and_tag(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["profile", "matmul_add", "--device", "cpu", "--no-open", "--warmup"]) == 0
    assert (tmp_path / "traces" / "matmul_add" / "64_bf16_warm_eager.json").is_file()
    assert (tmp_path / "traces" / "matmul_add" / "64_bf16_warm_eager.txt").is_file()


def test_gzip_output_and_a_taken_name_gets_the_next_free_suffix(tmp_path, capsys):
    out = tmp_path / "t.json.gz"
    args = ["profile", "matmul_add", "--device", "cpu", "--no-open", "--size", "8", "--steps", "1", "-o", str(out)]
    assert main(args) == 0
    assert out.read_bytes()[:2] == b"\x1f\x8b" and (tmp_path / "t.txt").is_file()
    before = out.read_bytes()
    capsys.readouterr()
    assert main(args) == 0
    err = capsys.readouterr().err
    assert f"wrote {tmp_path / 't-2.json.gz'} and {tmp_path / 't-2.txt'} (t.json.gz was taken)" in err
    assert out.read_bytes() == before
    assert main([*args, "--force"]) == 0 and out.read_bytes() != before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t-2.json.gz", "t-2.txt", "t.json.gz", "t.txt"]


def test_user_code_from_a_file_and_a_module(tmp_path, capsys, monkeypatch):
    mod = tmp_path / "mywork.py"
    mod.write_text(
        textwrap.dedent("""
        import torch
        def step():
            return torch.relu(torch.ones(4, 4) * 2)
    """)
    )
    code, out, io = _profile(tmp_path, capsys, f"{mod}:step")
    assert code == 0, io.err
    assert {"step", "aten::relu", "ProfilerStep#2"} <= _names(out)
    monkeypatch.syspath_prepend(str(tmp_path))
    shutil.rmtree(out.parent)
    code, out, _ = _profile(tmp_path, capsys, "mywork:step")
    assert code == 0 and "aten::relu" in _names(out)


def test_compile_on_cpu_fuses_matmul_and_add(tmp_path, capsys):
    if shutil.which("gcc") is None and shutil.which("cc") is None:
        pytest.skip("Inductor needs a C compiler on the CPU; none found")
    code, out, io = _profile(tmp_path, capsys, "matmul_add", "--compile", "--warmup", "--size", "16")
    assert code == 0, io.err
    names = _names(out)
    assert "aten::addmm" in names and "aten::mm" not in names
    assert any(n and n.startswith("Torch-Compiled Region") for n in names)


def test_table_falls_back_to_tracetui_when_torch_fails(tmp_path, capsys, monkeypatch):
    from torch.autograd.profiler_util import EventList

    def broken(self, *a, **k):
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    monkeypatch.setattr(EventList, "key_averages", broken)  # what prof.key_averages() and ours both call
    code, out, io = _profile(tmp_path, capsys, "matmul_add", "--size", "8", "--with-stack")
    assert code == 0
    table = out.with_suffix(".txt").read_text()
    lines = [line for line in table.splitlines() if not line.startswith("(")]  # tracetui's notes under the footer
    assert lines[0].startswith("# computed by tracetui") and lines[-1].startswith("Self CPU time total")
    assert "Python frames: no rows" in table  # tracetui's table of a with_stack capture says which table it is
    assert 1 + 2 + 5 + 1 <= len(lines) <= 1 + 2 + 15 + 1  # note, header, rule, up to row_limit=15 rows, footer
    assert "computed by tracetui" in io.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "unknown workload 'nope'"),
        (["attention", "--backend", "flash"], "needs CUDA"),
        (["matmul_add", "--size", "0"], "argument --size: expected a positive integer, got 0"),
        (["mlp", "--size", "8"], "--size does not apply to mlp (its options: --batch, --seq, --dim, --hidden)"),
        (["matmul_add", "--steps", "-1"], "argument --steps: expected a positive integer, got -1"),
        (["missing_file.py:fn"], "no such file"),
        (["mycode.py"], "mycode.py: name the function to profile: mycode.py:FUNCTION"),
        (["no_such_module_here:fn"], "no_such_module_here: no module of that name can be imported"),
    ],
)
def test_impossible_requests_fail_before_running(tmp_path, capsys, args, message):
    code, out, io = _profile(tmp_path, capsys, *args)
    assert code == 2
    assert message in io.err and io.err.count("\n") == 1 and "Traceback" not in io.err
    assert "CUDA is not available" not in io.err  # the arguments are checked before the device is picked
    assert not out.exists()


def test_unwritable_output(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code = main(["profile", "matmul_add", "--device", "cpu", "--no-open", "-o", str(blocker / "x" / "t.json")])
    err = capsys.readouterr().err
    assert code == 2 and "cannot create the output folder" in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_requested_without_cuda(tmp_path, capsys):
    code = main(["profile", "matmul_add", "--device", "cuda", "--no-open", "-o", str(tmp_path / "t.json")])
    assert code == 2 and "CUDA is not available" in capsys.readouterr().err


def test_missing_torch_gives_an_install_hint(tmp_path):
    probe = (
        "import sys; sys.modules['torch'] = None\n"
        "from tui.cli import main\n"
        f"sys.exit(main(['profile', 'matmul_add', '--no-open', '-o', {str(tmp_path / 't.json')!r}]))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    root = Path(__file__).resolve().parents[2]
    assert proc.stderr.startswith(f"tracetui: error: torch is not installed; from this checkout ({root}): ")
    assert "pip install -e '.[profile]' 'torch==2.13.0'" in proc.stderr and "CUDA build" in proc.stderr
    assert "tracetui[profile]" not in proc.stderr  # from a checkout that name installs nothing useful


def test_installed_as_a_package_the_hint_says_bring_your_own_torch(tmp_path, monkeypatch):
    from profiler_runner import runner

    monkeypatch.setattr(runner, "__file__", str(tmp_path / "site-packages" / "profiler_runner" / "runner.py"))
    assert runner.checkout_root() is None
    hint = runner.torch_hint()
    assert "your own torch" in hint and "pytorch.org" in hint and "-e '.[profile]'" not in hint


def test_flash_and_cudnn_need_half_precision_on_cuda():
    import argparse

    from profiler_runner.errors import ProfileError
    from profiler_runner.registry import WORKLOADS
    from profiler_runner.target import check_combination

    w = WORKLOADS["attention"]
    for backend in ("flash", "cudnn"):
        args = argparse.Namespace(backend=backend, dtype="fp32", steps=3)
        with pytest.raises(ProfileError, match="bf16 or fp16"):
            check_combination(w, w.options("cuda", {"backend": backend}), "cuda", args)
    ok = argparse.Namespace(backend="flash", dtype="bf16", steps=3)
    check_combination(w, w.options("cuda", {"backend": "flash"}), "cuda", ok)


def test_capture_samples_script_runs_on_cpu(tmp_path, capsys):
    from profiler_runner import capture_samples

    names = capture_samples.captures()
    assert {
        "matmul_add_64_cold_eager",
        "matmul_add_4096_warm_compiled",
        "mlp_fwd_compiled",
        "attn_naive",
        "attn_inplace",
        "attn_sdpa_flash",
    } <= set(names)
    assert sum("--with-stack" in a for a in names.values()) == 1
    assert capture_samples.main(["--device", "cpu", "--only", "matmul_add_64_cold_eager", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "matmul_add_64_cold_eager.json.gz").is_file() and (
        tmp_path / "matmul_add_64_cold_eager.txt"
    ).is_file()
    checks = (tmp_path / "CHECKS.md").read_text()
    # the verdict of a real CPU capture depends on this machine's speed: any verdict, said of a CPU-only run
    assert re.search(r"matmul_add_64_cold_eager\.json\.gz: cpu-(in|between)-ops \(CPU only\)", checks)
    assert "(CPU only); steps us: " in checks and "mm+add" in checks
    assert capture_samples.main(["--device", "cpu", "--only", "attn_sdpa_flash", "--out", str(tmp_path)]) == 0
    assert (
        "attn_sdpa_flash: skipped (tracetui: error: the flash attention backend needs CUDA"
        in (tmp_path / "CHECKS.md").read_text()
    )


def _user_file(tmp_path, text: str, name: str = "work.py"):
    folder = tmp_path / "mycode"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(textwrap.dedent(text))
    return folder / name


WORK = """
    import os
    import torch

    def helper(x):
        return torch.relu(x @ x)

    def step():
        os.write(2, b"user line on stderr\\n")
        return helper(torch.ones(4, 4)) + 1

    def boom():
        a = torch.ones(4, 4)
        return helper2(a, torch.ones(5, 5))

    def helper2(a, b):
        return a @ b

    def needs(x, y):
        return x + y
"""


def test_a_bug_in_your_function_is_yours(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _user_file(tmp_path, WORK)
    code, out, io = _profile(tmp_path, capsys, "mycode/work.py:boom")
    assert code == 2 and not out.exists() and not out.parent.exists()  # no empty output folder left behind
    lines = io.err.splitlines()
    assert lines[0] == (
        "tracetui: error in your code: mycode/work.py:17 in helper2: RuntimeError: "
        "mat1 and mat2 shapes cannot be multiplied (4x4 and 5x5)"
    )
    assert lines[1] == "Traceback (your frames only):"
    frames = [line for line in lines if line.startswith("  File ")]
    assert [f.rsplit(" in ", 1)[1] for f in frames] == ["boom", "helper2"]
    assert all("mycode/work.py" in f for f in frames)
    assert "internal error" not in io.err and "tui/" not in io.err and "profiler_runner" not in io.err


def test_a_function_with_arguments_a_syntax_error_and_an_import_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _user_file(tmp_path, WORK)
    code, _, io = _profile(tmp_path, capsys, "mycode/work.py:needs")
    assert code == 2 and io.err.count("\n") == 1
    assert "needs() needs arguments (x, y)" in io.err and "def run(): return needs(x, y)" in io.err
    _user_file(tmp_path, "def f(:\n    pass\n", "bad.py")
    code, _, io = _profile(tmp_path, capsys, "mycode/bad.py:f")
    assert (
        code == 2
        and io.err.splitlines()[0] == "tracetui: error in your code: mycode/bad.py:1:7: SyntaxError: invalid syntax"
    )
    _user_file(tmp_path, "import torch\nraise ValueError('no data dir')\ndef f():\n    pass\n", "early.py")
    code, _, io = _profile(tmp_path, capsys, "mycode/early.py:f")
    assert code == 2
    assert (
        io.err.splitlines()[0] == "tracetui: error in your code: mycode/early.py:2 in <module>: ValueError: no data dir"
    )
    (tmp_path / "mycode" / "notes.txt").write_text("hello")
    code, _, io = _profile(tmp_path, capsys, "mycode/notes.txt:f")
    assert code == 2 and io.err == "tracetui: error: mycode/notes.txt: not a Python file (expected FILE.py:function)\n"


def test_an_internal_error_still_exits_1(tmp_path, capsys, monkeypatch):
    from profiler_runner import runner

    def broken(*a, **k):
        raise KeyError("our own bug")

    monkeypatch.setattr(runner, "write_table", broken)
    code, _, io = _profile(tmp_path, capsys, "matmul_add", "--size", "8", "--steps", "1")
    assert code == 1 and "tracetui: internal error: KeyError" in io.err


def test_four_captures_in_a_row_with_different_flags(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    base = ["profile", "matmul_add", "--size", "8", "--steps", "1", "--device", "cpu", "--no-open"]
    wrote = []
    for flags in ([], ["--with-stack"], ["--profile-memory", "--no-record-shapes"], []):
        assert main([*base, *flags]) == 0
        err = capsys.readouterr().err
        wrote.append(re.search(r"wrote (\S+) and", err).group(1))  # type: ignore[union-attr]
    folder = Path("traces/matmul_add")
    assert wrote == [
        str(folder / "8_bf16_cold_eager_steps1.json"),
        str(folder / "8_bf16_cold_eager_stack_steps1.json"),
        str(folder / "8_bf16_cold_eager_mem_noshapes_steps1.json"),
        str(folder / "8_bf16_cold_eager_steps1-2.json"),
    ]
    assert all(Path(w).is_file() for w in wrote)
    shapes = [
        any("Input Dims" in e.get("args", {}) for e in json.loads(Path(w).read_text())["traceEvents"]) for w in wrote
    ]
    assert shapes == [True, True, False, True]  # shapes are recorded by default
    code = main(["summary", "traces/matmul_add", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and len(doc["other_captures"]) == 3


def test_with_stack_drops_tracetuis_frames_from_trace_table_and_code_view(tmp_path, capfd, monkeypatch):
    capsys = capfd  # the file descriptors' output too: torch writes its USDT lines to fd 2
    monkeypatch.chdir(tmp_path)
    _user_file(tmp_path, WORK)
    code, out, io = _profile(tmp_path, capsys, "mycode/work.py:step", "--with-stack", "--steps", "2")
    assert code == 0, io.err
    assert "USDT:" not in io.err and "user line on stderr" in io.err  # torch's noise filtered, the user's output kept
    frames = [e["name"] for e in json.loads(out.read_text())["traceEvents"] if e.get("cat") == "python_function"]
    step, helper = (next(f for f in frames if f.endswith(name)) for name in ("work.py(8): step", "work.py(5): helper"))
    ours = ("tui/cli/", "profiler_runner/", "runpy", "_pytest/", "pluggy/", "torch/profiler/profiler.py")
    assert not [f for f in frames if any(o in f for o in ours)]
    table = out.with_suffix(".txt").read_text()
    assert "ProfilerStep*" in table and not any(o in table for o in ours)  # (torch cuts long frame names)
    assert main(["code", str(out), "--format", "json", "--sort", "cpu_total"]) == 0  # (by self time, helper's
    rows = json.loads(capsys.readouterr().out)["rows"]  # matmul could head it on a busy machine: it did)
    # Under pytest-xdist the worker's channel thread (execnet) runs beside the capture, and with_stack records every
    # thread's frames: that thread's are neither ours nor the user's, and a user's run has no such thread.
    rows = [r for r in rows if not r["frame"].startswith("execnet/")]
    assert rows[0]["frame"] == step and {r["frame"] for r in rows} == {step, helper}  # the user's function heads it


def test_the_table_of_a_with_stack_capture_matches_tracetuis_ops(tmp_path, capsys):
    """The table written beside a with_stack capture has no frame rows on any torch (torch's tree and averages over
    its events less the frames, as 2.11 printed it), and is tracetui's ops table; --python-frames lists the frames
    as torch 2.12 and 2.13 do."""
    from torch_numbers import assert_close, spans_per_row

    from profiler_runner.frames import clean_trace_file
    from profiler_runner.runner import capture, key_averages
    from tui.model import load_trace
    from tui.model.analyses.results import Results

    x = torch.ones(4, 4)
    args = argparse.Namespace(steps=2, record_shapes=True, with_stack=True, profile_memory=False)
    prof = capture(torch, lambda: torch.relu(x @ x), "lbl", "cpu", args)
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    assert clean_trace_file(str(tmp_path / "t.json")) > 0  # this test's own frames and pytest's
    theirs = {e.key: e for e in key_averages(prof, True)}
    a = Results(load_trace(tmp_path / "t.json", use_cache=False))
    ours = {r.name: r for r in a.ops.rows}
    assert set(theirs) == set(ours) and not any(r.is_python for r in a.ops.rows)
    spans = spans_per_row(a, a.ops)
    for key, e in theirs.items():
        assert ours[key].count == e.count, key
        assert_close(ours[key].self_cpu_us, e.self_cpu_time_total, spans[(key, False, None)], key)
    assert a.op_table(python_frames=True).has_python
    assert a.ops.torch == torch.__version__  # the capture names the torch that wrote it


def test_a_tensorboard_trace_handler_folder_with_repeat_2(tmp_path, capsys):
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    x = torch.randn(8, 8)
    sched = schedule(wait=1, warmup=1, active=2, repeat=2)
    handler = tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="host_1")
    with profile(activities=[ProfilerActivity.CPU], schedule=sched, on_trace_ready=handler) as prof:
        for _ in range(8):
            (x @ x).relu()
            prof.step()
    files = sorted((tmp_path / "tb").iterdir())
    assert len(files) == 2 and all(f.name.startswith("host_1.") and f.name.endswith(".pt.trace.json") for f in files)
    assert main(["summary", str(tmp_path / "tb"), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["capture"] == str(files[1]) and doc["other_captures"] == [str(files[0])] and "job" not in doc
    assert [s["name"] for s in doc["steps"]] == ["ProfilerStep#6", "ProfilerStep#7"]
    assert main(["watch", str(tmp_path / "tb"), "--once", "--format", "json"]) == 0
    assert [json.loads(line)["capture"] for line in capsys.readouterr().out.splitlines()] == [f.name for f in files]


def test_compile_modes_are_in_the_tag_and_the_samples_list():
    from profiler_runner import capture_samples
    from profiler_runner.target import mode_tag

    args = argparse.Namespace(
        warmup=True,
        compile=True,
        compile_mode="reduce-overhead",
        with_stack=False,
        profile_memory=False,
        record_shapes=True,
        steps=3,
    )
    assert mode_tag(args) == "warm_compiled-reduce-overhead"
    args.compile_mode = "default"
    assert mode_tag(args) == "warm_compiled"
    args.compile_mode = None  # --compile alone: the tag never says None
    assert mode_tag(args) == "warm_compiled"
    names = capture_samples.captures()
    assert names["mlp_fwd_compiled_reduce_overhead"] == ["mlp", "--compile-mode", "reduce-overhead"]
    assert "matmul_add_4096_warm_compiled_max_autotune" in names


def test_after_profile_the_viewer_opens_on_the_overview(tmp_path, capsys, monkeypatch):
    from tui.cli import view

    seen = {}
    monkeypatch.setattr(view, "cmd_open", lambda args: seen.setdefault("args", args) and 0)
    code = main(
        ["profile", "matmul_add", "--size", "8", "--steps", "1", "--device", "cpu", "-o", str(tmp_path / "t.json")]
    )
    assert code == 0 and seen["args"].initial_view == "overview" and seen["args"].traces == [str(tmp_path / "t.json")]


def test_the_steps_after_a_capture_are_said_in_one_unit_as_the_verdict_says_durations():
    """GIVEN a capture whose steps last milliseconds (a100-train-control: 24-40 ms) WHEN `profile` lists them under
    its verdict THEN in the verdict's unit, one for all: it wrote "ProfilerStep#2 39,642 us" beside "85.41 ms"."""
    from conftest import SAMPLES

    from tui.cli.profile import CaptureReader

    lines = " ".join(CaptureReader(debug=False).verdict(SAMPLES / "a100-train-control.json.gz"))
    steps = re.findall(r"ProfilerStep#\d+ ([\d.,]+) (us|ms|s)\b", lines.split("steps:", 1)[1])
    assert len(steps) >= 3 and {unit for _, unit in steps} == {"ms"}, steps
