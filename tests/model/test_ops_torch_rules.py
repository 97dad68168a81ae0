"""Which host events torch's table holds and where its tree puts them, one small trace per rule (op_events.py).

Each expected figure is what torch's FunctionEvent and EventList code gives for the same events: frames (torch
2.11's table, and 2.12-2.13's with --python-frames), async c10d annotations, events still open at the window's
end, runtime calls linked to no op, and the profiler's overhead events.
"""

from __future__ import annotations

import json
import warnings

import pytest
from conftest import X, write_trace

from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.results import Results
from tui.tables import ops as O

STEP = "ProfilerStep#3"


def _results(tmp_path, events: list[dict], **top) -> Results:
    return Results(load_trace(write_trace(tmp_path / "t.json", events, **top), use_cache=False))


def _rows(table) -> dict[str, tuple[int, float, float]]:
    """name -> (calls, self CPU, CPU total) of the host rows."""
    return {r.name: (r.count, r.self_cpu_us, r.cpu_total_us) for r in table.rows if not r.is_device}


FRAMES = [
    X(STEP, 0, 100, "user_annotation", External_id=1),
    X("train.py(10): step", 10, 80, "python_function", Python_id=1, Python_parent_id=None),
    X("nn.Module: Linear_0", 15, 60, "python_function", Python_id=2, Python_parent_id=1),
    X("aten::linear", 20, 40, External_id=2),
    X("aten::addmm", 25, 30, External_id=3),
]


def test_frames_are_no_rows_and_their_time_is_the_self_time_of_the_op_above(tmp_path):
    a = _results(tmp_path, FRAMES)
    assert _rows(a.ops) == {  # torch 2.11: the frames are not in its events, aten::linear nests under the step
        "ProfilerStep*": (1, 60.0, 100.0),
        "aten::linear": (1, 10.0, 40.0),
        "aten::addmm": (1, 30.0, 30.0),
    }
    assert a.ops.self_cpu_total_us == 100.0  # every microsecond of the window, once
    assert _rows(a.ops_by_shape) == _rows(a.ops)
    assert a.ops.frame_events == 2 and not a.ops.python_frames and not a.ops.has_python


def test_python_frames_gives_torch_2_13s_table_with_frames_as_rows(tmp_path):
    a = _results(tmp_path, FRAMES)
    t = a.op_table(python_frames=True)
    assert _rows(t) == {
        "ProfilerStep*": (1, 20.0, 100.0),
        "train.py(10): step": (1, 20.0, 80.0),
        "nn.Module: Linear_0": (1, 20.0, 60.0),
        "aten::linear": (1, 10.0, 40.0),
        "aten::addmm": (1, 30.0, 30.0),
    }
    assert t.python_frames and t.has_python and t.self_cpu_total_us == 100.0
    assert _rows(a.op_table(by_shape=True, python_frames=True)) == _rows(t)


def test_a_trace_without_frames_has_one_table(tmp_path):
    a = _results(tmp_path, [X(STEP, 0, 10, "user_annotation"), X("aten::mm", 1, 5)])
    assert a.ops_frames is a.ops and a.ops_by_shape_frames is a.ops_by_shape
    assert O.frames_notes(a.ops) == [] and "python_frames" not in O.totals(a.ops)


def test_a_collectives_annotation_is_async_its_time_stays_in_the_op_it_ran_under(tmp_path):
    events = [
        X(STEP, 0, 200, "user_annotation", External_id=1),
        X("record_param_comms", 10, 100, External_id=2),
        X("nccl:all_reduce", 20, 50, "user_annotation", External_id=3),
        X("cudaLaunchKernel", 30, 10, "cuda_runtime", External_id=2, correlation=7),
        X("ncclKernel_AllReduce", 40, 500, "kernel", pid=0, tid=7, External_id=3, correlation=7),
        X("gloo:all_reduce", 120, 40, "user_annotation", tid=2, External_id=4),  # a gloo worker thread
    ]
    a = _results(tmp_path, events)
    rows = _rows(a.ops)
    assert rows["nccl:all_reduce"] == (1, 0.0, 50.0) and rows["gloo:all_reduce"] == (1, 0.0, 40.0)
    assert rows["record_param_comms"] == (1, 90.0, 100.0)  # only the launch is below it
    nccl = next(r for r in a.ops.rows if r.name == "nccl:all_reduce" and not r.is_device)
    assert nccl.self_device_us == nccl.device_total_us == 0.0  # async: no device time in torch
    assert a.ops.self_cpu_total_us == 200.0


OPEN = [
    X("step1", 0, 100, "user_annotation", External_id=1),
    X("aten::mm", 10, 20, External_id=2),
    X("never_ends", 50, 450, "user_annotation", External_id=3, finished=False),  # Kineto ends it at the window end
    X("aten::add", 60, 20, External_id=4),
    X("step2", 200, 100, "user_annotation", External_id=5),
    X("aten::add", 210, 10, External_id=6),
    {"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": 500},
]


def test_an_event_open_at_the_windows_end_is_left_out_as_torch_2_11_does(tmp_path):
    a = _results(tmp_path, OPEN)
    assert _rows(a.ops) == {
        "step1": (1, 60.0, 100.0),
        "aten::mm": (1, 20.0, 20.0),
        "aten::add": (2, 30.0, 30.0),
        "step2": (1, 90.0, 100.0),
    }
    assert a.ops.open_events == 1 and "still open" in O.frames_notes(a.ops)[0]


def test_with_python_frames_it_is_async_and_ends_with_the_event_it_started_in(tmp_path):
    t = _results(tmp_path, OPEN).op_table(python_frames=True)
    rows = _rows(t)
    assert rows["never_ends"] == (1, 0.0, 50.0)  # torch 2.13: async, its end that of step1
    assert rows["step1"] == (1, 60.0, 100.0) and rows["step2"] == (1, 90.0, 100.0)
    assert O.totals(t)["python_frames"] is True and O.totals(t)["open_events"] == 1


def test_a_runtime_call_linked_to_no_op_is_on_a_thread_of_its_own(tmp_path):
    events = [
        X(STEP, 0, 100, "user_annotation", External_id=1),
        X("aten::mm", 10, 20, External_id=2),
        X("cudaLaunchKernel", 12, 5, "cuda_runtime", External_id=2, correlation=9),
        X("cudaStreamIsCapturing", 40, 10, "cuda_runtime", correlation=10),  # under the step, linked to no op
        X("cudaDeviceSynchronize", 150, 30, "cuda_runtime", correlation=11),
    ]
    rows = _rows(_results(tmp_path, events).ops)
    assert rows[STEP.replace("#3", "*")] == (1, 80.0, 100.0)  # torch: the unlinked call is not below the step
    assert rows["aten::mm"] == (1, 15.0, 20.0)  # the linked launch is
    assert rows["cudaStreamIsCapturing"] == (1, 10.0, 10.0) and rows["cudaDeviceSynchronize"] == (1, 30.0, 30.0)


def test_the_profilers_overhead_is_a_row_of_its_own_thread(tmp_path):
    events = [
        X(STEP, 0, 100, "user_annotation", External_id=1),
        X("Activity Buffer Request", 20, 50, "overhead", pid=-1, tid=0),
        X("Lazy Function Loading", 30, 5, "overhead", pid=-1, tid=0),
    ]
    rows = _rows(_results(tmp_path, events).ops)
    assert rows["Activity Buffer Request"] == (1, 45.0, 50.0) and rows["Lazy Function Loading"] == (1, 5.0, 5.0)
    assert rows["ProfilerStep*"] == (1, 100.0, 100.0)


@pytest.mark.parametrize(
    ("top", "version"),
    [
        ({"torch_version": "2.13.0+cpu"}, "2.13.0+cpu"),
        ({"metadata": {"system": {"torch_env_info": {"torch_version": "2.6.0+cu124"}}}}, "2.6.0+cu124"),
        ({"metadata": {"system": {"pip_packages": ["numpy==2.1", "torch==2.14.1"]}}}, "2.14.1"),
        ({"metadata": "not a dict", "torch_version": 7}, ""),
    ],
)
def test_the_torch_that_wrote_a_trace_where_the_file_says_so(tmp_path, top, version):
    a = _results(tmp_path, FRAMES, **top)
    assert a.ops.torch == version
    note = O.frames_notes(a.ops)[0]
    assert (f"torch {version} wrote this trace" in note) == bool(version)
    if version.startswith("2.13"):
        assert "its table lists them as rows" in note
    if version.startswith("2.14"):
        assert "its table hides the frame rows but not their time" in note and "open" not in note
    if version.startswith("2.6"):
        assert "its table has no such rows" in note


def test_torch_2_14s_table_lists_the_events_left_open(tmp_path):
    note = O.frames_notes(_results(tmp_path, OPEN, torch_version="2.14.1").ops)[0]
    assert note.endswith("torch 2.14.1 wrote this trace: its table lists the open events)")


def test_the_command_line_api_and_the_deprecated_hide_python(tmp_path, capsys):
    path = write_trace(tmp_path / "t.json", FRAMES)
    assert main(["ops", str(path), "--format", "json", "--no-cache"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert plain["python_frames"] is False and {r["name"] for r in plain["rows"]} == {
        "ProfilerStep*",
        "aten::linear",
        "aten::addmm",
    }
    assert main(["ops", str(path), "--format", "json", "--no-cache", "--python-frames"]) == 0
    framed = json.loads(capsys.readouterr().out)
    assert framed["python_frames"] is True and len(framed["rows"]) == 5
    assert main(["ops", str(path), "--format", "json", "--no-cache", "--hide-python"]) == 0
    io = capsys.readouterr()
    assert json.loads(io.out) == plain and io.err.count("\n") == 1 and "--hide-python is deprecated" in io.err
    import tracetui

    t = tracetui.load(path)
    assert t.ops(python_frames=True)["rows"] == framed["rows"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert t.ops(hide_python=True)["rows"] == plain["rows"]
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
