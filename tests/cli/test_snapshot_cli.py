"""`tracetui memory SNAPSHOT` and `tracetui diff A B` on snapshots: the formats, and bad input in one line."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import pytest
from allocator_snapshots import BASE, MB, Builder, at, leak, write
from conftest import ROOT, SAMPLES

from tui.cli import main
from tui.cli.commands import REPORTS
from tui.model.snapshot import is_snapshot

REAL = ROOT / "tests" / "data" / "snapshots" / "h200-gpt-train.pickle.gz"  # the shared one, gzipped


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


class Payload:
    """Pickles as a call of os.system: loading it with pickle.load would run the command."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def test_a_pickle_that_would_run_code_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "ran"
    bad = tmp_path / "evil.pickle"
    bad.write_bytes(pickle.dumps({"segments": [], "device_traces": [[Payload(f"touch {marker}")]]}))
    before = bad.read_bytes()
    proc = subprocess.run(
        [sys.executable, "-m", "tui.cli", "memory", str(bad)], capture_output=True, text=True, cwd=ROOT
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert f"{bad}: refused: the pickle asks to import" in proc.stderr and "system" in proc.stderr
    assert "nothing was run" in proc.stderr
    assert not marker.exists() and bad.read_bytes() == before


@pytest.mark.parametrize("protocol", [0, 2, 5])
def test_every_protocol_that_imports_is_refused(tmp_path, capsys, protocol):
    bad = tmp_path / "evil.pickle"
    bad.write_bytes(pickle.dumps({"segments": [Payload("true")]}, protocol=protocol))
    code, out, err = run(["memory", str(bad)], capsys)
    assert code == 2 and "refused" in err and out == ""


def test_a_truncated_pickle_is_one_line(tmp_path, capsys):
    whole = pickle.dumps(leak().snapshot())
    cut = write(tmp_path / "cut.pickle", {})
    cut.write_bytes(whole[: len(whole) // 2])
    code, out, err = run(["memory", str(cut)], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"tracetui: error: {cut}: truncated: the pickle ends after")


def test_an_empty_or_foreign_pickle_is_not_a_snapshot(tmp_path, capsys):
    empty = tmp_path / "empty.pickle"
    empty.write_bytes(b"")
    code, _, err = run(["memory", str(empty)], capsys)
    assert code == 2 and f"{empty}: " in err and err.count("\n") == 1
    listed = tmp_path / "list.pickle"
    listed.write_bytes(pickle.dumps([1, 2, 3]))
    code, _, err = run(["memory", str(listed)], capsys)
    assert code == 2 and "not a memory snapshot: it holds a list" in err
    other = tmp_path / "dict.pickle"
    other.write_bytes(pickle.dumps({"weights": [1.0]}))
    code, _, err = run(["memory", str(other)], capsys)
    assert code == 2 and "no segments or device_traces (its keys: weights)" in err


def test_a_snapshot_is_told_from_a_trace_by_its_content(tmp_path):
    snap = leak().snapshot()
    as_json = tmp_path / "snap.json"
    as_json.write_text(json.dumps(snap))
    plain = tmp_path / "snap.bin"
    plain.write_bytes(pickle.dumps(snap))
    assert is_snapshot(as_json) and is_snapshot(plain) and is_snapshot(write(tmp_path / "s.pkl", snap))
    assert not is_snapshot(SAMPLES / "h100-bert-small.json.gz") and not is_snapshot(tmp_path / "missing.pickle")


def test_memory_json_has_the_designed_shape(tmp_path, capsys):
    path = write(tmp_path / "leak.pickle", leak().oom(30 * MB, MB, at(70)).snapshot())
    code, out, err = run(["memory", str(path), "--format", "json"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    (d,) = doc["devices"]
    assert {"device", "reserved_bytes", "allocated_bytes", "peak", "by_frame", "segments", "never_freed"} <= set(d)
    assert d["device"] == "cuda:0" and d["reserved_bytes"] == 20 * MB and d["allocated_bytes"] == 3 * MB
    assert d["peak"]["requested_bytes"] == 7 * MB and d["peak"]["allocations"] == 4
    assert d["never_freed"][0]["frame"] == "remember (model.py:30)" and d["never_freed"][0]["bytes"] == 3 * MB
    assert d["segments"]["largest_free_bytes"] == 17 * MB and d["segments"]["count"] == 1
    assert d["ooms"][0]["why"] == "in use" and d["ooms"][0]["requested_bytes"] == 30 * MB


def test_memory_text_reads_as_sentences_and_tables(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TRACETUI_COLUMNS", "120")
    path = write(tmp_path / "leak.pickle", leak().snapshot())
    code, out, _ = run(["memory", str(path)], capsys)
    assert code == 0
    assert "reserved 20.00 MiB in 1 segments (1 large, 0 small), allocated 3.00 MiB" in out
    assert "17.00 MiB is reserved but free, in 1 blocks; the largest is 17.00 MiB (stream 0, large pool)" in out
    assert "Peak of the history: 7.00 MiB requested by 4 live allocations" in out
    assert "never freed (leak candidates)" in out and "remember (model.py:30)" in out
    code, md, _ = run(["memory", str(path), "--format", "md"], capsys)
    assert code == 0 and "| Frame | Bytes | Count |" in md
    code, csv, _ = run(["memory", str(path), "--format", "csv"], capsys)
    head, row = csv.strip().splitlines()
    assert head.startswith("device,reserved_bytes,allocated_bytes") and row.startswith(f"cuda:0,{20 * MB},{3 * MB}")


def test_a_snapshot_without_history_says_so(tmp_path, capsys):
    b = Builder().segment(BASE, 20 * MB, record=False).alloc(BASE, 5 * MB, at(4), record=False)
    path = write(tmp_path / "state.pickle", b.snapshot(history=False))
    code, out, err = run(["memory", str(path)], capsys)
    assert code == 0 and "no history in this snapshot" in err and "_record_memory_history()" in err
    assert "no history, segments only" in out and "forward (model.py:4)" in out


def test_diff_of_two_snapshots_says_what_grew_by_frame(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TRACETUI_COLUMNS", "160")
    a = write(tmp_path / "a.pickle", leak(2).snapshot())
    b = write(tmp_path / "b.pickle", leak(5, line=33).snapshot())  # the line moved: the same frame
    code, out, _ = run(["diff", str(a), str(b)], capsys)
    assert code == 0 and "remember (model.py)" in out and "+3.00 MiB" in out and "[only" not in out
    code, out, _ = run(["diff", str(a), str(b), "--format", "json"], capsys)
    dev = json.loads(out)["devices"][0]
    grew = {r["frame"]: r["change_bytes"] for r in dev["at_end"]}
    assert grew == {"remember (model.py)": 3 * MB}
    assert dev["figures"]["never_freed_bytes"] == {"a": 2 * MB, "b": 5 * MB}


def test_diff_of_a_snapshot_and_a_trace_is_a_usage_error(tmp_path, capsys):
    a = write(tmp_path / "a.pickle", leak().snapshot())
    code, _, err = run(["diff", str(a), str(SAMPLES / "h100-bert-small.json.gz")], capsys)
    assert code == 2 and "is a memory snapshot and" in err and err.count("\n") == 1


def test_memory_on_the_real_snapshot(capsys):
    code, out, err = run(["memory", str(REAL), "--format", "json"], capsys)
    d = json.loads(out)["devices"][0]
    assert code == 0 and err == ""
    assert (d["reserved_bytes"], d["allocated_bytes"], d["requested_bytes"]) == (1451229184, 428683776, 424488964)
    assert d["entries"] == 2684 and d["actions"]["alloc"] == 1000


# memory reads one, diff compares two; ranks says only that the file is not a JSON trace
@pytest.mark.parametrize("command", sorted(REPORTS - {"memory", "diff", "ranks"}))
def test_the_trace_commands_say_a_snapshot_is_not_a_trace(tmp_path, capsys, command):
    path = write(tmp_path / "s.pickle", leak().snapshot())
    code, out, err = run([command, str(path)], capsys)
    assert code == 2 and out == "" and "a memory snapshot, not a trace: tracetui memory" in err
