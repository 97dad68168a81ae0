"""Which host events torch's table holds and where its tree puts them, one small trace per rule (op_events.py).

Each expected figure is what torch's FunctionEvent and EventList code gives for the same events: frames (torch
2.11's table, and 2.12-2.13's with --python-frames), async c10d annotations, events still open at the window's
end, and runtime calls and CUPTI overhead events linked to no op (on the thread that stopped the profiler).
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


def _ns_events(events: list[tuple]) -> list[dict]:
    """(name, start, duration in ns, cat, args) on the main thread (pid 7, tid 7), written in us as Kineto does."""
    return [X(name, t / 1000, d / 1000, cat, pid=7, tid=7, **args) for name, t, d, cat, args in events]


def _unlinked_calls_under_ops() -> list[dict]:
    """The shape of four rows torch 2.11.0+cu130 printed on an H200 (GPT training, a manual CUDA graph's replay)."""
    events = []
    syncs = [(4_028, 165_484), (2_606, 155_490), (2_363, 156_216)]  # two cudaDeviceSynchronize in each step
    for k, (a, b) in enumerate(syncs):
        t = k * 1_000_000
        events += [
            (f"ProfilerStep#{k + 1}", t, 383_657, "user_annotation", {"External_id": 10 * k + 1}),
            ("aten::mm", t + 10_000, 20_000, "cpu_op", {"External_id": 10 * k + 2}),
            ("cudaLaunchKernel", t + 12_000, 5_000, "cuda_runtime", {"External_id": 10 * k + 2, "correlation": 90}),
            ("cudaDeviceSynchronize", t + 40_000, a, "cuda_runtime", {"correlation": 91}),  # no External id
            ("cudaDeviceSynchronize", t + 180_000, b, "cuda_runtime", {"correlation": 92}),
        ]
    for k, capturing in enumerate((2_288, 2_288, 2_287)):  # Optimizer.step's cudaStreamIsCapturing
        t = 3_000_000 + k * 500_000
        events += [
            ("Optimizer.step#AdamW.step", t, 406_193, "user_annotation", {"External_id": 100 + k}),
            ("cudaStreamIsCapturing", t + 1_000, capturing, "cuda_runtime", {"correlation": 93}),
        ]
    events += [
        ("explicit_sync", 5_000_000, 130_069, "user_annotation", {"External_id": 200}),
        ("cudaDeviceSynchronize", 5_010_000, 41_495, "cuda_runtime", {"correlation": 94}),
        ("replay_x4", 6_000_000, 191_824, "user_annotation", {"External_id": 201}),
    ]
    events += [
        ("cudaGraphLaunch", 6_001_000 + 40_000 * k, d, "cuda_runtime", {"correlation": 95 + k})
        for k, d in enumerate((28_058, 28_058, 28_058, 28_059))
    ]
    return _ns_events(events)


def test_a_runtime_call_linked_to_no_op_nests_under_the_op_around_it(tmp_path):
    """A runtime call without an External id nests under the op or annotation around it, as torch nests it.

    torch gives every event a thread number, and _populate_cpu_children (torch/autograd/profiler_util.py) nests the
    events of each number by time. An event Kineto collected gets its number in torch/csrc/profiler/collection.cpp,
    TransferEvents::setParents then setKinetoTID: that of its linked op (Kineto's CuptiActivityProfiler links a
    runtime call to the op whose external correlation was pushed, the trace's External id), else, linked to none,
    at::RecordFunction::currentThreadId(), the thread that stops the profiler: the training thread.
    _parse_kineto_results (torch/autograd/profiler.py) keeps it (thread=kineto_event.start_thread_id()). The same
    code in torch 2.11 and 2.13.

    What torch 2.11 printed on an H200 (captures outside the project), against tracetui's figures before this rule:
    - ProfilerStep* (3 steps of GPT training): self CPU 604.784 us, not 1,090.971: the 486.187 us between them are
      the 6 cudaDeviceSynchronize inside the steps (4.028, 165.484, 2.606, 155.490, 2.363, 156.216);
    - Optimizer.step#AdamW.step: 1,211.716, not 1,218.579: 6.863 us of 3 cudaStreamIsCapturing under it;
    - record_function("explicit_sync") around torch.cuda.synchronize(): 88.574, not 130.069;
    - record_function("replay_x4") around 4 graph.replay(): 79.591, not 191.824 (4 cudaGraphLaunch).
    The trace here has those calls (in ns) and spans with those self times under the old rule (each step also holds
    an op whose launch is linked: it was below its op before), so the figures torch printed must come out.
    """
    a = _results(tmp_path, _unlinked_calls_under_ops())
    rows = _rows(a.ops)
    assert rows["ProfilerStep*"] == (3, pytest.approx(604.784), pytest.approx(1_150.971))
    assert rows["Optimizer.step#AdamW.step"] == (3, pytest.approx(1_211.716), pytest.approx(1_218.579))
    assert rows["explicit_sync"] == (1, pytest.approx(88.574), pytest.approx(130.069))
    assert rows["replay_x4"] == (1, pytest.approx(79.591), pytest.approx(191.824))
    assert rows["cudaDeviceSynchronize"] == (7, pytest.approx(486.187 + 41.495), pytest.approx(486.187 + 41.495))
    assert rows["aten::mm"] == (3, 45.0, 60.0)  # the linked launch was below its op already
    assert a.ops.self_cpu_total_us == pytest.approx(3 * 383.657 + 1_218.579 + 130.069 + 191.824)


def test_a_call_linked_to_no_op_on_another_thread_nests_on_the_thread_that_stopped_the_profiler(tmp_path):
    """The thread number torch gives such a call is the stopping thread's, whichever thread made it (setKinetoTID):
    a call a side thread made (here a watchdog's cudaEventQuery) nests by time under the training thread's op, and
    so do CUPTI's overhead events (pid -1; OVERHEAD is a CPU activity in deviceTypeFromActivity), with the ops inside
    their span below them. The stopping thread is the steps' (prof.step() stops a scheduled profiler)."""
    events = [
        X(STEP, 0, 100, "user_annotation", pid=7, tid=9, External_id=1),  # the training thread is not the main one
        X("aten::mm", 10, 20, pid=7, tid=9, External_id=2),
        X("cudaEventQuery", 40, 10, "cuda_runtime", pid=7, tid=12, correlation=5),
        X("Activity Buffer Request", 60, 30, "overhead", pid=-1, tid=0),
        X("aten::add", 70, 10, pid=7, tid=9, External_id=3),
        X("Lazy Function Loading", 72, 5, "overhead", pid=-1, tid=0),
        X("cudaEventQuery", 300, 10, "cuda_runtime", pid=7, tid=12, correlation=6),  # under no op
    ]
    rows = _rows(_results(tmp_path, events).ops)
    assert rows["ProfilerStep*"] == (1, 40.0, 100.0)
    assert rows["Activity Buffer Request"] == (1, 20.0, 30.0)
    assert rows["aten::add"] == (1, 5.0, 10.0)  # the lazy loading inside it is its child
    assert rows["Lazy Function Loading"] == (1, 5.0, 5.0) and rows["cudaEventQuery"] == (2, 20.0, 20.0)


def test_without_steps_the_stopping_thread_is_the_main_one(tmp_path):
    """No ProfilerStep: the profiler stopped where it started, as a rule the main thread (its tid is its pid)."""
    events = [
        X("side", 0, 100, "user_annotation", pid=7, tid=9),
        X("block", 0, 100, "user_annotation", pid=7, tid=7),
        X("cudaDeviceSynchronize", 10, 30, "cuda_runtime", pid=7, tid=9, correlation=5),
    ]
    rows = _rows(_results(tmp_path, events).ops)
    assert rows["block"] == (1, 70.0, 100.0) and rows["side"] == (1, 100.0, 100.0)


def test_a_lazy_loading_event_is_credited_with_the_kernels_of_the_op_it_ran_in(tmp_path):
    """torch credits device time to CUDA's lazy-loading events (torch 2.11 on an H200, a compiling window: `Lazy
    Function Loading` self CUDA 922.778 us, `Runtime Triggered Module Loading` 50.048 us, where tracetui gave 0).
    _parse_kineto_results gives an event linked to no op the device events whose External id is its correlation_id();
    for an overhead event (CUPTI's correlation 0) that is Result::correlationID, its parent's in torch's Result tree
    (collection.cpp, kinetoEventCorrelationID; build_tree makes the op open on its thread the parent, a linked launch
    is none). So the event inside an op's launch has the op's kernels, and the op counts them twice in its CUDA total
    (the launch, its child by time, holds the loading event). The figures here are this trace's own."""
    events = [
        X(STEP, 0, 2000, "user_annotation", pid=7, tid=7, External_id=1),
        X("aten::addmm", 10, 1500, pid=7, tid=7, External_id=5),
        X("cudaLaunchKernel", 20, 1400, "cuda_runtime", pid=7, tid=7, External_id=5, correlation=50),
        X("Lazy Function Loading", 30, 1300, "overhead", pid=-1, tid=0),
        X("sm90_gemm", 1500, 922.778, "kernel", pid=0, tid=7, External_id=5, correlation=50),
        X("aten::add", 1600, 100, pid=7, tid=7, External_id=6),
        X("Runtime Triggered Module Loading", 1610, 20, "overhead", pid=-1, tid=0),  # not in a launch: the op's
        X("cudaLaunchKernel", 1640, 10, "cuda_runtime", pid=7, tid=7, External_id=6, correlation=51),
        X("add_kernel", 1700, 50.048, "kernel", pid=0, tid=7, External_id=6, correlation=51),
    ]
    rows = {r.name: r for r in _results(tmp_path, events).ops.rows if not r.is_device}
    lazy, module = rows["Lazy Function Loading"], rows["Runtime Triggered Module Loading"]
    assert lazy.self_device_us == pytest.approx(922.778) and lazy.self_cpu_us == 1300.0
    assert module.self_device_us == pytest.approx(50.048) and module.self_cpu_us == 20.0
    assert rows["cudaLaunchKernel"].self_device_us == 0 and rows["cudaLaunchKernel"].self_cpu_us == 100.0 + 10.0
    addmm = rows["aten::addmm"]
    assert addmm.self_device_us == pytest.approx(922.778) and addmm.device_total_us == pytest.approx(2 * 922.778)
    assert rows["aten::add"].device_total_us == pytest.approx(2 * 50.048)


def test_a_runtime_call_linked_to_no_op_is_credited_by_its_correlation_id(tmp_path):
    """Read from the same code (not seen in a capture): a runtime call linked to no op is a frontend event whose id is
    its CUPTI correlation id, and the device events whose External id happens to equal it are credited to it."""
    events = [
        X("aten::mm", 0, 50, pid=7, tid=7, External_id=7),
        X("cudaLaunchKernel", 5, 10, "cuda_runtime", pid=7, tid=7, External_id=7, correlation=3),
        X("gemm", 60, 40, "kernel", pid=0, tid=7, External_id=7, correlation=3),
        X("cudaDeviceSynchronize", 60, 50, "cuda_runtime", pid=7, tid=7, correlation=7),
        X("cudaStreamSynchronize", 120, 5, "cuda_runtime", pid=7, tid=7, correlation=8),
    ]
    rows = {r.name: r for r in _results(tmp_path, events).ops.rows if not r.is_device}
    assert rows["cudaDeviceSynchronize"].self_device_us == 40.0 == rows["aten::mm"].self_device_us
    assert rows["cudaStreamSynchronize"].self_device_us == 0.0


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
