"""The ops table agrees with torch's own key_averages() on the same run."""

from __future__ import annotations

import pytest

from tui.model import load_trace
from tui.model.analyses.results import Results

torch = pytest.importorskip("torch", reason="needs torch to capture a run")

CPU_FIELDS = [
    ("self_cpu_us", "self_cpu_time_total"),
    ("cpu_total_us", "cpu_time_total"),
    ("cpu_mem", "cpu_memory_usage"),
    ("self_cpu_mem", "self_cpu_memory_usage"),
]
DEVICE_FIELDS = [
    ("self_device_us", "self_device_time_total"),
    ("device_total_us", "device_time_total"),
    ("device_mem", "device_memory_usage"),
    ("self_device_mem", "self_device_memory_usage"),
]


def assert_rows_match(ours: dict, theirs: dict, fields: list[tuple[str, str]]) -> None:
    """Same keys, same counts, and each (our field, torch's field) equal to the nanosecond."""
    assert set(ours) == set(theirs)
    for key, e in theirs.items():
        r = ours[key]
        assert r.count == e.count, key
        for mine, torch_name in fields:
            assert getattr(r, mine) == pytest.approx(getattr(e, torch_name), abs=1e-3), (key, mine)


def _capture(tmp_path, with_stack: bool):
    from torch.profiler import ProfilerActivity, profile, record_function, schedule

    x, w, b = (torch.randn(64, 64) for _ in range(3))
    layer = torch.nn.Linear(32, 64)
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
        record_shapes=True,
        with_stack=with_stack,
        profile_memory=True,
    ) as prof:
        for _ in range(5):
            with record_function("matmul_add"):
                torch.add(torch.matmul(x, w), b)
                layer(torch.randn(8, 32)).sum().backward()  # an autograd thread too
            prof.step()
    path = tmp_path / "run.json"
    prof.export_chrome_trace(str(path))
    return prof, path


@pytest.mark.parametrize("with_stack", [False, True])
@pytest.mark.parametrize("by_shape", [False, True])
def test_rows_and_footer_match_key_averages(tmp_path, with_stack, by_shape):
    prof, path = _capture(tmp_path, with_stack)
    theirs = prof.key_averages(group_by_input_shape=by_shape)
    a = Results(load_trace(path, use_cache=False))
    ours = a.ops_by_shape if by_shape else a.ops
    want = {(e.key, str(e.input_shapes) if by_shape else None): e for e in theirs}
    got = {(r.name, r.input_shapes): r for r in ours.rows}
    assert_rows_match(got, want, CPU_FIELDS)
    assert ours.self_cpu_total_us == pytest.approx(theirs.self_cpu_time_total, abs=1e-3)
    assert "ProfilerStep*" in {r.name for r in ours.rows}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none on CI); runs on the GPU machine")
def test_cuda_columns_and_launch_links_match_key_averages(tmp_path):
    from torch.profiler import ProfilerActivity, profile, record_function, schedule

    x, w, b = (torch.randn(256, 256, device="cuda") for _ in range(3))
    layer = torch.nn.Linear(256, 256, device="cuda")
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    with profile(activities=acts, schedule=schedule(wait=1, warmup=1, active=3, repeat=1)) as prof:
        for _ in range(5):
            with record_function("matmul_add"):
                torch.add(torch.matmul(x, w), b)
                layer(x).sum()
            prof.step()
    path = tmp_path / "cuda.json"
    prof.export_chrome_trace(str(path))
    a = Results(load_trace(path, use_cache=False))
    theirs = {(e.key, str(e.device_type)): e for e in prof.key_averages()}
    ours = {(r.name, "DeviceType.CUDA" if r.is_device else "DeviceType.CPU"): r for r in a.ops.rows}
    assert_rows_match(ours, theirs, CPU_FIELDS + DEVICE_FIELDS)
    assert a.ops.self_device_total_us > 0 and a.ops.device_link == "External id"
    kernels = [i for i in range(a.trace.n) if int(a.trace.x.cat[i]) == 4]
    assert kernels and all(a.links.launcher[k] >= 0 for k in kernels)
    assert a.links.flows_agree == a.links.flows_paired > 0
