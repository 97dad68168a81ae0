"""`open` on a whole JSON document with no trace in it says so in one line before the full screen starts (it
flashed the viewer first): an object without traceEvents, an array of no events ([1,2,3]), traceEvents empty.
The words are the load's own, checked against what the load says of the same file."""

from __future__ import annotations

import pytest

from tui.cli import main
from tui.model.errors import TraceError
from tui.model.load import load_trace
from tui.model.load.folder import first_problem

NO_TRACE = {"object.json": '{"a": 1}', "array.json": "[1,2,3]", "empty.json": '{"traceEvents": []}'}


@pytest.mark.parametrize("name", NO_TRACE)
def test_open_says_it_before_the_screen_starts(name, tmp_path, capsys, monkeypatch):
    from tui.app import TraceApp

    path = tmp_path / name
    path.write_text(NO_TRACE[name])
    monkeypatch.setattr(TraceApp, "run", lambda self, *a, **k: pytest.fail("the full screen started"))
    assert main(["open", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"tracetui: error: {path}: ")
    with pytest.raises(TraceError) as loaded:
        load_trace(path, use_cache=False)
    assert first_problem(path) == loaded.value.problem  # the load's own words


def test_a_document_with_events_is_left_to_the_load(tmp_path):
    path = tmp_path / "one.json"
    path.write_text('{"traceEvents": [{"name": "a", "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]}')
    assert first_problem(path) is None
    damaged = tmp_path / "damaged.json"
    damaged.write_text('{"traceEvents": [{"name": "a", "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1},}')
    assert first_problem(damaged) is None  # not JSON as a whole: the load salvages what it can
