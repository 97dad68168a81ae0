"""tracetui.snapshot(): the same figures as the command line, allocations as rows, diff and join."""

from __future__ import annotations

import json

import pytest
from allocator_snapshots import MB, leak, write
from conftest import ROOT

import tracetui
from tui.cli import main

REAL = ROOT / "tests" / "data" / "snapshots" / "h200-gpt-train.pickle.gz"  # the shared one, gzipped


def test_memory_is_what_the_command_prints(tmp_path, capsys):
    path = write(tmp_path / "s.pickle", leak(3).snapshot())
    assert main(["memory", str(path), "--format", "json"]) == 0
    assert tracetui.snapshot(path).memory() == json.loads(capsys.readouterr().out)


def test_allocations_are_rows_with_their_frames(tmp_path):
    s = tracetui.snapshot(write(tmp_path / "s.pickle", leak(3).snapshot()))
    rows = s.allocations()
    assert len(rows) == 6 and rows[0]["frame"] == "remember (model.py:30)" and rows[0]["op"] == "aten::mm"
    assert rows[0]["end_us"] is None and rows[1]["end_us"] is not None and rows[1]["requested_bytes"] == 4 * MB
    peak = s.memory()["devices"][0]["peak"]["time_us"]
    alive = s.allocations(alive_at_us=peak, frames=True)
    assert sum(r["requested_bytes"] for r in alive) == 7 * MB and alive[0]["frames"][-1] == "train.py:60  <module>"
    assert tracetui.to_pandas(rows).shape == (6, 8)
    with pytest.raises(tracetui.UsageError, match="no device 3"):
        s.allocations(device=3)


def test_diff_and_a_refused_file(tmp_path):
    a = tracetui.snapshot(write(tmp_path / "a.pickle", leak(2).snapshot()))
    grew = a.diff(write(tmp_path / "b.pickle", leak(4).snapshot()))["devices"][0]["at_end"]
    assert grew[0]["frame"] == "remember (model.py)" and grew[0]["change_bytes"] == 2 * MB
    bad = tmp_path / "bad.pickle"
    bad.write_bytes(b"\x80\x04cos\nsystem\n.")
    with pytest.raises(tracetui.TraceError, match="refused"):
        tracetui.snapshot(bad)


def test_the_real_snapshot_through_the_api():
    s = tracetui.snapshot(REAL)
    d = s.memory()["devices"][0]
    assert s.has_history and s.devices == [0] and d["allocated_bytes"] == 428683776
    assert len(s.allocations()) == 1008 and "Snapshot" in repr(s)


async def test_the_mcp_server_reads_snapshots(isolated_cache, tmp_path):
    """memory and diff take a snapshot as the CLI does; allocations pages its rows; a refused file is one line."""
    pytest.importorskip("mcp")
    from test_mcp import call, failure, serve

    a = write(tmp_path / "a.pickle", leak(2).snapshot())
    b = write(tmp_path / "b.pickle", leak(4).snapshot())
    bad = tmp_path / "bad.pickle"
    bad.write_bytes(b"\x80\x04cos\nsystem\n.")
    async with serve(isolated_cache) as client:
        assert await call(client, "memory", trace=str(a)) == tracetui.snapshot(a).memory()
        assert await call(client, "diff", a=str(a), b=str(b)) == tracetui.snapshot(a).diff(b)
        page = await call(client, "allocations", snapshot=str(b), limit=3)
        assert len(page["allocations"]) == 3 and page["page"]["total"] == 8 and page["page"]["next_offset"] == 3
        assert "refused" in await failure(client, "memory", trace=str(bad))
