"""`tracetui demo` and demo:NAME: the samples shipped inside the package, named wherever a trace goes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from conftest import SAMPLES
from golden import run

import tracetui
import tui.app
from tui.cli import main
from tui.cli.commands import REPORTS
from tui.model import samples
from tui.model.errors import TraceError

BERT = "demo:h100-bert-small"
NAMES = [s.name for s in samples.SAMPLES]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_shipped_sample_is_a_copy_of_one_in_sample_traces():
    """The package's samples are byte-for-byte copies of sample_traces/ files, which the goldens pin; the folder
    holds the listed samples and their attribution, nothing else."""
    originals = {_digest(p): p for p in SAMPLES.rglob("*.json.gz")}
    shipped = sorted(p for p in samples.FOLDER.rglob("*") if p.is_file())
    for path in shipped:
        if path != samples.ATTRIBUTION:
            assert _digest(path) in originals, f"{path.name} is no copy of a file in sample_traces/"
    listed = sorted(f for s in samples.SAMPLES for f in ([*s.path.iterdir()] if s.ranks else [s.path]))
    assert sorted([*listed, samples.ATTRIBUTION]) == shipped
    assert samples.DEFAULT.name == "h100-bert-small" and samples.DEFAULT.size < 100_000


def test_the_attribution_names_every_sample_and_carries_the_licences():
    text = samples.ATTRIBUTION.read_text("utf-8")
    for s in samples.SAMPLES:
        assert f"`{s.name}" in text, s.name
    for notice in (
        "Copyright (c) 2024 - 2025 Advanced Micro Devices, Inc.",  # TraceLens (MIT)
        "Copyright (c) Meta Platforms, Inc. and affiliates.",  # HolisticTraceAnalysis (MIT)
        "Copyright (c) 2020, pytorch",  # kineto (BSD-3-Clause)
        "Permission is hereby granted, free of charge",
        "Redistributions in binary form must reproduce the above copyright notice",
    ):
        assert notice in text, notice


def test_demo_list_names_each_sample_its_size_and_the_licences(capsys):
    assert main(["demo", "--list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "SIZE", "WHAT"]
    assert [line.split()[0] for line in lines[1 : 1 + len(NAMES)]] == NAMES
    assert "69.78 KiB  H100 BERT inference" in lines[1] and "tracetui demo opens h100-bert-small" in out
    assert lines[-1] == str(samples.ATTRIBUTION) and samples.ATTRIBUTION.is_file()
    assert max(len(line) for line in lines[:-1]) <= 80
    table = lines[: 1 + len(NAMES)]
    assert len({line.index(" WHAT") if i == 0 else line.index("B  ") + 2 for i, line in enumerate(table)}) == 1


class FakeApp:
    """TraceApp as cmd_open drives it: what it was asked to open."""

    opened: list = []

    def __init__(self, paths, **kwargs) -> None:
        FakeApp.opened.append((paths, kwargs))
        self.load_error, self.return_code = None, 0

    def run(self) -> None:
        pass


@pytest.mark.parametrize(("argv", "name"), [([], "h100-bert-small"), (["hta-2rank"], "hta-2rank")])
def test_demo_opens_the_viewer_on_the_sample(argv, name, monkeypatch):
    FakeApp.opened = []
    monkeypatch.setattr(tui.app, "TraceApp", FakeApp)
    assert main(["demo", *argv]) == 0
    [(paths, kwargs)] = FakeApp.opened
    assert paths == [str(samples.sample(name).path)] and Path(paths[0]).exists()
    assert kwargs["compare"] is False and kwargs["initial_view"] == "timeline"


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "nope"],
        ["demo", "--list", "h100-bert-small"],
        ["summary", "demo:nope"],
        ["open", "demo:"],
        ["ranks", "demo:nope"],
        ["sql", "demo:nope", "SELECT 1"],
        ["diff", BERT, "demo:nope"],
        ["memory", "demo:H100-BERT-SMALL"],
    ],
)
def test_a_name_that_is_no_sample_is_one_line_and_exit_2(argv, capsys, monkeypatch):
    monkeypatch.setattr(tui.app, "TraceApp", FakeApp)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tracetui: error: ")
    assert "--list" in err
    if "--list" not in argv:
        assert "h100-bert-small, a100-triton-small" in err  # the names there are


def _as_typed(argv: list[str]) -> tuple[list[str], list[str]]:
    """argv with demo:NAME, and the same with the sample's path in sample_traces/."""
    originals = {_digest(p): p for p in SAMPLES.rglob("*.json.gz")}
    plain = []
    for word in argv:
        if word.startswith(samples.PREFIX):
            s = samples.sample(word[len(samples.PREFIX) :])
            first = next(iter(sorted(s.path.iterdir()))) if s.ranks else s.path
            plain.append(str(originals[_digest(first)].parent if s.ranks else originals[_digest(first)]))
        else:
            plain.append(word)
    return argv, plain


REPORT_RUNS = [
    ["summary", BERT],
    ["summary", BERT, "--format", "json"],
    ["steps", BERT],
    ["ops", BERT, "--limit", "5"],
    ["kernels", BERT, "--format", "csv"],
    ["code", BERT, "--limit", "5"],
    ["memory", BERT, "--format", "json"],
    ["roofline", BERT, "--limit", "5"],
    ["explain", BERT],
    ["critical", BERT, "--format", "json"],
    ["diff", "demo:cpu-matmul-eager", "demo:cpu-matmul-compiled"],
    ["ranks", "demo:hta-2rank", "--workers", "1"],
    ["summary", "demo:hta-2rank"],
    ["summary", "demo:v100-2021-small"],
    ["sql", BERT, "SELECT kind, count(*) AS n FROM events GROUP BY kind ORDER BY n DESC, kind", "--format", "csv"],
    ["breakdown", BERT],
]


def test_every_report_command_is_run_on_a_demo_name():
    assert {argv[0] for argv in REPORT_RUNS} == REPORTS | {"sql"}


@pytest.mark.parametrize("argv", REPORT_RUNS, ids=lambda argv: " ".join(argv[:2]))
def test_every_headless_command_reads_demo_name_as_the_sample(argv):
    """The same output as on the sample's file in sample_traces/, where what is said names the trace as typed."""
    if argv[0] == "sql":
        pytest.importorskip("duckdb")
    typed, plain = _as_typed(argv)
    got, want = run(typed), run(plain)
    for named, path in zip(typed, plain, strict=True):
        want = want.replace(path, named)
    assert got.startswith("exit 0\n") and got == want


def test_what_loading_says_names_the_sample_as_typed(capsys):
    assert main(["summary", "demo:hta-2rank", "--format", "json"]) == 0
    err = capsys.readouterr().err
    assert (
        "demo:hta-2rank is a job of 2 ranks" in err
        and "(tracetui ranks demo:hta-2rank compares them side by side)" in err
    )
    assert str(samples.FOLDER) not in err


def test_the_api_and_the_mcp_servers_traces_take_demo_names():
    t = tracetui.load(BERT)
    assert t.summary() == tracetui.load(SAMPLES / "h100-bert-small.json.gz").summary()
    assert t.summary()["verdict"] == "overhead-bound"
    assert [r["rank"] for r in tracetui.ranks("demo:hta-2rank", workers=1)["ranks"]] == [0, 1]
    with pytest.raises(TraceError, match="^demo:nope: no sample of that name"):
        tracetui.load("demo:nope")
    from tui.cli.mcp.traces import Traces

    traces = Traces(cache=True)
    first = traces.get("demo:a100-triton-small")
    assert traces.get("demo:a100-triton-small") is first  # kept open, keyed by the sample's file
    assert json.dumps(first.summary()) == json.dumps(tracetui.load(SAMPLES / "a100-triton-small.json.gz").summary())


def test_a_file_named_like_a_demo_is_reached_by_its_path(tmp_path, monkeypatch):
    """demo:NAME always names a sample; a file of that name is ./demo:NAME."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo:mine").write_bytes((SAMPLES / "a100-triton-small.json.gz").read_bytes())
    assert samples.resolve("./demo:mine") == "./demo:mine"
    assert run(["summary", "./demo:mine"]).startswith("exit 0\n")
    assert run(["summary", "demo:mine"]).startswith("exit 2\ntracetui: error: demo:mine: no sample of that name")
