"""Allocator snapshots with bounds: shared references counted at each use, limits refused in one line, and
numbers no allocator writes skipped with one warning, never an internal error."""

from __future__ import annotations

import copy
import math
import pickle
import time
from pathlib import Path

import pytest
from allocator_snapshots import leak

from tui.cli import main
from tui.model.snapshot import bounds, open_snapshot


@pytest.fixture
def base() -> dict:
    return leak().snapshot()


def _write(tmp_path: Path, snap: dict, name: str = "s.pickle") -> Path:
    path = tmp_path / name
    path.write_bytes(pickle.dumps(snap, protocol=4))
    return path


def _memory(path: Path, capsys) -> tuple[int, str, str]:
    code = main(["memory", str(path), "--format", "json"])
    out, err = capsys.readouterr()
    assert "internal error" not in err and "Traceback" not in err
    return code, out, err


def test_lists_that_share_references_are_counted_at_each_use(tmp_path, base, capsys):
    """A small pickle whose device trace is one list of 10,000 entries referred to 1,000 times: 10**7 entries
    once expanded, refused at once, before any is read."""
    shared = base["device_traces"][0] * (10_000 // len(base["device_traces"][0]))
    path = _write(tmp_path, {"segments": [], "device_traces": [[*shared]] * 1_000})
    assert path.stat().st_size < 100_000
    began = time.monotonic()
    code, _, err = _memory(path, capsys)
    assert code == 2 and time.monotonic() - began < 5
    assert err.count("\n") == 1 and "more than 5,000,000 trace entries" in err and "the snapshot entry limit" in err


def test_a_stack_shared_by_many_entries_counts_its_frames_at_each(tmp_path, base, capsys, monkeypatch):
    """Each entry refers to one list of 2,000 frames: frame uses pass the limit (lowered here to keep the test
    quick; the same count decides at the real limit)."""
    monkeypatch.setattr(bounds, "FRAMES", 1_000_000)
    frames = [{"name": f"f{k}", "filename": "x.py", "line": k} for k in range(2_000)]
    entry = dict(base["device_traces"][0][0], frames=frames)
    path = _write(tmp_path, {"segments": [], "device_traces": [[entry] * 1_000]})
    code, _, err = _memory(path, capsys)
    assert code == 2 and "more than 1,000,000 stack frames in all" in err and err.count("\n") == 1
    monkeypatch.setattr(bounds, "FRAMES", 2_000_000)
    assert open_snapshot(path, cache=False).has_history  # 2,000,000 uses: within


def test_more_device_traces_than_devices_are_refused(tmp_path, base, capsys):
    snap = dict(base, device_traces=[[]] * 5_000 + base["device_traces"])
    code, _, err = _memory(_write(tmp_path, snap), capsys)
    assert code == 2 and "5,001 device traces, more than 1,024 devices" in err


def _entry_with(base: dict, **fields) -> dict:
    s = copy.deepcopy(base)
    s["device_traces"][0][0].update(fields)
    return s


def _segment_with(base: dict, **fields) -> dict:
    s = copy.deepcopy(base)
    s["segments"][0].update(fields)
    return s


BAD = {
    "an infinite time": lambda b: _entry_with(b, time_us=math.inf),
    "a NaN time": lambda b: _entry_with(b, time_us=math.nan),
    "a time past int64": lambda b: _entry_with(b, time_us=2**70),
    "an address of 2**70": lambda b: _entry_with(b, addr=2**70),
    "a negative size": lambda b: _entry_with(b, size=-5),
    "a string stream": lambda b: _entry_with(b, stream="x"),
    "an int where frames belong": lambda b: _entry_with(b, frames=5),
    "a segment of 2**70 bytes": lambda b: _segment_with(b, total_size=2**70),
    "a segment of -225 bytes": lambda b: _segment_with(b, total_size=-225),
    "a float address": lambda b: _segment_with(b, address=1.5),
    "an int where blocks belong": lambda b: _segment_with(b, blocks=5),
    "a device past the limit": lambda b: _segment_with(b, device=2**40),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_number_no_allocator_writes_skips_its_row_with_one_warning(tmp_path, base, capsys, case):
    good = open_snapshot(_write(tmp_path, base, "good.pickle"), cache=False)
    path = _write(tmp_path, BAD[case](base))
    code, out, err = _memory(path, capsys)
    assert code == 0, err
    assert err.count("\n") == 1 and "were not readable (not a dict, or a number of the wrong type" in err
    snap = open_snapshot(path)  # and into the cache and back
    assert snap.skipped == 1 and open_snapshot(path).skipped == 1
    rows = len(snap.segments) + sum(len(h) for h in snap.histories.values())
    assert rows == len(good.segments) + sum(len(h) for h in good.histories.values()) - 1
    assert "-225" not in out and "reserved -" not in out


def test_names_nested_deep_and_settings_of_any_shape_read_without_recursion(tmp_path, base, capsys):
    """A frame's name 100,000 lists deep (a pickle writes it without recursion), settings nested as deep and an
    annotation at an infinite time: read, nothing formatted or kept of them."""
    snap = copy.deepcopy(base)
    snap["device_traces"][0][0]["frames"] = [{"name": "DEEP_NAME", "filename": "y.py", "line": 2**70}]
    snap["allocator_settings"] = {"max_split_size": 2**70, "nested": "DEEP_SETTING", "ok": [1, 2]}
    snap["external_annotations"] = [{"name": "x", "stage": "START", "time_us": math.inf, "device": 0}]
    raw = pickle.dumps(snap, protocol=4)
    deep = b"]" * 100_000 + b"a" * 99_999  # EMPTY_LIST, then APPEND each into the one below it
    raw = raw.replace(b"\x8c\x09DEEP_NAME", deep, 1).replace(b"\x8c\x0cDEEP_SETTING", deep, 1)
    path = tmp_path / "deep.pickle"
    path.write_bytes(raw)
    code, out, err = _memory(path, capsys)
    assert code == 0 and err == ""
    read = open_snapshot(path)
    assert read.settings == {"max_split_size": None, "nested": [[None]], "ok": [1, 2]} and read.annotations == []
    assert "?" in read.stacks.names and 0 in read.stacks.lines
    assert open_snapshot(path).settings == read.settings  # the cache wrote and read it back
