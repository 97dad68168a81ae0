"""The README's examples are tests: its Python snippet runs on the shipped samples and gives the values its `# →`
comments show; every command of the synopsis and every `tracetui ...` in its prose exists with the options shown; the
commands it quotes the output of print that output; the keymap example names real binding ids."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shlex
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, SAMPLES

from tui.cli import main
from tui.cli.commands import GROUPS, build_parser

README = (ROOT / "README.md").read_text()
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
NOT_RUN = {  # sh lines the tests do not run, and why
    "pip install": "installs packages (the CI's own set-up runs it)",
    "python3 -m venv": "makes a virtual environment (the set-up)",
    "mcp add": "registers the server with an agent's CLI (claude, codex, gemini): not installed here",
    ". .venv/bin/activate": "activates the virtual environment (the set-up)",
    "pytest": "runs the test suite (this is in it)",
}


def blocks(lang: str) -> list[str]:
    return [text for kind, text in FENCE.findall(README) if kind == lang]


def prose() -> str:
    """The README outside its code blocks, its lines joined (a quote may wrap)."""
    return " ".join(FENCE.sub("", README).split())


def subparsers() -> dict:
    parser = build_parser()
    return dict(next(a for a in parser._actions if a.dest == "command").choices or {})


def options(command: str) -> set[str]:
    return {o for a in subparsers()[command]._actions for o in a.option_strings}


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_python_snippet_runs_on_the_samples_and_shows_what_it_says(monkeypatch):
    """Each statement runs in order (cwd: the checkout, as the README's set-up leaves you); a statement with a
    `# → value` comment evaluates to that value."""
    snippet = next(b for b in blocks("python") if "tracetui.load(" in b)  # the API's (the snapshots' needs a GPU run)
    monkeypatch.chdir(ROOT)
    lines = snippet.splitlines()
    namespace: dict = {}
    checked = 0
    for stmt in ast.parse(snippet).body:
        code = ast.Module([stmt], [])
        said = lines[stmt.end_lineno - 1].partition("# →")[2].split(":")[0].strip() if stmt.end_lineno else ""
        if said and isinstance(stmt, ast.Expr):
            value = eval(compile(ast.Expression(stmt.value), "README", "eval"), namespace)
            expected = ast.literal_eval(said)
            assert value == pytest.approx(expected), (ast.unparse(stmt), value, expected)
            checked += 1
        else:
            exec(compile(code, "README", "exec"), namespace)
    assert checked >= 3 and "t" in namespace


def test_the_sh_blocks_name_real_commands_and_files():
    ran = 0
    for block in blocks("sh"):
        for line in block.splitlines():
            for part in line.split("&&"):
                words = shlex.split(part.split("#")[0])
                if "mcp add" in part:  # what the agent is told to run: `tracetui mcp`, the line's end
                    assert words[-2:] == ["tracetui", "mcp"], part
                    words = words[-2:]
                elif not words or any(skip in part for skip in NOT_RUN):
                    continue
                assert words[0] in ("tracetui", "python", "pipx", "claude", "codex", "gemini"), part
                if words[0] != "tracetui":
                    continue
                args = build_parser().parse_args(words[1:])  # the options exist
                for path in [a for a in words[2:] if "/" in a]:
                    assert (ROOT / path).exists(), path
                if args.command == "open":
                    from tui.cli.view import check_first_bytes

                    check_first_bytes(str(ROOT / args.traces[0]))  # it opens (the journeys test the viewer on it)
                ran += 1
    assert ran >= 4  # open, and mcp for each of three agents


def test_the_synopsis_lists_every_command_with_options_it_has():
    [synopsis] = [text for kind, text in FENCE.findall(README) if not kind and "tracetui open TRACE" in text]
    named = set()
    for line in synopsis.split("\ntracetui ")[1:] + [synopsis.split("\n", 1)[0].removeprefix("tracetui ")]:
        command = line.split()[0]
        if command.startswith("-"):  # tracetui --version
            continue
        named.add(command)
        said = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-o)\b", line.split("#")[0]))
        assert said <= options(command), (command, said - options(command))
    assert set(GROUPS) <= named, f"commands the README's synopsis does not list: {set(GROUPS) - named}"


def test_every_command_in_the_prose_exists_with_its_options():
    spans = re.findall(r"`(tracetui [^`]+)`", README)
    assert len(spans) >= 10
    for span in spans:
        words = span.split()
        command = words[1]
        if command.startswith("-"):
            continue
        assert command in GROUPS, span
        said = {w.split("=")[0] for w in words[2:] if w.startswith("--")}
        assert said <= options(command), (span, said - options(command))


# A command the README quotes the output of, and the quote (its lines joined), in the README's own words.
QUOTED = [
    (
        "tracetui critical sample_traces/v100-cudagraph-test.json.gz --what-if 'kernel:role=gemm=2'",
        "GEMM kernels 2× faster saves 15.47 ms of 158.11 ms (10%); the path still runs mostly through GPU compute",
    ),
    (
        "tracetui critical sample_traces/hta-2rank",
        "Rank 1 has the longest path (607.90 ms), and no rank waits for another on its path; its own path runs mostly "
        "through the CPU (100%)",
    ),
    ("tracetui summary sample_traces/a100-train-control.json.gz", "one cudaLaunchKernel took 1.1 ms"),
    (
        "tracetui ranks sample_traces/hta-2rank",
        "rank 1 computes 33% longer on its GPU than the other rank (its steps 0.1% longer); its GPU waits for it in "
        "ncclSendRecv",
    ),
]


@pytest.mark.parametrize(("command", "quote"), QUOTED, ids=[c.split()[1] + " " + c.split()[2] for c, _ in QUOTED])
def test_a_quoted_output_is_what_the_command_prints(command, quote, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("TRACETUI_COLUMNS", "0")  # no wrapping: the quote is found whole
    assert quote in prose(), "the README no longer quotes it"
    words = shlex.split(command)
    if words[1] in ("critical", "ranks"):  # the command itself is named in the README too (for the first)
        assert command in prose() or words[2] in prose()
    argv = words[1:] + (["--workers", "1"] if words[1] == "ranks" else [])
    code, out, err = run(argv)
    assert code == 0, err
    assert quote in flat(out), f"{command} no longer prints the README's quote"


def test_the_viewers_lines_quoted_are_what_the_model_says_of_the_bert_sample():
    """The b and x lines the README quotes, on the shipped BERT sample (its first aten::linear for x)."""
    from tui.model.analyses.critical import what_if_for_event
    from tui.model.analyses.results import Results
    from tui.model.load import load_trace
    from tui.tables.critical import event_saving, status

    a = Results(load_trace(SAMPLES / "h100-bert-small.json.gz", use_cache=False))
    line = status(a.critical)
    assert line == "critical path of ProfilerStep#6: 4.43 ms, bound by CPU work (100%)" and line in prose()
    linear = [k for k, n in enumerate(a.trace.names) if n == "aten::linear"]
    first = int(np.flatnonzero(np.isin(a.trace.x.name, linear))[0])
    w = what_if_for_event(a, first, 2.0, a.graph_owner)
    said = event_saving(w, any(it.event == first for it in w.before.items))
    assert said.startswith("aten::linear 2× faster saves 32.7 us of 4.43 ms (1%)")
    assert "aten::linear 2× faster saves 32.7 us of 4.43 ms (1%)" in prose()


def test_the_keymap_example_names_real_binding_ids():
    from tui.app import TraceApp
    from tui.app.bindings import known_ids

    [toml] = blocks("toml")
    ids = re.findall(r'^"([\w.]+)"\s*=', toml, re.MULTILINE)
    assert ids and set(ids) <= known_ids(TraceApp)


def test_the_examples_run_from_the_checkout_they_name():
    assert Path(ROOT, "sample_traces", "h100-bert-small.json.gz").exists()
    assert os.path.isdir(ROOT / "sample_traces" / "hta-2rank")
