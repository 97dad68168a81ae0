"""A trace and a snapshot of the same run joined: the trace's allocations gain the snapshot's frames, matched by
address and time; when they cannot be, the line says why."""

from __future__ import annotations

import json

import numpy as np
import pytest
from allocator_snapshots import Builder, at, write
from conftest import SAMPLES

from tui.cli import main
from tui.model.analyses.memory import MEMORY
from tui.model.loading import open_trace
from tui.model.snapshot import open_snapshot
from tui.model.snapshot.frames import Namer
from tui.model.snapshot.join import by_frame, join
from tui.model.snapshot.report import device_memory

BERT = SAMPLES / "h100-bert-small.json.gz"  # profile_memory: 109 CUDA allocations and their frees, with Addr
SKEW_US = 3  # the snapshot's clock a little ahead, as two readings of one clock are


@pytest.fixture(scope="module")
def bert():
    return open_trace(str(BERT), cache=False).results


def same_run(results, shift_us: int = SKEW_US, addr_shift: int = 0) -> dict:
    """The snapshot the run's allocator would have recorded: each CUDA sample of the trace as an alloc (of a
    little less than the block, as requested sizes are) or a free at its address and time, from five lines."""
    inst, t = results.trace.inst, results.trace
    sel = np.flatnonzero((inst.name == t.names.index(MEMORY)) & (inst.bytes != 0) & (inst.dev_type == 1))
    sel = sel[np.argsort(inst.ts[sel], kind="stable")]
    b = Builder()
    for k, row in enumerate(sel.tolist()):
        b.clock(int(inst.ts[row]) // 1000 + shift_us)
        addr = int(inst.addr[row]) + addr_shift
        if inst.bytes[row] > 0:
            b.alloc(addr, int(inst.bytes[row]) - 64, at(10 + k % 5))
        else:
            b.free(addr)
    return b.snapshot()


def joined(results, snap_doc, tmp_path):
    snap = open_snapshot(write(tmp_path / "s.pickle", snap_doc))
    memories = {d: device_memory(snap, d) for d in snap.devices}
    return join(results, memories), memories, Namer(snap.stacks)


def test_every_allocation_of_the_same_run_finds_its_frames(bert, tmp_path):
    (j,), memories, namer = joined(bert, same_run(bert), tmp_path)
    assert j.device == "cuda:0" and len(j.samples) == 109 and j.matched == 109 and j.reason == ""
    assert (SKEW_US - 1) * 1000 <= j.offset_ns <= SKEW_US * 1000  # the snapshot's µs against the trace's ns
    rows = by_frame(bert, j, memories[0], namer)
    assert sum(r.count for r in rows) == 109
    assert sum(r.bytes for r in rows) == int(bert.trace.inst.bytes[j.samples].sum())
    assert {r.frame for r in rows} == {f"forward (model.py:{n})" for n in range(10, 15)}
    assert all(r.op.startswith(("aten::", "(no op)")) for r in rows) and any(r.op == "aten::empty" for r in rows)


def test_a_snapshot_of_another_time_says_they_do_not_overlap(bert, tmp_path):
    (j,), _, _ = joined(bert, same_run(bert, shift_us=3600 * 10**6), tmp_path)
    assert j.matched == 0 and "do not overlap in time" in j.reason and "UTC" in j.reason


def test_a_snapshot_of_another_run_matches_no_address(bert, tmp_path):
    (j,), _, _ = joined(bert, same_run(bert, addr_shift=1 << 30), tmp_path)
    assert j.matched == 0 and j.reason.endswith("not the same run")


def test_memory_with_snapshot_prints_the_trace_then_the_join(bert, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TRACETUI_COLUMNS", "160")
    snap = write(tmp_path / "s.pickle", same_run(bert))
    assert main(["memory", str(BERT), "--snapshot", str(snap), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "109 of the trace's 109 allocations matched" in out and "(the snapshot's clock +2.4 us from" in out
    assert "Frame (snapshot)" in out and "forward (model.py:1" in out
    assert main(["memory", str(BERT), "--snapshot", str(snap), "--format", "json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["devices"][0]["device"] in ("cpu", "cuda:0") and doc["snapshot"]["devices"][0]["matched"] == 109
    late = write(tmp_path / "late.pickle", same_run(bert, shift_us=3600 * 10**6))
    assert main(["memory", str(BERT), "--snapshot", str(late), "--no-cache"]) == 0
    captured = capsys.readouterr()
    assert "do not overlap in time" in captured.err and "none of the trace's 109 allocations matched" in captured.out


def test_memory_snapshot_option_needs_a_trace_and_a_snapshot(tmp_path, capsys):
    snap = write(tmp_path / "s.pickle", Builder().snapshot())
    assert main(["memory", str(snap), "--snapshot", str(snap)]) == 2
    assert main(["memory", str(BERT), "--snapshot", str(BERT), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "give the trace as TRACE" in err and "not a memory snapshot" in err


def test_a_trace_and_a_snapshot_read_the_same_clock():
    """The shared H200 snapshot and the series captured by the same script seconds later: the trace's ts (with
    baseTimeNanoseconds) and the snapshot's time_us are both Unix time, so they land within a minute."""
    from conftest import SHARED

    trace = SHARED / "cuda-h200-series" / "mlp_fwd_eager.json.gz"
    if not trace.is_file():
        pytest.skip("../shared/traces/cuda-h200-series is not here")
    snap = open_snapshot(SAMPLES.parent / "tests" / "data" / "snapshots" / "h200-gpt-train.pickle.gz")
    t = open_trace(str(trace), cache=False).results.trace
    gap_s = (int(t.x.ts.min()) - int(snap.histories[0].time_ns[-1])) / 1e9
    assert 0 < gap_s < 60, gap_s  # 10 s: the snapshot was taken, then the series captured
