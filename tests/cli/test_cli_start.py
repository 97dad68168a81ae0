"""How a command starts: the cycle collector off for headless commands (and back on after), --version read when asked."""

from __future__ import annotations

import gc

import pytest
from conftest import SAMPLES

import tui.cli.commands as cli


@pytest.mark.parametrize(("command", "off"), [("summary", True), ("ops", True), ("workloads", False)])
def test_the_collector_is_off_only_while_a_headless_command_runs(command, off, monkeypatch):
    seen = []
    monkeypatch.setattr(cli, "run_command", lambda fn, args: seen.append(gc.isenabled()) or 0)
    argv = [command] if command == "workloads" else [command, str(SAMPLES / "h100-bert-small.json.gz")]
    assert gc.isenabled()
    assert cli.main(argv) == 0
    assert seen == [not off]
    assert gc.isenabled(), "the collector is back on once the command returned"


def test_a_failing_command_turns_the_collector_back_on(monkeypatch):
    def boom(fn, args):
        raise RuntimeError("bug")

    monkeypatch.setattr(cli, "run_command", boom)
    assert cli.main(["summary", str(SAMPLES / "h100-bert-small.json.gz")]) == 1
    assert gc.isenabled()
    with pytest.raises(SystemExit):
        cli.main(["summary"])  # a usage error leaves through argparse's exit
    assert gc.isenabled()


def test_version_and_sort_help(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("tracetui ")
    ops = next(a for a in cli.build_parser("ops")._actions if a.dest == "command").choices["ops"]
    assert "self_cpu" in ops.format_help()  # the sort keys are read when the help is shown
    everything = next(a for a in cli.build_parser("")._actions if a.dest == "command").choices
    assert "self_cpu" in everything["ops"].format_help() and "summary" in everything
    summary_only = next(a for a in cli.build_parser("summary")._actions if a.dest == "command").choices
    assert list(summary_only) == ["summary"], "a command builds its own parser only"
    assert summary_only["summary"].format_help() == everything["summary"].format_help()
