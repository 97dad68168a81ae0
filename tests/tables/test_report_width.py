"""Every text command fits an 80-column terminal: on every shipped and shared trace, no line of what it prints is
wider than 80 characters (counted as characters, not bytes). The commands come from the command table
(tui/cli/commands.py): a command added there that takes a trace is covered without touching this file."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES
from golden import traces

from tui.cli import main
from tui.cli.commands import REPORTS, build_parser

WIDTH = 80
QUERY = "select name, cat, count(*) as n, sum(dur_us) as us from events group by all order by us desc limit 12"
EXTRA = {  # what a command needs besides its trace to print a text report
    "watch": ["--once"],
    "sql": [QUERY],
    "ranks": ["--workers", "1"],
}
NOT_TEXT = {"open", "mcp"}  # the viewer and the MCP server print no report


def trace_commands() -> list[str]:
    """The commands of the table whose first argument is a trace (TRACE, DIR, A), the viewer and servers aside."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = []
    for name, p in sub.choices.items():
        first = next((a for a in p._actions if not a.option_strings), None)
        if first is not None and first.metavar in ("TRACE", "DIR", "A") and name not in NOT_TEXT:
            out.append(name)
    return out


def argv(command: str, path: Path) -> list[str]:
    if command == "diff":
        return ["diff", str(path), str(SAMPLES / "h100-bert-small.json.gz")]
    return [command, str(path), *EXTRA.get(command, [])]


def run(args: list[str]) -> tuple[int, str]:
    """A command's exit code and what it printed, stdout then stderr's notes (an error line stays one line)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
    notes = [line for line in err.getvalue().splitlines() if not line.startswith("tracetui: error:")]
    return code, "\n".join([out.getvalue(), *notes])


def wide(text: str) -> list[str]:
    return [line for line in text.splitlines() if len(line) > WIDTH]


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("width-cache")


def test_the_commands_come_from_the_table():
    found = trace_commands()
    assert REPORTS <= set(found)
    assert {"diff", "ranks", "sql", "watch"} <= set(found) and "open" not in found and "profile" not in found


@pytest.mark.parametrize("tid", list(traces()))
def test_every_text_command_fits_80_columns(tid, cache, monkeypatch):
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(cache))
    monkeypatch.setenv("TRACETUI_COLUMNS", str(WIDTH))
    path = traces()[tid]
    ran = 0
    for command in trace_commands():
        code, text = run(argv(command, path))
        lines = wide(text)
        assert not lines, f"{command} {tid}: {len(lines)} lines wider than {WIDTH}, e.g. {lines[0]!r}"
        ran += code == 0 and bool(text.strip())
    # not every command has something to say about every trace, but most do; a snapshot is read by `memory` alone
    assert ran >= (1 if tid.startswith(("snapshots/", "shared/memory-snapshots/")) else 3)


SCRIPT = shutil.which("script")


@pytest.mark.skipif(SCRIPT is None, reason="needs util-linux's script for a pseudo-terminal")
@pytest.mark.parametrize("command", trace_commands())
def test_in_a_real_80_column_terminal_nothing_wraps(command, cache):
    """The command in a pseudo-terminal of 80 columns (no TRACETUI_COLUMNS): stdout and stderr as the terminal shows
    them, an error line included, on the with-stack, with-memory BERT sample."""
    env = {k: v for k, v in os.environ.items() if k != "TRACETUI_COLUMNS"} | {"TRACETUI_CACHE_DIR": str(cache)}
    words = " ".join(f"'{a}'" for a in argv(command, SAMPLES / "h100-bert-small.json.gz"))
    line = f"stty cols {WIDTH} rows 24; {sys.executable} -m tui.cli {words}"
    done = subprocess.run(
        [SCRIPT, "-qec", line, "/dev/null"], capture_output=True, cwd=ROOT, env=env, timeout=300, check=False
    )
    text = done.stdout.decode("utf-8", "replace").replace("\r", "")
    assert text.strip(), f"{command}: nothing printed"
    lines = wide(text)
    assert not lines, f"{command} in a terminal: {len(lines)} lines wider than {WIDTH}, e.g. {lines[0]!r}"


def test_no_limit_prints_every_name_whole(cache, monkeypatch):
    """TRACETUI_COLUMNS=0: every column, every name whole (it shortened `Kernel2<cutlass_80_wmma…>(…)`)."""
    from tui.model.analyses.critical.groups import path_groups
    from tui.model.analyses.results import Results
    from tui.model.load import load_trace
    from tui.tables.critical import TOP

    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(cache))
    monkeypatch.setenv("TRACETUI_COLUMNS", "0")
    bert = SAMPLES / "h100-bert-small.json.gz"
    a = Results(load_trace(bert))
    outputs = {c: run([c, str(bert)])[1] for c in ("ops", "kernels", "critical", "explain", "roofline", "code")}
    assert all(k.name in outputs["kernels"] for k in a.kernels)
    assert all(r.name in outputs["ops"] for r in a.ops.rows)
    assert all(g.name in outputs["critical"] for g in path_groups(a.trace, a.critical, a.frameless)[:TOP])
    framed = run(["critical", str(bert), "--python-frames"])[1]
    assert all(g.name in framed for g in path_groups(a.trace, a.critical)[:TOP])
    assert all(r.input_shapes in outputs["roofline"] for r in a.roofline.rows)
    assert all(r.label in outputs["code"] for r in a.code.rows)
    assert (
        "Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8>(cutlass_80" in outputs["explain"]
    )


def test_critical_cuts_names_in_the_middle_and_frames_read_as_file_and_function(cache, monkeypatch):
    """`critical` cut three rows to `transformers/models/bert/modeling_ber...`; at 80 columns now every row reads."""
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(cache))
    monkeypatch.setenv("TRACETUI_COLUMNS", "80")
    _, out = run(["critical", str(SAMPLES / "h100-bert-small.json.gz"), "--python-frames"])
    assert "..." not in out and "modeling_ber..." not in out
    assert "torch/…/module.py(1743): _call_impl" in out and "…/modeling_bert.py(181): forward" in out


VLLM = (
    ROOT.parent / "shared" / "traces" / "tracelens-2026-07-mi300-vllm-piecewise-graph-pair" / "graph_execution.json.gz"
)


@pytest.mark.skipif(not VLLM.exists(), reason="the shared vLLM trace is not here")
def test_at_160_columns_the_ops_tables_frames_read_whole_or_as_file_and_function(cache, monkeypatch):
    """At 150-160 columns `ops` showed `vllm…): __call__`."""
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(cache))
    monkeypatch.setenv("TRACETUI_COLUMNS", "158")
    _, out = run(["ops", "--python-frames", str(VLLM)])
    assert "vllm/compilation/cuda_graph.py(208): __call__" in out and "…): __call__" not in out
    frames = [line.split("  ")[0] for line in out.splitlines() if re.match(r"\S+\.py\(\d+\): ", line)]
    assert len(frames) > 20 and all(re.search(r"\((\d+|…)\): [\w<]", f) for f in frames), frames[:5]  # its function


def test_summary_to_a_file_wraps_at_the_reports_width_not_its_longest_value(capsys, monkeypatch):
    """No terminal (a file, a pipe): the label lines wrap where the Why paragraph does, and the rule is no wider;
    a value once drew a rule of 300 columns."""
    from tui.reports.formats import PROSE_WIDTH

    monkeypatch.delenv("TRACETUI_COLUMNS", raising=False)
    assert main(["summary", str(SAMPLES / "a100-train-control.json.gz"), "--no-cache"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "─" * PROSE_WIDTH
    assert max(len(line) for line in lines[: lines.index(next(x for x in lines if x.startswith("Why")))]) <= PROSE_WIDTH
    assert any(line.startswith(" " * 30) and "cudaEventQuery" in line for line in lines)  # a value wrapped
