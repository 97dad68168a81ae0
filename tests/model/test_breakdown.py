"""The temporal and idle-time breakdowns: each class on a trace built for it, the step window, the command in every
format, and HTA's own figures on the whole-microsecond samples (recorded by tests/hta_analyses.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import device_traces as D
import pytest
from conftest import SAMPLES, raw_events, write_trace

from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.breakdown import WindowMissing, breakdown
from tui.model.analyses.results import Results

HTA = json.loads((Path(__file__).parents[1] / "data" / "hta_analyses.json").read_text())["traces"]
TWO_RANKS = SAMPLES / "hta-2rank"  # the shared hta-2023-trace-filter-2rank: whole microseconds
DDP = SAMPLES / "a100-ddp-nccl.json.gz"  # the shared hta-2024-05-a100-ddp-nccl: nanoseconds
US = 1000


def report(path: Path, step: int | None = None):
    a = Results(load_trace(path, use_cache=False))
    return breakdown(a.trace, a.links.launcher, a.graph_owner, step)


def by_lane(rows) -> dict:
    return {r.lane: r for r in rows}


def test_a_stream_waiting_on_another_stream(tmp_path):
    """GIVEN C queued on stream 7 behind B on stream 24 WHEN broken down THEN its 93 us gap waited on stream 24."""
    r = report(D.waits_on_stream(tmp_path))
    idle = by_lane(r.idle)["GPU 0 stream 7"]
    assert idle.by_cause == [0, 93 * US, 0, 0] and idle.gaps == [0, 1, 0, 0]
    assert idle.waited_on == {"GPU 0 stream 24": 93 * US}
    assert by_lane(r.idle)["GPU 0 stream 24"].idle_ns == 0
    (device,) = r.devices
    assert (device.span_ns, device.alone("compute"), device.idle_ns) == (108 * US, 105 * US, 3 * US)


def test_a_host_starved_stream_waits_on_the_host(tmp_path):
    r = report(D.host_starved(tmp_path))
    (idle,) = r.idle
    assert idle.by_cause == [60 * US, 0, 0, 0] and idle.gaps == [2, 0, 0, 0]
    (device,) = r.devices
    assert (device.span_ns, device.busy_ns, device.idle_ns) == (90 * US, 30 * US, 60 * US)


def test_back_to_back_kernels_wait_between_kernels_and_a_late_queued_one_is_other(tmp_path):
    r = report(D.back_to_back(tmp_path))
    (idle,) = r.idle
    assert idle.by_cause == [0, 0, 6 * US, 50 * US] and idle.gaps == [0, 0, 3, 1]
    assert idle.activities == 5 and idle.span_ns == 106 * US


def test_copies_beside_compute_are_counted_once_and_named(tmp_path):
    """GIVEN a copy overlapping a kernel WHEN broken down THEN each moment counts once and the overlap is named."""
    (device,) = report(D.copies_and_compute(tmp_path)).devices
    assert device.span_ns == 221 * US
    assert (device.alone("copies"), device.alone("compute"), device.idle_ns) == (61 * US, 50 * US, 60 * US)
    assert device.overlaps == {"compute+copies": 50 * US}
    assert device.alone("copies") + device.alone("compute") + device.overlap_ns + device.idle_ns == device.span_ns
    assert device.total("compute") == 100 * US and device.non_compute_ns == 61 * US  # HTA's two figures


def test_a_collective_overlapping_compute(tmp_path):
    r = report(D.collective_over_compute(tmp_path))
    (device,) = r.devices
    assert device.by_mask[:4] == [0, 50 * US, 50 * US, 50 * US]  # idle, compute, communication, both
    assert device.overlaps == {"compute+communication": 50 * US}
    streams = by_lane(r.streams)
    assert streams["GPU 0 stream 24"].alone("communication") == 100 * US
    assert streams["GPU 0 stream 24"].idle_ns == 50 * US  # the device's window, [0, 150]


def test_a_step_is_its_start_until_its_device_work_ended(tmp_path):
    path = D.two_steps(tmp_path)
    (second,) = report(path, step=2).devices
    assert (second.span_ns, second.alone("compute"), second.idle_ns) == (150 * US, 90 * US, 60 * US)
    assert report(path, step=2).idle[0].by_cause == [10 * US, 0, 0, 0]
    (first,) = report(path, step=1).devices
    assert (first.span_ns, first.alone("compute")) == (100 * US, 40 * US)
    with pytest.raises(WindowMissing, match=r"no ProfilerStep#7 in the trace \(its steps are 1-2\)"):
        report(path, step=7)


def test_a_cpu_only_trace_has_nothing_to_break_down(tmp_path, capsys):
    path = write_trace(tmp_path / "cpu.json", [D.X("aten::mm", 0, 10)])
    assert report(path).devices == []
    assert main(["breakdown", str(path)]) == 0
    assert "No device activity" in capsys.readouterr().out


def test_the_command_in_every_format(tmp_path, capsys):
    path = D.copies_and_compute(tmp_path)
    assert main(["breakdown", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Temporal breakdown of the whole trace, per device:" in text
    assert "Overlap on GPU 0: compute+copies 50.000us." in text and "Idle time per stream" in text
    assert main(["breakdown", str(path), "--format", "json", "--by", "stream"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["window"] == "the whole trace" and doc["by"] == "stream"
    row = {r["stream"]: r for r in doc["rows"]}["GPU 0 stream 7"]
    assert row["host_wait_us"] == 60.0 and row["gaps_us"] == 60.0 and row["compute_us"] == 100.0  # alone on its stream
    assert main(["breakdown", str(path), "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("rank,device,span_us,compute_us,") and len(lines) == 2
    assert main(["breakdown", str(path), "--format", "md"]) == 0
    assert "| Device | Span |" in capsys.readouterr().out


def test_a_step_the_trace_lacks_is_one_line_and_exit_2(tmp_path, capsys):
    path = D.two_steps(tmp_path)
    before = path.read_bytes()
    assert main(["breakdown", str(path), "--step", "9"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tracetui: error: ") and "no ProfilerStep#9" in err and err.count("\n") == 1
    assert path.read_bytes() == before


# ---- against HTA's own figures -------------------------------------------------------------------------------


def hta_temporal(key: str) -> dict[int, dict[str, float]]:
    return {int(r): v for r, v in HTA[key]["temporal"].items()}


def ours_temporal(path: Path) -> dict[int, dict[str, float]]:
    return {
        d.rank: {
            "idle_time": d.idle_ns / US,
            "compute_time": d.total("compute") / US,
            "non_compute_time": d.non_compute_ns / US,
            "kernel_time": d.span_ns / US,
        }
        for d in report(path).devices
    }


def hta_idle(key: str) -> dict[tuple[int, str], dict[str, float]]:
    return {(int(r), f"stream {s}"): v for r, streams in HTA[key]["idle"].items() for s, v in streams.items()}


def ours_idle(path: Path) -> dict[tuple[int, str], dict[str, float]]:
    return {
        (i.rank, i.lane.split(" ", 2)[2]): {
            "host_wait": i.cause("host") / US,
            "kernel_wait": i.cause("kernel") / US,
            "other": (i.cause("stream") + i.cause("other")) / US,
        }
        for i in report(path).idle
    }


def without_zeros(found: dict) -> dict:
    return {k: {c: v for c, v in d.items() if v} for k, d in found.items()}


def test_the_two_rank_job_equals_htas_temporal_and_idle_breakdowns():
    """Whole-microsecond traces: every figure equals HTA 0.5's, rank by rank and stream by stream."""
    assert ours_temporal(TWO_RANKS) == hta_temporal("hta-2023-trace-filter-2rank")
    assert without_zeros(ours_idle(TWO_RANKS)) == without_zeros(hta_idle("hta-2023-trace-filter-2rank"))


def hta_rounded(src: Path, dst: Path) -> Path:
    """The trace as HTA reads it: each start rounded up to a whole microsecond, each end down."""
    events = raw_events(src)
    for e in events:
        if e.get("ph") == "X" and isinstance(e.get("ts"), int | float):
            ts, end = e["ts"], e["ts"] + e.get("dur", 0)
            e["ts"], e["dur"] = math.ceil(ts), math.floor(end) - math.ceil(ts)
    return write_trace(dst, events)


def test_the_ddp_trace_read_as_hta_reads_it_equals_htas_figures(tmp_path):
    """A nanosecond trace cut to whole microseconds as HTA cuts it: the same figures as HTA's."""
    rounded = hta_rounded(DDP, tmp_path / "ddp_rounded.json")
    key = "hta-2024-05-a100-ddp-nccl/nccl_data.json.gz"
    assert ours_temporal(rounded) == hta_temporal(key)
    assert without_zeros(ours_idle(rounded)) == without_zeros(hta_idle(key))


def test_the_ddp_trace_in_nanoseconds_differs_from_hta_by_less_than_what_its_rounding_drops():
    """Kept in nanoseconds, compute and idle differ from HTA's by less than the device time its rounding drops."""
    dropped = 0.0
    for e in raw_events(DDP):
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            dropped += e["dur"] - (math.floor(e["ts"] + e["dur"]) - math.ceil(e["ts"]))
    ours, hta = ours_temporal(DDP)[0], hta_temporal("hta-2024-05-a100-ddp-nccl/nccl_data.json.gz")[0]
    assert 3700 < dropped < 3800
    for figure in ("idle_time", "compute_time", "non_compute_time"):
        assert 0 < abs(ours[figure] - hta[figure]) < dropped, figure


def test_a_step_of_a_job_is_cut_on_every_rank():
    """ProfilerStep#551 on both ranks of the 2-rank sample: each device's window is its rank's step (its CPU span
    here: the device work ended inside it), and the parts still add up to it."""
    r = report(TWO_RANKS, step=551)
    assert r.window == "ProfilerStep#551" and r.left_out == []
    assert [(d.rank, d.span_ns) for d in r.devices] == [(0, 607_312_000), (1, 607_904_000)]
    for d in r.devices:
        assert sum(d.by_mask) == d.span_ns
