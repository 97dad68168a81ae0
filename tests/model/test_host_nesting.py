"""The ops table's nesting of host events (torch's tree: Python frames and filtered ops left out), read off the display
nesting where that holds, is the nesting of the host events alone."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from conftest import SAMPLES, shared_params, shared_traces

from tui.model import load_trace
from tui.model.analyses import ops
from tui.model.analyses.op_events import op_events
from tui.model.analyses.results import Results
from tui.model.nesting import depth_of, nearest_kept, nest


def _fake(ts: np.ndarray, dur: np.ndarray, track: np.ndarray) -> SimpleNamespace:
    return SimpleNamespace(x=SimpleNamespace(ts=ts, dur=dur, track=track), n=len(ts))


def _check(trace, host: np.ndarray, shown, thread: np.ndarray | None = None) -> int:
    """Assert the parents equal those of the host events nested alone (each on its thread: its track unless given),
    and depths that grow; the host events."""
    x = trace.x
    end = x.ts + x.dur
    parent, depth = ops._tree_parent(trace, host, end, shown, thread)
    alone = nest(x.ts, end, x.track if thread is None else thread, host)
    assert np.array_equal(parent[host], alone.parent[host])
    assert (parent[~host] == -1).all()
    kids = np.flatnonzero(parent >= 0)
    assert (depth[parent[kids]] < depth[kids]).all()
    return int(host.sum())


def test_left_out_events_in_tangles_change_no_host_parent(monkeypatch):
    """Partial overlaps (of host events, of left-out ones, between the two), ties, zero durations, several tracks:
    some events nested on another thread than their track's (as torch nests runtime calls linked to no op): whichever
    way _tree_parent takes (the display nesting, or a track nested again), the parents are the same."""
    rng = np.random.default_rng(5)
    taken = {"read off": 0, "nested again": 0, "read off past a left-out overlap": 0, "moved": 0}
    calls: list[int] = []
    real = ops.nest
    monkeypatch.setattr(ops, "nest", lambda *a: calls.append(1) or real(*a))
    for _ in range(800):
        n = int(rng.integers(1, 90))
        ts = rng.integers(0, 150, n).astype(np.int64)
        dur = np.where(rng.random(n) < 0.2, 0, rng.integers(0, 40, n)).astype(np.int64)
        track = rng.integers(0, 3, n).astype(np.int32)
        host = rng.random(n) < rng.choice([0.3, 0.7, 0.95])
        before = len(calls)
        shown = real(ts, ts + dur, track)
        moved = (rng.random(n) < 0.15) & (rng.random() < 0.3)
        thread = np.where(moved, 0, track).astype(np.int32)
        _check(_fake(ts, dur, track), host, shown, thread)
        taken["moved"] += int((host & (thread != track)).any())
        taken["nested again" if len(calls) > before else "read off"] += 1
        victims = np.flatnonzero(shown.killed_by >= 0)
        closed = (host[victims] & ~host[shown.killed_by[victims]]).any()
        taken["read off past a left-out overlap"] += int(closed and len(calls) == before)
    assert min(taken.values()) > 50, taken


def _real(path) -> int:
    """The host events checked (a trace of GPU events alone has none)."""
    trace = load_trace(path, use_cache=False)
    name_ok = np.array([n not in ops.FILTERED for n in trace.names] + [True])[trace.x.name]
    ev = op_events(trace, name_ok, False)
    return _check(trace, ev.host & ~ev.loose, Results(trace).nesting, ev.thread)


@pytest.mark.parametrize("name", ["h100-bert-small.json.gz", "a100-train-control.json.gz", "mi250-rocm-train.json.gz"])
def test_host_parents_of_shipped_traces(name):
    """bert's Python frames hold its ops (the frames have children: read off the display nesting, frames skipped)."""
    assert _real(SAMPLES / name) > 50


@pytest.mark.parametrize(
    "path", shared_params([p for p in shared_traces() if p.stat().st_size < 8_000_000]), ids=lambda p: p.name
)
def test_host_parents_of_shared_traces(path):
    _real(path)


def test_nearest_kept_skips_runs_of_left_out_ancestors():
    parent = np.array([-1, 0, 1, 2, 3, 0, 5, -1, 7])
    keep = np.array([True, False, False, True, False, True, False, False, True])
    assert nearest_kept(parent, keep, depth_of(parent)).tolist() == [-1, 0, 0, 0, 3, 0, 5, -1, -1]
