"""A report asked again of a cached trace is written back as it was printed (tui/cli/replay.py): the same bytes on
stdout and stderr as the run it was kept from, and as a run without the cache; never when anything it depends on
changed (the file, the options, the width, the code, a capture beside a graph replay)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SAMPLES, X, copy_sample, write_trace

from tui.cli import commands, main, replay
from tui.model.load.cachedir import entry_dir

RUN = """
import contextlib, io, json, sys
from tui.cli import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue(), "modules": sorted(sys.modules)}))
"""


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    got = capsys.readouterr()
    return code, got.out, got.err


def _records(trace: Path) -> list[Path]:
    folder = entry_dir(trace) / replay.FOLDER
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


@pytest.fixture
def opened(monkeypatch) -> list[str]:
    """The commands that ran rather than were replayed."""
    ran: list[str] = []
    real = commands.run_command

    def counted(command, args):
        ran.append(args.command)
        return real(command, args)

    monkeypatch.setattr(commands, "run_command", counted)
    return ran


@pytest.mark.parametrize("argv", [["summary"], ["ops", "--format", "json"], ["kernels", "--limit", "3"]])
def test_the_third_run_writes_back_what_the_second_printed(argv, tmp_path, capsys, opened):
    trace = copy_sample(tmp_path, "h100-bert-small.json.gz")
    truth = _run([*argv, str(trace), "--no-cache"], capsys)
    first = _run([*argv, str(trace)], capsys)  # a first load: its output is no cached run's, nothing is kept
    assert _records(trace) == [] and first == truth
    second = _run([*argv, str(trace)], capsys)  # from the cache entry: kept
    assert len(_records(trace)) == 1 and second == truth
    third = _run([*argv, str(trace)], capsys)
    assert third == truth and opened == [argv[0]] * 3  # the third opened nothing


def test_a_replayed_report_imports_neither_numpy_nor_the_model(tmp_path):
    trace = copy_sample(tmp_path, "h100-bert-small.json.gz")
    env = {**os.environ, "TRACETUI_CACHE_DIR": str(tmp_path / "cache")}
    runs = [
        json.loads(subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout)
        for cmd in [[sys.executable, "-c", RUN, "ops", str(trace), "--limit", "5"]] * 3
    ]
    assert [r["code"] for r in runs] == [0, 0, 0] and runs[2]["out"] == runs[1]["out"] == runs[0]["out"]
    assert "numpy" in runs[1]["modules"] and "tui.model.trace" in runs[1]["modules"]
    assert "numpy" not in runs[2]["modules"] and "tui.model.trace" not in runs[2]["modules"]
    assert "tui.tables.ops" not in runs[2]["modules"]  # not even for --sort's help


def test_what_loading_said_is_said_again(tmp_path, capsys, opened):
    """A salvaged trace's warning is part of every cached run's output, so of its replay too."""
    path = write_trace(tmp_path / "cut.json", [X(f"aten::op{i}", 10 * i, 5) for i in range(40)])
    path.write_bytes(path.read_bytes()[:-300])  # cut inside the events
    runs = [_run(["summary", str(path)], capsys) for _ in range(3)]
    assert "warning" in runs[1][2] and "cut.json" in runs[1][2]
    assert runs[2] == runs[1] and len(opened) == 2


def test_a_changed_trace_is_read_again(tmp_path, capsys, opened):
    path = write_trace(tmp_path / "t.json", [X("aten::mm", 0, 10)])
    for _ in range(3):
        _run(["ops", str(path), "--format", "json"], capsys)
    assert len(opened) == 2
    write_trace(path, [X("aten::mm", 0, 10), X("aten::add", 20, 5)])  # another trace under the same name
    code, out, _ = _run(["ops", str(path), "--format", "json"], capsys)
    assert code == 0 and len(opened) == 3
    assert {row["name"] for row in json.loads(out)["rows"]} == {"aten::mm", "aten::add"}


def test_other_options_a_width_or_code_each_run_again(tmp_path, capsys, opened, monkeypatch):
    trace = copy_sample(tmp_path, "h100-bert-small.json.gz")
    for _ in range(3):
        _run(["ops", str(trace)], capsys)
    assert len(opened) == 2
    limited = [_run(["ops", str(trace), "--limit", "4"], capsys) for _ in range(2)]  # the entry is there: kept
    assert len(opened) == 3 and limited[1] == limited[0]
    assert len(limited[1][1]) < len(_run(["ops", str(trace)], capsys)[1])
    monkeypatch.setenv("TRACETUI_COLUMNS", "70")
    narrow = _run(["ops", str(trace)], capsys)
    assert len(opened) == 4 and max(map(len, narrow[1].splitlines())) <= 70
    monkeypatch.setattr("tui.model.code_stamp.stamp", lambda: "another code")
    _run(["ops", str(trace)], capsys)
    assert len(opened) == 5


def test_nothing_is_kept_for_no_cache_a_failure_or_a_capture_beside(tmp_path, capsys, opened):
    trace = copy_sample(tmp_path, "h100-bert-small.json.gz")
    _run(["summary", str(trace)], capsys)
    for _ in range(2):
        assert _run(["summary", str(trace), "--no-cache"], capsys)[0] == 0
        assert _run(["ops", str(trace), "--sort", "no_such_key"], capsys)[0] == 2
    assert _records(trace) == []
    (trace.parent / "capture_traces").mkdir()  # a graph replay's capture may be read from here: not replayed
    for _ in range(2):
        _run(["summary", str(trace)], capsys)
    assert _records(trace) == [] and opened.count("summary") == 3 + 2


def test_a_damaged_record_is_ignored_and_written_again(tmp_path, capsys, opened):
    trace = copy_sample(tmp_path, "h100-bert-small.json.gz")
    kept = [_run(["summary", str(trace)], capsys) for _ in range(2)][1]
    (record,) = _records(trace)
    for damage in (b"{not json", b'{"version": 1, "writes": [["tty", "\\u001b[2J"]]}', b"[]"):
        record.write_bytes(damage)
        assert _run(["summary", str(trace)], capsys) == kept  # ran: the record is written again
        assert json.loads(record.read_bytes())["writes"]
    assert len(opened) == 2 + 3


def test_at_most_keep_records_and_never_another_file(tmp_path, capsys, opened, monkeypatch):
    monkeypatch.setattr(replay, "KEEP", 2)
    trace = copy_sample(tmp_path, "h100-bert-small.json.gz")
    _run(["ops", str(trace)], capsys)
    folder = entry_dir(trace) / replay.FOLDER
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    (folder / ("0" * 32 + ".json.bak")).write_text("mine too")
    for limit in range(1, 6):
        _run(["ops", str(trace), "--limit", str(limit)], capsys)
    assert len(_records(trace)) == 2
    assert (folder / "notes.txt").read_text() == "mine" and (folder / ("0" * 32 + ".json.bak")).exists()
    before = len(opened)
    _run(["ops", str(trace), "--limit", "5"], capsys)  # the newest is kept
    assert len(opened) == before


def test_a_relative_name_reads_its_own_file_from_any_folder(tmp_path, capsys, opened, monkeypatch):
    """A fresh-eyes run's case: a trace first opened by a relative name kept that name as the file to read the args
    from, so `explain` run from another folder holding a file of that name read that file's bytes (its roofline
    findings lost, exit 0), and the record kept it so from every folder."""
    import gzip

    here, there = tmp_path / "exp1", tmp_path / "exp2"
    here.mkdir(), there.mkdir()
    (here / "trace.json").write_bytes(gzip.decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes()))
    (there / "trace.json").write_bytes(gzip.decompress((SAMPLES / "cpu" / "mlp_fwd.json.gz").read_bytes()))
    monkeypatch.chdir(here)
    truth = _run(["explain", "trace.json", "--no-cache"], capsys)
    assert "against its roof" in truth[1]
    _run(["explain", "trace.json"], capsys)  # the first load, by a relative name
    monkeypatch.chdir(there)
    runs = [_run(["explain", str(here / "trace.json")], capsys) for _ in range(2)]  # from the entry, then replayed
    assert runs == [truth, truth] and len(opened) == 3  # the last replayed


def test_an_entry_naming_its_file_relatively_is_read_again(tmp_path):
    """Entries written before the fix name the file as first given: read as stale, the trace is decoded again."""
    from tui.model import load_trace
    from tui.model.load import cache

    trace = copy_sample(tmp_path, "h100-bert-small.json.gz")
    assert os.path.isabs(load_trace(trace).sources[0]) and cache.read(trace) is not None
    meta = entry_dir(trace) / "meta.json"
    data = json.loads(meta.read_text())
    data["sources"] = [os.path.relpath(data["sources"][0])]
    meta.write_text(json.dumps(data))
    assert cache.read(trace) is None


def test_a_sample_named_demo_is_never_kept_even_beside_a_file_of_that_name(tmp_path, capsys, opened, monkeypatch):
    monkeypatch.chdir(tmp_path)
    local = tmp_path / "demo:a100-triton-small"
    local.write_bytes((SAMPLES / "cpu" / "mlp_fwd.json.gz").read_bytes())
    _run(["summary", f"./{local.name}"], capsys)  # the local file's entry is there
    for _ in range(3):
        _run(["summary", "demo:a100-triton-small"], capsys)
    assert _records(local) == [] and opened.count("summary") == 4


def test_a_replay_folder_that_is_a_link_is_never_written_through(tmp_path, capsys, opened):
    trace = copy_sample(tmp_path, "h100-bert-small.json.gz")
    _run(["ops", str(trace)], capsys)
    elsewhere = tmp_path / "someone-elses"
    elsewhere.mkdir()
    theirs = [elsewhere / f"{k:032x}.json" for k in range(20)]  # names a record could have
    for path in theirs:
        path.write_text("{}")
    (entry_dir(trace) / replay.FOLDER).symlink_to(elsewhere, target_is_directory=True)
    for limit in range(1, 4):
        assert _run(["ops", str(trace), "--limit", str(limit)], capsys)[0] == 0
    assert sorted(elsewhere.iterdir()) == theirs and all(p.read_text() == "{}" for p in theirs)


def test_notes_fit_the_terminal_stderr_writes_to(monkeypatch):
    """With stdout piped and stderr a terminal, notes were fitted to 80 columns (shutil asks stdout's terminal)."""
    from tui.cli import output

    class Terminal:
        def isatty(self):
            return True

        def fileno(self):
            return 2

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(os, "get_terminal_size", lambda fd: os.terminal_size((50, 20)))
    assert output.stream_columns(Terminal()) == 50
    monkeypatch.setenv("COLUMNS", "120")
    assert output.stream_columns(Terminal()) == 120
    assert output.stream_columns(type("Pipe", (), {"isatty": lambda self: False})()) is None
