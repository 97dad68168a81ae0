"""The ops table agrees with torch's own key_averages() on the same run, whichever torch runs the test.

Which table torch prints for a with_stack run depends on its release: up to 2.11 no Python-frame rows (a frame's
time is the self time of the op it ran under: tracetui's default); 2.12 and 2.13 list the frames as rows (tracetui's
--python-frames); 2.14 hides the rows again (include_python_functions=False) but keeps the frames in its tree.
torch's intended table is compared on every release as torch builds it from the events 2.11 saw (its own tree and
averages over its events less the frames, profiler_runner.runner.frameless), and the table with frames as rows
wherever this torch lists them. Every figure is held to the file's rounding (torch_numbers.py).
"""

from __future__ import annotations

import inspect
import shutil

import pytest
from torch_numbers import assert_close, spans_per_row

from tui.model import load_trace
from tui.model.analyses.results import Results
from tui.tables import ops as O

torch = pytest.importorskip("torch", reason="needs torch to capture a run")

from profiler_runner.runner import frameless  # noqa: E402  (imports torch lazily; after the skip)

RELEASE = tuple(int(v) for v in torch.__version__.split(".")[:2])
LISTS_FRAMES = RELEASE >= (2, 12)  # torch's events() carry the Python frames (pytorch/pytorch#178168)
HIDES_FRAMES = (
    "include_python_functions" in inspect.signature(torch.autograd.profiler_util.EventList.key_averages).parameters
)
CUDA = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (none on CI); runs on the GPU machine"
)

TIMES = [
    ("self_cpu_us", "self_cpu_time_total"),
    ("cpu_total_us", "cpu_time_total"),
    ("self_device_us", "self_device_time_total"),
    ("device_total_us", "device_time_total"),
]
MEMORY = [
    ("cpu_mem", "cpu_memory_usage"),
    ("self_cpu_mem", "self_cpu_memory_usage"),
    ("device_mem", "device_memory_usage"),
    ("self_device_mem", "self_device_memory_usage"),
]


def torch_table(prof, by_shape: bool = False, python_frames: bool = False):
    """torch's own rows for the table asked for: torch's intended one (no frames), or frames as rows."""
    events = prof.profiler.function_events
    if python_frames:
        if HIDES_FRAMES:
            return prof.key_averages(group_by_input_shape=by_shape, include_python_functions=True)
        return prof.key_averages(group_by_input_shape=by_shape)
    if any(getattr(e, "is_python_function", False) for e in events):
        return frameless(events).key_averages(group_by_input_shapes=by_shape)
    return prof.key_averages(group_by_input_shape=by_shape)


def assert_same_table(a: Results, theirs, by_shape: bool = False, python_frames: bool = False) -> None:
    """Same rows (name, side, shapes), same calls, memory to the byte; each time torch's own float, bit for bit, in a
    run with no device (the file's clock is torch's: averages and the footer too), else within the file's rounding
    (CUDA times are converted between clocks before they are written)."""
    ours = a.op_table(by_shape, python_frames)
    spans = spans_per_row(a, ours)
    got = {(r.name, r.is_device, r.input_shapes): r for r in ours.rows}
    want = {
        (e.key, str(e.device_type) != "DeviceType.CPU", str(e.input_shapes) if by_shape else None): e for e in theirs
    }
    assert set(got) == set(want)
    exact = not any(r.is_device for r in ours.rows)
    for key, e in want.items():
        r = got[key]
        assert r.count == e.count, key
        for mine, theirs_name in TIMES:
            if exact:
                assert getattr(r, mine) == getattr(e, theirs_name), (
                    key,
                    mine,
                    getattr(r, mine),
                    getattr(e, theirs_name),
                )
            else:
                assert_close(getattr(r, mine), getattr(e, theirs_name), spans[key], (key, mine))
        if exact:
            assert (r.cpu_avg_us, r.device_avg_us) == (e.cpu_time, e.device_time), key
        for mine, theirs_name in MEMORY:
            assert getattr(r, mine) == getattr(e, theirs_name), (key, mine)
    if exact:
        assert ours.self_cpu_total_us == theirs.self_cpu_time_total
    else:
        assert_close(ours.self_cpu_total_us, theirs.self_cpu_time_total, sum(spans.values()), "Self CPU time total")


def _run(tmp_path, prof_kwargs: dict, step, steps: int = 5, name: str = "run.json"):
    from torch.profiler import ProfilerActivity, profile, schedule

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if prof_kwargs.pop("cuda", False) else [])
    sched = prof_kwargs.pop("schedule", schedule(wait=1, warmup=1, active=3, repeat=1))
    with profile(activities=acts, schedule=sched, **prof_kwargs) as prof:
        for k in range(steps):
            step(k)
            prof.step()
    path = tmp_path / name
    prof.export_chrome_trace(str(path))
    return prof, Results(load_trace(path, use_cache=False))


def _matmul_add_and_backward(device: str = "cpu"):
    from torch.profiler import record_function

    x, w, b = (torch.randn(64, 64, device=device) for _ in range(3))
    layer = torch.nn.Linear(32, 64, device=device)

    def step(k):
        with record_function("matmul_add"):
            torch.add(torch.matmul(x, w), b)
            layer(torch.randn(8, 32, device=device)).sum().backward()  # an autograd thread too

    return step


@pytest.mark.parametrize("with_stack", [False, True])
@pytest.mark.parametrize("by_shape", [False, True])
def test_rows_and_footer_match_key_averages(tmp_path, with_stack, by_shape):
    kwargs = {"record_shapes": True, "with_stack": with_stack, "profile_memory": True}
    prof, a = _run(tmp_path, kwargs, _matmul_add_and_backward())
    assert_same_table(a, torch_table(prof, by_shape), by_shape)
    assert "ProfilerStep*" in {r.name for r in a.ops.rows}
    if with_stack and LISTS_FRAMES:  # this torch lists the frames: --python-frames is its table
        assert_same_table(a, torch_table(prof, by_shape, python_frames=True), by_shape, python_frames=True)
        assert a.op_table(by_shape, True).has_python and not a.op_table(by_shape).has_python


@pytest.mark.skipif(not (LISTS_FRAMES and HIDES_FRAMES), reason="torch 2.14+ hides frame rows in its own way")
def test_torch_2_14s_default_table_hides_the_frames_but_not_their_time(tmp_path):
    """torch 2.14's key_averages(): our default rows and calls, CPU totals the same; the ops above frames differ."""
    prof, a = _run(tmp_path, {"with_stack": True}, _matmul_add_and_backward())
    theirs = {e.key: e for e in prof.key_averages() if str(e.device_type) == "DeviceType.CPU"}
    ours = {r.name: r for r in a.ops.rows if not r.is_device}
    assert set(theirs) == set(ours)
    assert all(ours[k].count == e.count for k, e in theirs.items())
    assert theirs["matmul_add"].self_cpu_time_total < ours["matmul_add"].self_cpu_us


def test_an_event_open_when_the_window_closes(tmp_path):
    """Left out of torch's intended table (2.11 dropped it); with --python-frames, 2.13's async row."""
    from torch.profiler import record_function

    x = torch.randn(32, 32)
    opened = []

    def step(k):
        with record_function("matmul_add"):
            torch.add(x @ x, x)
            if k == 3:
                opened.append(torch.ops.profiler._record_function_enter_new("never_ends", None))
            torch.relu(x)

    prof, a = _run(tmp_path, {}, step)
    assert a.ops.open_events == 1 and "never_ends" not in {r.name for r in a.ops.rows}
    events = [e for e in prof.profiler.function_events if e.name != "never_ends"]
    reference = frameless(torch.autograd.profiler_util.EventList(events, use_device=None)).key_averages()
    assert_same_table(a, reference)
    if LISTS_FRAMES:
        assert_same_table(a, torch_table(prof, python_frames=True), python_frames=True)


@pytest.mark.skipif(not LISTS_FRAMES, reason="this torch lists no frame rows")
def test_a_frame_around_prof_step_has_torch_s_negative_self_time(tmp_path):
    """A training step in a function that calls prof.step(): its frame and the ProfilerStep overlap in part, and so do
    a record_function block and its __enter__/__exit__ frames. torch nests by time alone, so such spans are siblings
    under the frame above, which subtracts both: torch 2.13 prints a negative self CPU there, and so do we."""
    from torch.profiler import ProfilerActivity, profile, record_function, schedule

    x = torch.randn(64, 64)

    def train_step(prof):
        with record_function("block"):
            (x @ x + 1).sum()
        prof.step()

    def train(prof):
        for _ in range(5):
            train_step(prof)

    sched = schedule(wait=1, warmup=1, active=2, repeat=1)
    with profile(activities=[ProfilerActivity.CPU], with_stack=True, schedule=sched) as prof:
        train(prof)
    path = tmp_path / "run.json"
    prof.export_chrome_trace(str(path))
    a = Results(load_trace(path, use_cache=False))
    theirs = torch_table(prof, python_frames=True)
    assert_same_table(a, theirs, python_frames=True)
    negative = {e.key for e in theirs if e.self_cpu_time_total < 0}
    assert any("train" in k for k in negative)
    t = a.op_table(python_frames=True)
    assert {r.name for r in t.rows if r.self_cpu_us < 0} == negative
    assert "A negative Self CPU is torch's own" in O.footers(t)[-1] and not O.negative_note(a.ops)


def _world_of_one(tmp_path, backend: str):
    import torch.distributed as dist

    dist.init_process_group(backend, init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    return dist


@pytest.mark.parametrize("with_stack", [False, True])
def test_a_gloo_world_of_one(tmp_path, with_stack):
    """gloo's collectives' annotations are async in torch: self CPU 0, their time in the c10d op's."""
    from torch.profiler import record_function

    dist = _world_of_one(tmp_path, "gloo")
    try:
        y = torch.randn(128, 128)

        def step(k):
            with record_function("step_work"):
                dist.all_reduce(y @ y)
                dist.broadcast(y, 0)
                dist.all_reduce(y, async_op=True).wait()

        prof, a = _run(tmp_path, {"record_shapes": True, "with_stack": with_stack}, step)
    finally:
        dist.destroy_process_group()
    assert_same_table(a, torch_table(prof))
    gloo = [r for r in a.ops.rows if r.name.startswith("gloo:")]
    assert gloo and all(r.self_cpu_us == 0 < r.cpu_total_us for r in gloo)
    if with_stack and LISTS_FRAMES:
        assert_same_table(a, torch_table(prof, python_frames=True), python_frames=True)


def _needs_a_compiler():
    if shutil.which("gcc") is None and shutil.which("cc") is None:
        pytest.skip("Inductor needs a C compiler on the CPU; none found")


def _compiled_step(device: str = "cpu"):
    from torch.profiler import record_function

    def f(x, w, b):
        return torch.add(torch.matmul(x, w), b)

    compiled = torch.compile(f)
    x, w, b = (torch.randn(32, 32, device=device) for _ in range(3))

    def step(k):
        with record_function("matmul_add"):
            compiled(x, w, b)

    return step


@pytest.mark.slow
def test_a_compiled_step_inside_the_window(tmp_path):
    """The window holds torch.compile's compiling step (Dynamo's and Inductor's annotations, the compile threads)."""
    from torch.profiler import schedule

    _needs_a_compiler()
    torch._dynamo.reset()
    sched = schedule(wait=0, warmup=0, active=3, repeat=1)
    prof, a = _run(tmp_path, {"record_shapes": True, "schedule": sched}, _compiled_step(), steps=4)
    assert any("dynamo_timed" in r.name for r in a.ops.rows)
    for by_shape in (False, True):
        assert_same_table(a, torch_table(prof, by_shape), by_shape)


@CUDA
def test_cuda_columns_and_launch_links_match_key_averages(tmp_path):
    from torch.profiler import record_function

    x, w, b = (torch.randn(256, 256, device="cuda") for _ in range(3))
    layer = torch.nn.Linear(256, 256, device="cuda")

    def step(k):
        with record_function("matmul_add"):
            torch.add(torch.matmul(x, w), b)
            layer(x).sum()

    prof, a = _run(tmp_path, {"cuda": True}, step)
    assert_same_table(a, torch_table(prof))
    assert a.ops.self_device_total_us > 0 and a.ops.device_link == "External id"
    kernels = [i for i in range(a.trace.n) if int(a.trace.x.cat[i]) == 4]
    assert kernels and all(a.links.launcher[k] >= 0 for k in kernels)
    assert a.links.flows_agree == a.links.flows_paired > 0


@CUDA
@pytest.mark.parametrize("by_shape", [False, True])
def test_a_with_stack_capture_on_cuda(tmp_path, by_shape):
    prof, a = _run(
        tmp_path, {"cuda": True, "with_stack": True, "record_shapes": True}, _matmul_add_and_backward("cuda")
    )
    assert_same_table(a, torch_table(prof, by_shape), by_shape)
    if LISTS_FRAMES:
        assert_same_table(a, torch_table(prof, by_shape, python_frames=True), by_shape, python_frames=True)


@CUDA
def test_an_nccl_world_of_one_on_cuda(tmp_path):
    """NCCL's annotations (nccl:all_reduce, nccl:broadcast) are async: their time stays in record_param_comms."""
    from torch.profiler import record_function

    dist = _world_of_one(tmp_path, "nccl")
    try:
        y = torch.randn(1024, 1024, device="cuda")

        def step(k):
            with record_function("step_work"):
                dist.all_reduce(y @ y)
                dist.broadcast(y, 0)

        prof, a = _run(tmp_path, {"cuda": True, "record_shapes": True}, step)
    finally:
        dist.destroy_process_group()
    assert_same_table(a, torch_table(prof))
    nccl = [r for r in a.ops.rows if r.name.startswith("nccl:") and not r.is_device]
    assert nccl and all(r.self_cpu_us == 0 for r in nccl)


@CUDA
def test_a_compiled_step_inside_the_window_on_cuda(tmp_path):
    from torch.profiler import schedule

    torch._dynamo.reset()
    sched = schedule(wait=0, warmup=0, active=3, repeat=1)
    prof, a = _run(tmp_path, {"cuda": True, "record_shapes": True, "schedule": sched}, _compiled_step("cuda"), steps=4)
    for by_shape in (False, True):
        assert_same_table(a, torch_table(prof, by_shape), by_shape)


def test_a_time_is_printed_as_torch_prints_it():
    """torch's _format_time: 3 decimals in us, ms or s by the value's size, and a negative one in us whatever its size
    (torch compares without abs): an ops cell reads as torch's, -1234.500us where tracetui printed -1.234ms."""
    from tui.model.analyses.ops import OpRow, OpsTable

    row = OpRow("aten::mm", 1, 0.0, 0.0, 0.0, 0.0, False, False)
    table = OpsTable([row], 0.0, 0.0)
    for us in (0.0, 0.0005, 122.6105, 999.9996, 1000.0, 2268.5, 1234567.0, -0.5, -1234.5, -2e6):
        row.self_cpu_us = us
        cell = next(c for c in O.columns(table, grouped=False) if c.header == "Self CPU").text(row, table, O.NAME_WIDTH)
        assert cell == torch.autograd.profiler_util._format_time(us), us
