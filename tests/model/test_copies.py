"""Copies per direction in the summary (text, JSON, SQL) and the slow-copies explain rule, on built traces and the
samples."""

from __future__ import annotations

import json
from pathlib import Path

import device_traces as D
import numpy as np
import pytest
from conftest import SAMPLES, write_trace

import tracetui
from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.copies import copies
from tui.model.analyses.results import Results
from tui.model.cats import Cat
from tui.model.load.args import event_args
from tui.tables.explain import note

MB = 1 << 20


def results(path: Path) -> Results:
    return Results(load_trace(path, use_cache=False))


def test_copies_by_direction_with_their_bytes(tmp_path):
    found = {r.kind: r for r in copies(results(D.copies_and_compute(tmp_path)).trace).rows}
    assert list(found) == ["H2D", "D2H", "set"]
    h2d, d2h, sets = found["H2D"], found["D2H"], found["set"]
    assert (h2d.count, h2d.bytes, h2d.ns, h2d.pageable, h2d.pinned, h2d.small) == (1, 4 * MB, 100_000, 1, 0, 0)
    assert h2d.gbps == pytest.approx(4 * MB / 100_000)  # bytes per ns: GB/s
    assert (d2h.bytes, d2h.pinned, d2h.small, d2h.median_bytes) == (1024, 1, 1, 1024)
    assert (sets.count, sets.bytes) == (1, 512)


def test_a_copy_without_bytes_leaves_its_directions_bandwidth_unknown(tmp_path):
    path = write_trace(tmp_path / "t.json", [D.on_device("Memcpy HtoD (Pinned -> Device)", 0, 10, 1, cat="gpu_memcpy")])
    (row,) = copies(results(path).trace).rows
    assert (row.bytes, row.gbps, row.median_bytes, row.slowest) == (-1, None, -1, -1)


def test_the_summary_names_the_copies_in_text_json_and_sql(tmp_path, capsys):
    path = D.copies_and_compute(tmp_path)
    assert main(["summary", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Copies by direction" in text and "H2D ×1: 4.00 MiB in 100.000us, 41.9 GB/s (1 pageable)" in text
    assert main(["summary", str(path), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)["copies"]
    assert [c["kind"] for c in doc] == ["H2D", "D2H", "set"] and doc[1]["pinned"] == 1 and doc[0]["bytes"] == 4 * MB
    pytest.importorskip("duckdb")
    assert tracetui.load(path).sql("SELECT * FROM copies")["rows"] == doc


def test_a_trace_without_copies_has_no_copies_line(tmp_path, capsys):
    assert main(["summary", str(D.host_starved(tmp_path))]) == 0
    assert "Copies by direction" not in capsys.readouterr().out


def test_the_samples_copies_take_their_bytes_from_their_args():
    """The DDP sample's 960 device-to-device copies and 114 sets: the load's byte column is each one's `bytes` arg
    as the file writes it (read back event by event)."""
    trace = results(SAMPLES / "a100-ddp-nccl.json.gz").trace
    found = {r.kind: r for r in copies(trace).rows}
    assert (found["D2D"].count, found["D2D"].bytes, found["set"].count) == (960, 307_323_096, 114)
    ev = np.flatnonzero(np.isin(trace.x.cat, [int(Cat.MEMCPY), int(Cat.MEMSET)]))
    assert trace.x.nbytes[ev].tolist() == [event_args(trace, int(i))["bytes"] for i in ev.tolist()]
    assert (np.delete(trace.x.nbytes, ev) == -1).all()  # no other event of this trace has the arg


@pytest.mark.parametrize("lenient", [False, True])
def test_a_bytes_arg_that_is_no_size_reads_as_unknown(tmp_path, lenient):
    """A string, a bool, a negative number or one past 64 bits is no size (-1); a fraction is cut. lenient: a
    malformed event elsewhere in the file sends its chunk down the forgiving decode, which must read the same."""
    odd = ["4096", True, -8, 2**64, 1.5, None, 64]
    events = [D.on_device(f"Memcpy HtoD {k}", 10 * k, 5, k + 1, cat="gpu_memcpy", bytes=b) for k, b in enumerate(odd)]
    if lenient:
        events.append({"ph": "X", "name": "odd", "ts": "soon", "dur": 1, "pid": 0, "tid": 1})
    trace = load_trace(write_trace(tmp_path / "t.json", events), use_cache=False)
    ev = np.flatnonzero(trace.x.cat == int(Cat.MEMCPY))
    assert sorted(trace.x.nbytes[ev].tolist()) == sorted([-1, -1, -1, -1, 1, -1, 64])
    (row,) = copies(trace).rows
    assert row.bytes == -1 and row.count == len(odd)  # one copy without a size leaves the direction's total unknown


def test_explain_names_tiny_pageable_copies_and_their_fixes(tmp_path):
    a = results(D.tiny_pageable_copies(tmp_path))
    (f,) = [f for f in a.findings if f.rule == "slow-copies"]
    assert f.title == "Slow D2H copies (0.16 GB/s)" and f.count == 40 and len(f.events) == 40
    assert f.parts == ["slow-copies", "slow-copies-tiny", "slow-copies-pageable"]
    text = note(f)
    assert "40 under 64 KiB" in text and "pin_memory=True" in text and "Batch them" in text


def test_fast_or_brief_copies_are_not_named(tmp_path):
    a = results(D.tiny_pageable_copies(tmp_path, n=2))  # 50 us of copies: under 100 us
    assert not [f for f in a.findings if f.rule == "slow-copies"]
    a = results(D.copies_and_compute(tmp_path))  # 41.9 GB/s
    assert not [f for f in a.findings if f.rule == "slow-copies"]
