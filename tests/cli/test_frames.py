"""Whose frames are whose (no torch needed): tracetui's own frames dropped from a stack, the user's errors told as theirs."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

import profiler_runner
from profiler_runner.errors import UserCodeError
from profiler_runner.frames import clean_trace_file, dropped
from profiler_runner.usercode import as_user_error, their_errors

ROOT = Path(profiler_runner.__file__).resolve().parents[1]
CLI = f"{ROOT}/tui/cli/commands.py(93): main"
RUNNER = f"{ROOT}/profiler_runner/runner.py(118): capture"


def test_our_frames_those_above_them_and_the_profilers_own_calls_are_dropped():
    nodes = {
        1: (None, "tracetui(8): <module>"),
        2: (1, CLI),
        3: (2, RUNNER),
        4: (3, "work.py(6): step"),
        5: (4, "torch/nn/functional.py(2): linear"),
        6: (3, "torch/profiler/profiler.py(1227): step"),
        7: (6, "<built-in method _record_function_enter_new of object>"),
        8: (3, "<built-in function perf_counter_ns>"),
        9: (4, "<built-in method relu of type object>"),
    }
    assert dropped(nodes) == {1, 2, 3, 6, 7, 8}
    assert dropped({4: (None, "work.py(6): step")}) == set()  # nothing of ours: nothing dropped


def test_clean_trace_file_re_parents_the_kept_frames(tmp_path):
    events = [
        {"ph": "X", "cat": "python_function", "name": CLI, "ts": 0, "dur": 100,
         "pid": 1, "tid": 1, "args": {"Python id": 1, "Python parent id": None}},
        {"ph": "X", "cat": "python_function", "name": "work.py(6): step", "ts": 10, "dur": 50,
         "pid": 1, "tid": 1, "args": {"Python id": 2, "Python parent id": 1}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 20, "dur": 5, "pid": 1, "tid": 1, "args": {}},
    ]  # fmt: skip
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events, "schemaVersion": 1}))
    assert clean_trace_file(str(path)) == 1
    doc = json.loads(path.read_text())
    assert [e["name"] for e in doc["traceEvents"]] == ["work.py(6): step", "aten::mm"]
    assert doc["traceEvents"][0]["args"]["Python parent id"] is None and doc["schemaVersion"] == 1


def test_an_exception_in_the_users_file_is_theirs_and_ours_stays_ours(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text("def inner():\n    return {}['key']\n\ndef outer():\n    return inner()\n")
    module = runpy.run_path(str(tmp_path / "mine.py"))
    with pytest.raises(UserCodeError) as told, their_errors():
        module["outer"]()
    assert told.value.headline == "mine.py:2 in inner: KeyError: 'key'"
    frames = [line.strip().rsplit(" in ", 1)[-1] for line in told.value.details.splitlines() if "File" in line]
    assert frames[-2:] == ["outer", "inner"]  # (this test's own frame counts as the user's too)
    try:
        clean_trace_file(str(tmp_path / "absent.json"))  # raises inside profiler_runner: ours
    except FileNotFoundError as exc:
        ours = exc.with_traceback(exc.__traceback__.tb_next)  # type: ignore[union-attr]  # as the runner sees it
    assert as_user_error(ours) is None
