"""`tracetui export`: every original event round-trips, the counters and the critical path's lane are added in the
file's own clock, the export opens in tracetui again with the same figures, and the input is never written."""

from __future__ import annotations

import gzip
import json
import os
from decimal import Decimal
from pathlib import Path

import device_traces as D
import pytest
from conftest import SAMPLES, raw_events

import tracetui
from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.critical.queue import queue_series
from tui.model.analyses.results import Results
from tui.model.export import LANE_CAT

DDP = SAMPLES / "a100-ddp-nccl.json.gz"  # nanoseconds relative to baseTimeNanoseconds, gzipped
CONTROL = SAMPLES / "a100-train-control.json.gz"  # whole epoch microseconds


def doc_of(path: Path) -> dict:
    opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=Decimal)


def added(out: Path, original: Path) -> list[dict]:
    return doc_of(out)["traceEvents"][len(raw_events(original)) :]


@pytest.fixture(scope="module")
def ddp_export(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "ddp.json"
    assert main(["export", str(DDP), "-o", str(out)]) == 0
    return out


def test_every_original_event_and_key_round_trips(ddp_export):
    """The original events come first, each exactly as it was (decimals compared as written); then the new ones."""
    got, want = doc_of(ddp_export), doc_of(DDP)
    n = len(want["traceEvents"])
    assert got["traceEvents"][:n] == want["traceEvents"] and len(got["traceEvents"]) > n
    assert {k: v for k, v in got.items() if k != "traceEvents"} == {k: v for k, v in want.items() if k != "traceEvents"}


def test_the_counters_and_the_lane_are_in_the_files_clock(ddp_export):
    """Queue samples sit exactly at launch calls' and kernels' starts (ns decimals as written); the lane's slices add
    up to the path's length."""
    new = added(ddp_export, DDP)
    a = Results(load_trace(DDP, use_cache=False))
    queue = [e for e in new if e["ph"] == "C" and e["name"].startswith("Launch queue (")]
    assert len(queue) == sum(len(s.ts) for s in queue_series(a.trace, a.links.launcher))
    starts = {e["ts"] for e in raw_events(DDP, exact=True) if e.get("ph") == "X"}
    assert {e["ts"] for e in queue} <= starts
    assert {e["name"] for e in queue} == {"Launch queue (GPU 0 stream 7)", "Launch queue (GPU 0 stream 40)"}
    lane = [e for e in new if e.get("cat") == LANE_CAT]
    assert len(lane) == len(a.critical.items)
    assert sum(e["dur"] for e in lane) * 1000 == a.critical.length_ns
    assert {e["args"]["bound_by"] for e in lane} == {k for k, v in a.critical.breakdown.items() if v}
    names = [e["args"]["name"] for e in new if e["ph"] == "M"]
    assert names[0] == "tracetui: critical path" and names[1].startswith(
        "critical path of ProfilerStep#4: "
    )  # the typical step
    bandwidth = {e["name"] for e in new if e["ph"] == "C" and "bandwidth" in e["name"]}
    assert bandwidth == {"Copy bandwidth D2D (GB/s)", "Memset bandwidth (GB/s)"}  # the sets apart from the copies


def test_the_export_opens_in_tracetui_with_the_same_figures(ddp_export):
    a = Results(load_trace(DDP, use_cache=False))
    b = Results(load_trace(ddp_export, use_cache=False))
    assert b.trace.report.warning() is None
    for key in ("wall_us", "gpu_busy_us", "kernels", "launches", "verdict", "cpu_self_total_us"):
        assert getattr(b.summary, key) == getattr(a.summary, key), key
    assert b.kernels == a.kernels and b.critical.breakdown == a.critical.breakdown
    assert [f.rule for f in b.findings] == [f.rule for f in a.findings]
    assert any(t.name.startswith("critical path of ProfilerStep#4") for t in b.trace.tracks)
    counters = {b.trace.names[int(k)] for k in b.trace.inst.name[b.trace.inst.counter]}
    assert "Launch queue (GPU 0 stream 7) · queued" in counters or "Launch queue (GPU 0 stream 7)" in counters


def test_kinds_step_and_gzip_as_asked(tmp_path):
    out = tmp_path / "queue.json.gz"
    assert main(["export", str(CONTROL), "-o", str(out), "--counters", "critical,queue", "--step", "1010"]) == 0
    assert out.read_bytes()[:2] == b"\x1f\x8b"
    new = added(out, CONTROL)
    assert {e["ph"] for e in new} == {"C", "M", "X"}
    assert not any("bandwidth" in e["name"] for e in new)
    assert next(e for e in new if e["ph"] == "M" and e["name"] == "thread_name")["args"]["name"].startswith(
        "critical path of ProfilerStep#1010"
    )
    whole_us = [e["ts"] for e in new if e["ph"] == "C"]
    assert all(Decimal(t) == Decimal(t).to_integral_value() for t in whole_us)  # an epoch-us trace: whole us


def test_the_input_is_never_written(tmp_path, capsys):
    src = tmp_path / "t.json"
    D.host_starved(tmp_path).rename(src)
    before, stamp = src.read_bytes(), src.stat().st_mtime_ns
    link = tmp_path / "link.json"
    link.symlink_to(src)
    for target in (src, link, tmp_path / "." / "t.json"):
        assert main(["export", str(src), "-o", str(target)]) == 2
        err = capsys.readouterr().err
        assert "tracetui never writes over its input" in err and err.count("\n") == 1
    assert main(["export", str(src), "-o", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert src.read_bytes() == before and src.stat().st_mtime_ns == stamp
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "t.json"]  # nothing half written


BERT = SAMPLES / "h100-bert-small.json.gz"


def test_a_file_that_exists_is_replaced_only_with_force(tmp_path, capsys):
    """GIVEN OUT is a file already WHEN exported without --force THEN refused in one line, OUT as it was; WHEN
    with --force THEN replaced by the export."""
    out = tmp_path / "mine.json"
    out.write_text("my notes")
    assert main(["export", str(BERT), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{out}: exists" in err and "--force" in err and err.count("\n") == 1
    assert out.read_text() == "my notes"
    assert main(["export", str(BERT), "-o", str(out), "--force"]) == 0
    assert len(doc_of(out)["traceEvents"]) > len(raw_events(BERT))


def test_a_symbolic_link_stays_and_its_target_is_written(tmp_path, capsys):
    link, target = tmp_path / "link.json", tmp_path / "target.json"
    target.write_text("old")
    link.symlink_to(target.name)
    assert main(["export", str(BERT), "-o", str(link), "--force"]) == 0
    assert link.is_symlink() and os.readlink(link) == target.name  # was replaced by a regular file
    assert len(doc_of(target)["traceEvents"]) > len(raw_events(BERT))
    assert capsys.readouterr().err.startswith(f"wrote {link}: ")  # the report on stderr, stdout left to the file


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_is_written_into_not_replaced(tmp_path):
    import threading

    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)  # (blocks if replaced)
    reader.start()
    assert main(["export", str(BERT), "-o", str(fifo)]) == 0
    assert fifo.is_fifo()
    reader.join(30)
    assert got and len(json.loads(got[0])["traceEvents"]) > len(raw_events(BERT))


def test_a_device_that_cannot_take_it_is_one_line_and_stays_a_device(tmp_path, capsys):
    """/dev/full's twin (a character device that answers every write with ENOSPC): an error naming it, exit 2, and
    the device still there. The export used to rename its file over the device and say it wrote it."""
    full = tmp_path / "full"
    try:
        os.mknod(full, 0o600 | __import__("stat").S_IFCHR, os.makedev(1, 7))
    except (OSError, AttributeError):
        pytest.skip("cannot make a device here (not root)")
    assert main(["export", str(BERT), "-o", str(full)]) == 2
    assert capsys.readouterr().err == f"tracetui: error: {full}: cannot write the export: No space left on device\n"
    assert full.is_char_device() and sorted(p.name for p in tmp_path.iterdir()) == ["full"]


def test_bad_usage_is_one_line(tmp_path, capsys):
    out = str(tmp_path / "o.json")
    with pytest.raises(SystemExit) as exited:
        main(["export", str(DDP), "-o", out, "--counters", "queue,fps"])
    assert exited.value.code == 2 and "expected some of queue,bandwidth,critical" in capsys.readouterr().err
    assert main(["export", str(SAMPLES / "hta-2rank"), "-o", out]) == 2
    assert "export writes one trace file" in capsys.readouterr().err
    assert main(["export", "demo:hta-2rank", "-o", out]) == 2  # said by the name given, not the sample's path
    assert capsys.readouterr().err.endswith(
        "tracetui: error: demo:hta-2rank: export writes one trace file: give one rank's file of the folder\n"
    )
    assert main(["export", str(DDP), "-o", out, "--step", "99"]) == 2
    assert "ProfilerStep#99" in capsys.readouterr().err
    assert not os.path.exists(out)


def test_a_damaged_trace_exports_what_it_can_read(tmp_path):
    """A file cut in its last event: the events before the cut, the new ones, valid JSON that opens again."""
    whole = D.host_starved(tmp_path).read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(whole[: whole.rindex('"dur"')])
    t = tracetui.load(cut)
    done = t.export(tmp_path / "out.json")
    events = doc_of(tmp_path / "out.json")["traceEvents"]
    assert done["added"]["queue"] > 0 and any(e.get("ph") == "C" for e in events)
    assert len([e for e in events if e.get("ph") == "X" and e.get("cat") != LANE_CAT]) == 5  # of 6: the cut one
    assert Results(load_trace(tmp_path / "out.json", use_cache=False)).summary.kernels == 2


def test_a_legacy_array_trace_gets_its_events_in_the_array(tmp_path):
    events = D.launched("K", 0, 5, 10, 1)
    src = tmp_path / "legacy.json"
    src.write_text(json.dumps(events))
    assert main(["export", str(src), "-o", str(tmp_path / "out.json"), "--counters", "queue"]) == 0
    got = json.loads((tmp_path / "out.json").read_text())
    assert got[:2] == events and [e["ph"] for e in got[2:]] == ["C", "C"]


def test_an_export_over_a_file_keeps_its_mode_and_a_gzip_names_the_target(tmp_path):
    """A private 640 file became 644 (the new file replaced it with the default mode), and the gzip header named
    the temporary file (gunzip -N restored '.plain.json.gz.PID.part')."""
    kept = tmp_path / "private.json"
    kept.write_text("old")
    kept.chmod(0o640)
    assert main(["export", str(BERT), "-o", str(kept), "--force"]) == 0
    assert kept.stat().st_mode & 0o777 == 0o640
    gz = tmp_path / "plain.json.gz"
    assert main(["export", str(BERT), "-o", str(gz)]) == 0
    with gzip.open(gz) as f:
        f.read(1)
        assert f.name == str(gz)
    header = gz.read_bytes()
    assert header[3] & 0x08 and header[10:].split(b"\0", 1)[0] == b"plain.json"  # FNAME: the target, less .gz


def test_a_loop_of_links_is_one_line_and_a_dash_is_stdout(tmp_path, capsys):
    loop_a, loop_b = tmp_path / "a.json", tmp_path / "b.json"
    loop_a.symlink_to(loop_b.name)
    loop_b.symlink_to(loop_a.name)
    assert main(["export", str(BERT), "-o", str(loop_a)]) == 2
    assert capsys.readouterr().err == f"tracetui: error: {loop_a}: a loop of symbolic links; name another file\n"


@pytest.mark.skipif(not Path("/dev/stdout").exists(), reason="no /dev/stdout")
def test_an_export_to_stdout_pipes_the_trace_and_a_reader_gone_early_is_quiet():
    import subprocess
    import sys

    whole = subprocess.run([sys.executable, "-m", "tui", "export", str(BERT), "-o", "-"], capture_output=True)
    assert whole.returncode == 0 and len(json.loads(whole.stdout)["traceEvents"]) > len(raw_events(BERT))
    assert whole.stderr.decode().startswith("wrote /dev/stdout: ")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui", "export", str(BERT), "-o", "/dev/stdout"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()  # as | head -c 10 does
    assert (proc.wait(timeout=120), proc.stderr.read()) == (0, b"")


def test_each_direction_and_the_sets_have_their_own_bandwidth_counter(tmp_path):
    """GIVEN a 4 MiB H2D copy over 100 us, a 1 KiB D2H over 10 us and a 512 B set over 1 us WHEN exported THEN one
    counter each, its level the bytes over the time while it runs, 0 after."""
    src = D.copies_and_compute(tmp_path)
    out = tmp_path / "out.json"
    assert main(["export", str(src), "-o", str(out), "--counters", "bandwidth"]) == 0
    series: dict[str, list] = {}
    for e in added(out, src):
        series.setdefault(e["name"], []).append((float(e["ts"]), float(e["args"]["GB/s"])))
    assert series == {
        "Copy bandwidth H2D (GB/s)": [(0.0, round((4 << 20) / 100_000, 3)), (100.0, 0.0)],
        "Copy bandwidth D2H (GB/s)": [(200.0, round(1024 / 10_000, 3)), (210.0, 0.0)],
        "Memset bandwidth (GB/s)": [(220.0, round(512 / 1000, 3)), (221.0, 0.0)],
    }
