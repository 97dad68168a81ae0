"""kernels and summary against an independent computation from the raw JSON; verdicts and steps."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from decimal import Decimal

import pytest
from conftest import SAMPLES, raw_events, shared_traces
from lost_records import lost_records

from tui.model import load_trace
from tui.model.analyses.explain.readings import readings
from tui.model.analyses.explain.rules import explain
from tui.model.analyses.results import Results

BUSY = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
ALL = sorted(SAMPLES.glob("*.json.gz")) + shared_traces()


def independent(path):
    """Kernel count/total per name and GPU busy per device, with the stdlib and exact decimals."""
    per_name: dict[str, list] = defaultdict(lambda: [0, Decimal(0)])
    intervals: dict[object, list[tuple[Decimal, Decimal]]] = defaultdict(list)
    for e in raw_events(path, exact=True):
        cat = str(e.get("cat", "")).lower()
        if e.get("ph") != "X" or cat not in BUSY:
            continue
        dur = max(Decimal(e.get("dur", 0)), Decimal(0))
        if cat == "kernel":
            per_name[e["name"]][0] += 1
            per_name[e["name"]][1] += dur
        intervals[e.get("pid")].append((Decimal(e["ts"]), Decimal(e["ts"]) + dur))
    busy = Decimal(0)
    for spans in intervals.values():
        end = None
        for s, t in sorted(spans):
            if end is None or s > end:
                busy += t - s
                end = t
            elif t > end:
                busy += t - end
                end = t
    return {k: (n, float(t)) for k, (n, t) in per_name.items()}, float(busy)


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.parent.name if p.parent.name != "sample_traces" else p.name)
def test_kernels_and_gpu_busy_match_the_raw_json(path):
    a = Results(load_trace(path, use_cache=False))
    per_name, busy = independent(path)
    mine = {r.name: r for r in a.kernels if r.kind == "kernel"}
    assert set(mine) == set(per_name)
    for name, (count, total) in per_name.items():
        assert mine[name].count == count
        assert mine[name].total_us == pytest.approx(total, abs=1e-3 * count + 1e-6)
    assert a.summary.gpu_busy_us == pytest.approx(busy, rel=1e-6, abs=0.01)


def test_every_shared_trace_loads_without_skipping():
    paths = shared_traces()
    if not paths:
        pytest.skip("../shared/traces is not here")
    for path in paths:
        t = load_trace(path, use_cache=False)
        assert t.n > 0 and t.report.skipped == 0, path


def test_a_busy_gpu_is_not_the_verdict_the_path_is():
    """84% busy (the old rule said compute-bound), but the typical step's path runs through collectives (38%), CPU
    work (35%) and copies: no kind of work holds half of it."""
    s = Results(load_trace(SAMPLES / "a100-train-control.json.gz")).summary
    assert s.verdict == "mixed" and s.bound_by == "gpu_communication_bound"
    assert 0.8 < s.gpu_utilization < 0.9 and "GPU busy 84%" in s.reason
    assert [st.name for st in s.steps] == [f"ProfilerStep#{i}" for i in range(1009, 1015)]


def test_tiny_matmul_add_cpu_capture_is_told_its_ops_are_short():
    s = Results(load_trace(SAMPLES / "cpu" / "matmul_add_64_cold_eager.json.gz")).summary
    assert s.cpu_only and not s.device_records_missing and s.gpu_busy_us == 0
    assert s.verdict == "cpu-in-ops" and s.cpu_op_avg_us < 20
    reading = readings(s)[0]
    assert (
        reading.startswith("No GPU activity in this trace: it ran on the CPU only.") and "fixed per-op costs" in reading
    )


def test_large_matmul_add_cpu_capture_spends_its_time_in_mm():
    s = Results(load_trace(SAMPLES / "cpu" / "matmul_add_512_warm_eager.json.gz")).summary
    assert s.cpu_only and s.verdict == "cpu-in-ops"
    assert [name for name, _ in s.cpu_top_self[:2]] == ["aten::mm", "aten::add"]
    assert "their own work is the cost" in readings(s)[0] and "aten::mm 4.92 ms" in readings(s)[0]


def test_cpu_time_in_ops_is_the_union_of_the_ops_on_the_cpu():
    a = Results(load_trace(SAMPLES / "cpu" / "matmul_add_64_warm_eager.json.gz"))
    ops = [e for e in raw_events(SAMPLES / "cpu" / "matmul_add_64_warm_eager.json.gz") if e.get("cat") == "cpu_op"]
    covered, end = 0.0, float("-inf")
    for e in sorted(ops, key=lambda e: e["ts"]):  # a sweep over the raw events, overlaps once
        start, stop = max(e["ts"], end), e["ts"] + e["dur"]
        covered, end = covered + max(stop - start, 0), max(end, stop)
    s = a.summary
    assert s.cpu_in_ops_us == pytest.approx(covered, abs=0.01)
    assert s.verdict == ("cpu-in-ops" if covered >= 0.5 * s.wall_us else "cpu-between-ops")


@pytest.mark.parametrize("path", sorted((SAMPLES / "cpu").glob("*.json.gz")) + [SAMPLES / "cpu-only-gloo.json.gz"])
def test_cpu_only_traces_are_never_called_gpu_bound(path):
    s = Results(load_trace(path)).summary
    gloo = path.name == "cpu-only-gloo.json.gz"  # its step waits on other ranks in gloo's all-reduces
    assert s.cpu_only and s.verdict in (("communication-bound",) if gloo else ("cpu-in-ops", "cpu-between-ops"))
    assert not s.device_records_missing and s.cpu_top_self
    assert "GPU" not in s.reason and "CUDA" not in " ".join(readings(s))


def test_lost_device_records_are_not_called_cpu_only(tmp_path):
    full = Results(load_trace(SAMPLES / "h100-bert-small.json.gz")).summary
    s = Results(load_trace(lost_records(tmp_path))).summary
    assert not s.cpu_only and s.device_records_missing and s.verdict == "device-records-missing"
    assert s.launches == full.launches > 0 and s.kernels == 0 and s.ac2g_flows > 0
    assert readings(s)[0].startswith("Device records missing: the trace made 61 launches")
    assert "ProfilerActivity.CUDA" in s.reason and not any("GPU work" in r for r in readings(s))
    assert not full.device_records_missing


def test_a_file_cut_before_its_device_records_blames_the_cut_not_the_capture(tmp_path):
    """torch writes the GPU records after the CPU ones: a file cut there has launches and no kernels, and the
    verdict and explain say the cut is why (they gave the capture's causes: CUPTI, ProfilerActivity.CUDA)."""
    doc = json.loads(gzip.decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes()))
    device = ("kernel", "gpu_memcpy", "gpu_memset")
    events = [e for e in doc["traceEvents"] if e.get("cat") not in device]
    events += [e for e in doc["traceEvents"] if e.get("cat") in device]  # as torch orders them
    first_kernel = next(e for e in events if e.get("cat") in device)
    text = json.dumps({**doc, "traceEvents": events})
    cut = tmp_path / "cut.json"
    cut.write_text(text[: text.index(json.dumps(first_kernel)) + 40])  # inside the first device record
    a = Results(load_trace(cut))
    s = a.summary
    assert s.cut_short and s.device_records_missing and s.verdict == "device-records-missing"
    assert "The file is cut short" in s.reason and "ProfilerActivity.CUDA" not in s.reason
    found = [f for f in explain(a, s) if f.rule == "records-missing"]
    assert found and found[0].parts == ["records-missing-cut"]
    whole = Results(load_trace(lost_records(tmp_path))).summary  # not cut: the capture's causes
    assert "ProfilerActivity.CUDA" in whole.reason and "cut short" not in whole.reason


def test_lost_device_records_in_summary_json_and_text(tmp_path, capsys):
    from tui.cli import main

    path = lost_records(tmp_path)
    assert main(["summary", str(path), "--format", "json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["cpu_only"] is False and doc["device_records_missing"] is True and doc["launches"] == 61
    assert main(["summary", str(path), "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "none recorded (61 launches" in text and "GPU busy" not in text and "Verdict" in text


def test_kernel_launch_latency_is_kernel_start_minus_launch_start():
    a = Results(load_trace(SAMPLES / "b300-moe-small.json.gz"))
    x = a.trace.x
    row = a.kernels[0]
    g = row.example
    r = a.links.launcher[g]
    assert r >= 0 and a.trace.names[x.name[r]].startswith(("cuLaunch", "cudaLaunch"))
    assert row.latency_median_us is not None and 0 < row.latency_median_us <= row.latency_p95_us
    assert row.pct_gpu == pytest.approx(100 * row.total_us / sum(k.total_us for k in a.kernels))


def test_cpu_only_trace_has_no_kernels_and_says_so():
    a = Results(load_trace(SAMPLES / "cpu-only-gloo.json.gz"))
    assert a.kernels == [] and a.summary.cpu_only


@pytest.mark.parametrize(
    ("name", "link"),
    [
        ("h100-bert-small.json.gz", "External id"),
        ("b300-moe-small.json.gz", "External id"),
        ("mi250-rocm-train.json.gz", "External id"),
        ("a100-train-control.json.gz", "launch call"),
        ("v100-cudagraph-test.json.gz", "launch call"),
    ],
)
def test_op_cuda_time_agrees_with_the_gpu_work_launched_under_it(name, link):
    """Two routes to an op's CUDA total must agree: External ids (torch's) and launch links + nesting.

    2022-era traces write the correlation where the op's External id belongs; tracetui detects
    that and attributes through the launching call instead. One known difference is torch's own: a
    CUPTI overhead event (cat overhead: `Activity Buffer Request`) has correlation 0, so torch gives it
    its parent's id (collection.cpp, kinetoEventCorrelationID) and appends the op's kernels to it as
    well (profiler.py, _parse_kineto_results: device_corr_map by id); the op's CUDA total then counts
    them twice. tracetui's table does as torch does, so the total is the launched work plus that.
    """
    from tui.model.analyses.calltree import CallTree

    a = Results(load_trace(SAMPLES / name))
    assert a.ops.device_link == link
    tree = CallTree(a)
    for op in ("aten::mm", "aten::addmm", "aten::linear", "aten::layer_norm", "aten::bmm"):
        rows = [r for r in a.ops.rows if r.name == op and not r.is_device]
        if not rows:
            continue
        idx = [i for i in range(a.trace.n) if a.trace.name_of(i) == op]
        again = sum(r.device_total_us for r in a.ops.rows if r.name in _OVERHEAD_UNDER.get((name, op), ()))
        assert rows[0].device_total_us == pytest.approx(tree.gpu_ns[idx].sum() / 1000 + again, abs=0.01), op
        assert rows[0].device_total_us > 0


# The overhead events that ran inside an op of a sample, read from the raw events: the only one is inside an
# aten::mm (and its aten::linear) of b300-moe-small, 3.488 us of the mm's kernels credited to it again.
_OVERHEAD_UNDER = {("b300-moe-small.json.gz", op): ("Activity Buffer Request",) for op in ("aten::mm", "aten::linear")}


def _overview_text(path) -> str:
    from rich.console import Console

    from tui.widgets.overview import overview_renderable

    console = Console(width=160, record=True, file=open("/dev/null", "w"))  # noqa: SIM115 - rich closes nothing
    console.print(overview_renderable(Results(load_trace(path, use_cache=False))))
    return console.export_text()


def test_overview_names_lost_device_records_and_cpu_only_runs(tmp_path):
    text = _overview_text(lost_records(tmp_path))
    assert "Verdict: device-records-missing" in text and "Device records missing: the trace made 61 launches" in text
    assert "none recorded: the device records are missing" in text and "GPU busy" not in text
    text = _overview_text(SAMPLES / "cpu" / "mlp_fwd.json.gz")
    assert "No GPU activity in this trace: it ran on the CPU only." in text
    assert "none. No GPU activity in this trace: it ran on the CPU only." in text
    assert "compute-bound" not in text and "GPU busy" not in text


def test_what_gpu_views_say_without_gpu_work(tmp_path):
    from tui.tables.summary import no_gpu_text

    cpu = Results(load_trace(SAMPLES / "cpu-only-gloo.json.gz")).summary
    assert no_gpu_text(cpu) == "No GPU activity in this trace: it ran on the CPU only."
    lost = Results(load_trace(lost_records(tmp_path))).summary
    assert no_gpu_text(lost) == "No GPU activity recorded: 61 launches, but the device records are missing."
    assert no_gpu_text(Results(load_trace(SAMPLES / "h100-bert-small.json.gz")).summary) is None


def _copies_only(tmp_path, n: int = 30):
    """A GPU that only copies: n peer-to-peer copies of 1 MB, 10 us each, back to back, each launched by a
    cudaMemcpyPeerAsync."""
    from conftest import X, write_trace

    events = [X("aten::copy_", 0, 10 * n + 20, External_id=1)]
    for k in range(n):
        corr = 100 + k
        events.append(X("cudaMemcpyPeerAsync", 1 + k * 0.1, 0.1, cat="cuda_runtime", External_id=1, correlation=corr))
        events.append(
            X(
                "Memcpy PtoP (Device -> Device)",
                10 + 10 * k,
                10,
                cat="gpu_memcpy",
                pid=0,
                tid=7,
                External_id=1,
                correlation=corr,
                bytes=1_000_000,
            )
        )
    return write_trace(tmp_path / "p2p.json", events)


def test_a_gpu_that_only_copies_is_copy_bound_with_the_copies_kinds_and_bandwidth(tmp_path):
    s = Results(load_trace(_copies_only(tmp_path), use_cache=False)).summary
    assert s.verdict == "copy-bound" and s.kernels == 0
    assert [(c.kind, c.count, c.bytes) for c in s.work.copies] == [("P2P", 30, 30_000_000)]
    assert s.work.copies[0].gbps == pytest.approx(100.0)  # 1 MB per 10 us
    assert "30 copies (P2P ×30 at 100.0 GB/s, 300.0 us), no kernels" in s.reason
    assert "0 kernels" not in s.reason and "averaging 0.0" not in s.reason
    assert readings(s)[0].startswith(
        "GPU busy 94% of the window, mostly copying (P2P ×30 at 100.0 GB/s)"
    )  # 300 of 320 us


def test_copies_beside_most_kernel_time_leave_the_verdict_to_the_kernels():
    s = Results(load_trace(SAMPLES / "h100-bert-small.json.gz")).summary
    assert not s.work.mostly_copies and s.work.copy_count == 1 and s.work.copies[0].bytes == -1  # bytes not read
    assert "1 copy (D2H ×1, 2.2 us)" in s.reason


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.parent.name if p.parent.name != "sample_traces" else p.name)
def test_no_verdict_or_reason_cites_zero_kernels_averaging_zero(path):
    import re

    s = Results(load_trace(path)).summary
    text = " ".join([s.reason, *readings(s)])
    assert not re.search(r"\b0 kernels|averaging 0\.0 us", text), text
