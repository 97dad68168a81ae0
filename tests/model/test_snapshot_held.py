"""A snapshot's allocations alive from before the history to its end are held for the whole run (a training run's
model and optimizer state, made before the recording began), said apart and never counted as leak candidates."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from tui.cli import main
from tui.model.snapshot import open_snapshot
from tui.model.snapshot.history import ALIVE, BEFORE_ALIVE
from tui.model.snapshot.report import device_memory, report

H200 = Path(__file__).parents[1] / "data" / "snapshots" / "h200-gpt-train.pickle.gz"


def test_allocations_alive_from_before_the_history_are_held_not_leaks():
    snap = open_snapshot(H200)
    a = device_memory(snap, 0).allocs
    held = (a.end_ns == ALIVE) & (a.origin == BEFORE_ALIVE)
    d = report(snap).devices[0]
    assert (d.held_count, d.held_bytes) == (int(held.sum()), int(a.size[held].sum())) == (8, 163 << 20)
    assert d.never_freed_bytes + d.held_bytes <= int(a.size[a.end_ns == ALIVE].sum())
    assert all(r.frame != "(allocated before the history)" for r in d.never_freed)


def test_the_report_says_them_held_for_the_whole_run(monkeypatch):
    monkeypatch.setenv("TRACETUI_COLUMNS", "0")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["memory", str(H200)]) == 0
        assert main(["memory", str(H200), "--format", "json"]) == 0
    text, doc = out.getvalue().split("\n{", 1)
    assert (
        "163.00 MiB in 8 allocations made before the history and alive to its end: held for the whole run "
        "(model or optimizer state), not leak candidates." in text
    )
    device = json.loads("{" + doc)["devices"][0]
    assert (device["held_for_the_run_count"], device["held_for_the_run_bytes"]) == (8, 163 << 20)
