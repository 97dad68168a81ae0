"""No control sequence from a trace reaches the terminal: every headless command, in every format it offers, on
traces whose names (ops, kernels, annotations, Python frames, threads, processes, args, snapshot frames) and file
names carry escape sequences, C0/C1 controls, bidi overrides and wide characters (tests/hostile.py).

The commands and their formats are read from the parser itself, so a new command or format is covered (or named
below with the reason it is not) the day it is added."""

from __future__ import annotations

import argparse
import json
import pickle
import random
import shutil
from pathlib import Path

import pytest
from golden import run
from hostile import SAMPLES, hostile, hostile_trace, leaks

from tui.cli.commands import GROUPS, build_parser

SEEDS = (7, 52)
NOT_HEADLESS = {
    "open": "the viewer (tests/viewer/test_sanitize_viewer.py)",
    "demo": "opens the viewer on a shipped sample",
    "profile": "captures the user's script, whose output is theirs",
    "workloads": "lists the built-in workloads (no trace)",
    "mcp": "JSON-RPC on stdio, not a terminal (JSON escapes the strings)",
}


def formats() -> list[tuple[str, str]]:
    """(command, format) for every headless command and each of its --format choices (text when it has none)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = []
    for name, p in sub.choices.items():
        if name in NOT_HEADLESS:
            continue
        option = next((a for a in p._actions if "--format" in a.option_strings), None)
        out += [(name, f) for f in (option.choices if option else ["text"])]
    return out


def test_every_command_is_covered_or_said_why_not():
    assert {c for c, _ in formats()} | set(NOT_HEADLESS) == set(GROUPS)


def _snapshot(src: Path, dst: Path, seed: int) -> Path:
    """A copy of a test snapshot with every frame's function and file name made hostile."""
    rng = random.Random(seed)

    def walk(x):
        if isinstance(x, dict):
            return {
                k: hostile(rng, v) if k in ("name", "filename") and isinstance(v, str) else walk(v)
                for k, v in x.items()
            }
        return [walk(v) for v in x] if isinstance(x, list) else x

    dst.write_bytes(pickle.dumps(walk(pickle.loads(src.read_bytes()))))  # noqa: S301 - the project's own test data
    return dst


@pytest.fixture(scope="module")
def hostile_files(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("hostile")
    seed = SEEDS[0]
    ranks = tmp / "ranks-\x1b[2J\u202e"
    ranks.mkdir()
    for k in (0, 1):
        hostile_trace(ranks, f"hta-2rank/sampled_rank-{k}.json.gz", seed + k).rename(ranks / f"rank-{k}-\x9b.json")
    watched = tmp / "watch-\x1b]0;T\x07"
    watched.mkdir()
    shutil.copy(hostile_trace(tmp, "b300-moe-small.json.gz", seed), watched / "capture-\x1b[6n.json")
    snaps = Path(__file__).resolve().parents[1] / "data" / "snapshots"
    return {
        "gpu": hostile_trace(tmp, "b300-moe-small.json.gz", seed),
        "gpu-b": hostile_trace(tmp, "b300-moe-small.json.gz", SEEDS[1]),
        "stack": hostile_trace(tmp, "cuda-h200/matmul_add_64_warm_eager_stack.json.gz", seed),
        "memory": hostile_trace(tmp, "h100-bert-small.json.gz", seed),
        "ranks": ranks,
        "watch": watched,
        "snapshot": _snapshot(snaps / "leak.pickle", tmp / "leak-\x1b]52;c;eA==\x07.pickle", seed),
        "snapshot-b": _snapshot(snaps / "leak-more.pickle", tmp / "more-\u202e.pickle", SEEDS[1]),
        "out": tmp / "exported-\x1b[2J.json",
    }


def argvs(command: str, files: dict[str, Path]) -> list[list[str]]:
    """The runs of a command over the hostile files: its one trace, or what else it reads."""
    f = {k: str(v) for k, v in files.items()}
    return {
        "ranks": [["ranks", f["ranks"], "--workers", "1"]],
        "diff": [["diff", f["gpu"], f["gpu-b"]], ["diff", f["snapshot"], f["snapshot-b"]]],
        "memory": [
            ["memory", f["memory"]],
            ["memory", f["snapshot"]],
            ["memory", f["memory"], "--snapshot", f["snapshot"]],
        ],
        "sql": [["sql", f["gpu"], "SELECT * FROM kernels"], ["sql", f["stack"], "SELECT * FROM events LIMIT 200"]],
        "watch": [["watch", f["watch"], "--once"]],
        "export": [["export", f["gpu"], "-o", f["out"]]],
        "code": [["code", f["stack"], "--all-frames"]],
        "summary": [["summary", f["gpu"]], ["summary", f["memory"]]],
        "ops": [["ops", f["stack"], "--python-frames"], ["ops", f["gpu"], "--group-by-shape"]],
    }.get(command, [[command, f["gpu"]], [command, f["stack"]]])


@pytest.mark.parametrize(("command", "fmt"), formats())
def test_no_control_character_reaches_the_terminal(hostile_files, command, fmt, monkeypatch):
    monkeypatch.setenv("TRACETUI_COLUMNS", "120")  # fitted tables: names cut, the widths counted
    for argv in argvs(command, hostile_files):
        argv = argv if command == "export" else [*argv, "--format", fmt]  # export writes a file, says one line
        out = run(argv)
        assert not out.startswith("exit 1\n"), out[:2000]  # an internal error would be a failure of its own
        assert not leaks(out), f"{argv}: {leaks(out)}\n{out[:3000]}"
        body = out.split("---\n", 1)[1]
        if fmt == "json":  # JSON stays JSON, its strings escaped by it (watch: one document a line)
            [json.loads(line) for line in body.splitlines() if line] if command == "watch" else json.loads(body)


def test_json_keeps_the_raw_names(hostile_files):
    """JSON is data: a name comes back as it was in the trace, escaped by JSON, not shown as `\\x1b`."""
    out = run(["kernels", str(hostile_files["gpu"]), "--format", "json"]).split("---\n", 1)[1]
    names = [r["name"] for r in json.loads(out)["rows"]]
    assert any("\x1b" in n for n in names)
    assert all("\\x1b" not in n for n in names)


def test_a_file_name_in_an_error_is_shown_not_run(tmp_path):
    missing = tmp_path / "gone-\x1b]0;PWNED\x07\u202e.json"
    out = run(["summary", str(missing)])
    assert out.startswith("exit 2\n")
    assert not leaks(out)
    assert "gone-\\x1b]0;PWNED\\x07\\u202e.json" in out


def test_samples_have_the_names_the_runs_poison():
    """The fuzz is only as good as its inputs: the samples it poisons hold kernels, Python frames and memory."""
    gpu = json.loads(__import__("gzip").decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes()))
    cats = {e.get("cat") for e in gpu["traceEvents"]}
    assert {"kernel", "python_function", "cpu_op"} <= cats


def test_a_name_in_the_summarys_why_line_is_escaped_as_every_table_escapes_it(tmp_path, monkeypatch):
    """GIVEN a CPU trace whose busiest op is named with a CR LF WHEN summary writes its Why line (prose, wrapped) and
    ops its table THEN both show the name as `\\x0d\\x0a`: the wrap turned the CR LF into two spaces, another name."""
    from conftest import X, write_trace

    monkeypatch.setenv("TRACETUI_COLUMNS", "200")
    name = "aten::evil\r\nop"
    trace = write_trace(tmp_path / "t.json", [X("ProfilerStep#1", 0, 1000), X(name, 10, 900), X("aten::add", 920, 50)])
    shown = "aten::evil\\x0d\\x0aop"
    summary, ops = run(["summary", str(trace)]), run(["ops", str(trace)])
    why = summary.split("Why: ", 1)[1]
    assert shown in why and "aten::evil  op" not in why, why
    assert shown in ops


@pytest.mark.parametrize("argv", [["summary"], ["ops", "--limit", "8"], ["kernels"]])
def test_a_stdout_that_cannot_write_unicode_gets_ascii_rules_not_an_error(argv, tmp_path):
    """PYTHONIOENCODING=ascii (or latin-1): the tables' rules as ASCII, anything else escaped, exit 0. It ended in
    "internal error: UnicodeEncodeError" with exit 1, found by a fresh-eyes run."""
    import os
    import subprocess
    import sys

    from tui.cli.output import PLAIN

    trace = str(SAMPLES / "h100-bert-small.json.gz")
    env = {**os.environ, "TRACETUI_CACHE_DIR": str(tmp_path), "TRACETUI_COLUMNS": "100"}
    cmd = [sys.executable, "-m", "tui", *argv, trace, "--no-cache"]
    utf8 = subprocess.run(cmd, capture_output=True, env={**env, "PYTHONIOENCODING": "utf-8"}, check=True).stdout
    ascii_ = subprocess.run(cmd, capture_output=True, env={**env, "PYTHONIOENCODING": "ascii"})
    assert ascii_.returncode == 0, ascii_.stderr
    expected = "".join(PLAIN.get(c) or c.encode("ascii", "backslashreplace").decode() for c in utf8.decode())
    assert ascii_.stdout.decode("ascii") == expected and utf8.decode() != expected  # (the sample's tables have rules)
