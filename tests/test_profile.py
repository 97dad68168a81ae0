"""`tracetui profile`: captures of each workload on the CPU, user code, and the error paths."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap

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
    code = main(["profile", *args, "--device", "cpu", "--no-open", "-o", str(out)])
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


def test_gzip_output_and_no_overwrite_without_force(tmp_path, capsys):
    out = tmp_path / "t.json.gz"
    args = ["profile", "matmul_add", "--device", "cpu", "--no-open", "--size", "8", "-o", str(out)]
    assert main(args) == 0
    assert out.read_bytes()[:2] == b"\x1f\x8b" and (tmp_path / "t.txt").is_file()
    before = out.read_bytes()
    assert main(args) == 2
    assert "already exists" in capsys.readouterr().err and out.read_bytes() == before
    assert main([*args, "--force"]) == 0


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
    from torch.profiler import profile

    def broken(self, *a, **k):
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    monkeypatch.setattr(profile, "key_averages", broken)
    code, out, io = _profile(tmp_path, capsys, "matmul_add", "--size", "8", "--with-stack")
    assert code == 0
    table = out.with_suffix(".txt").read_text()
    lines = table.splitlines()
    assert lines[0].startswith("# computed by tracetui") and lines[-1].startswith("Self CPU time total")
    assert len(lines) == 1 + 2 + 15 + 1  # note, header, rule, row_limit=15 rows, footer
    assert "computed by tracetui" in io.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "unknown workload 'nope'"),
        (["attention", "--backend", "flash"], "needs CUDA"),
        (["matmul_add", "--size", "0"], "--size must be positive"),
        (["missing_file.py:fn"], "no such file"),
    ],
)
def test_impossible_requests_fail_before_running(tmp_path, capsys, args, message):
    code, out, io = _profile(tmp_path, capsys, *args)
    assert code == 2
    assert message in io.err and io.err.count("\n") <= 2 and "Traceback" not in io.err
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
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        == "tracetui: error: torch is not installed; install it with: pip install 'tracetui[profile]' (or your own torch build)"
    )


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
    assert re.search(r"matmul_add_64_cold_eager\.json\.gz: (overhead|compute)-bound|mixed \(CPU only\)", checks)
    assert "(CPU only); steps us: " in checks and "mm+add" in checks
    assert capture_samples.main(["--device", "cpu", "--only", "attn_sdpa_flash", "--out", str(tmp_path)]) == 0
    assert (
        "attn_sdpa_flash: skipped (tracetui: error: the flash attention backend needs CUDA"
        in (tmp_path / "CHECKS.md").read_text()
    )
