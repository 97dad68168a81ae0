"""A long track nested in pieces (cut where nothing is open), side by side in threads: the same nesting as whole."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest
from conftest import SAMPLES

import tui.model.nesting as nesting
from tui.model import load_trace
from tui.model.nesting import nest


def _whole_and_pieces(monkeypatch, ts, end, track, mask=None):
    monkeypatch.setattr(nesting, "PIECE_EVENTS", 1 << 40)
    whole = nest(ts, end, track, mask)
    monkeypatch.setattr(nesting, "PIECE_EVENTS", 3)
    monkeypatch.setenv("TRACETUI_THREADS", "4")
    return whole, nest(ts, end, track, mask)


def _same(a, b) -> bool:
    return all(np.array_equal(getattr(a, f.name), getattr(b, f.name)) for f in fields(a))


@pytest.mark.parametrize(
    ("name", "how"),
    [("h100-bert-small.json.gz", "wrapped"), ("a100-train-control.json.gz", "free"), ("cpu-only-gloo.json.gz", "")],
)
def test_pieces_nest_a_trace_as_the_whole_does(name, how, monkeypatch):
    """bert's Python frames hold its CPU thread under one root frame: cut where only that frame (and its wrappers)
    are open; the training trace's steps leave moments where nothing is open; gloo's tracks are short: no cut."""
    x = load_trace(SAMPLES / name, use_cache=False).x
    calls, pieces = [], []
    real, real_pieces = nesting.nest_track, nesting._pieces
    monkeypatch.setattr(nesting, "nest_track", lambda s, e: calls.append(len(s)) or real(s, e))
    monkeypatch.setattr(nesting, "_pieces", lambda s, e, t: pieces.append((real_pieces(s, e, t), t)) or pieces[-1][0])
    whole, cut_up = _whole_and_pieces(monkeypatch, x.ts, x.ts + x.dur, x.track, x.dur >= 0)
    assert _same(whole, cut_up)
    assert calls[0] == np.count_nonzero(x.dur >= 0)  # the whole: every track in one call, laid end to end in time
    assert sum(calls[1:]) == calls[0] and len(calls) > 2
    (_, _), ((runs, wrapped), tracks) = pieces
    free = any(a not in tracks.tolist() for a, _ in runs)  # a run starting inside a track: cut where nothing is open
    assert ("wrapped" if wrapped else "free" if free else "") == how


def test_a_track_held_by_wrappers_is_cut_where_only_they_are_open(monkeypatch):
    """A root frame, a step inside it, then many ops: cut between the ops, the pieces hung under the step."""
    ops = 40
    ts = np.array([0, 5] + [10 + 10 * k for k in range(ops)] + [12 + 10 * k for k in range(ops)], np.int64)
    dur = np.array([10 * ops + 100, 10 * ops + 50] + [8] * ops + [3] * ops, np.int64)  # each op holds a child
    track = np.zeros(len(ts), np.int32)
    monkeypatch.setattr(nesting, "PIECE_EVENTS", 10)
    monkeypatch.setenv("TRACETUI_THREADS", "4")
    got = nest(ts, ts + dur, track)
    x, _ = nesting._pieces(*(a[got.order] for a in (ts, ts + dur)), np.array([0, len(ts)]))
    assert x == [] and got.parent[2 : 2 + ops].tolist() == [1] * ops and got.parent[1] == 0
    assert got.depth[2 + ops :].tolist() == [3] * ops and got.row[2 + ops :].tolist() == [3] * ops
    monkeypatch.setattr(nesting, "PIECE_EVENTS", 1 << 40)
    assert _same(got, nest(ts, ts + dur, track))


def test_a_wrapper_cut_short_before_the_pieces_nests_the_track_whole(monkeypatch):
    """A step that a later op overlaps partially (killing it) before the cuts: the track is nested whole."""
    ops = 40
    ts = np.array([0, 5, 6] + [10 + 10 * k for k in range(ops)], np.int64)
    dur = np.array([10 * ops + 100, 10 * ops + 50, 10 * ops + 60] + [8] * ops, np.int64)
    track = np.zeros(len(ts), np.int32)
    monkeypatch.setattr(nesting, "PIECE_EVENTS", 10)
    monkeypatch.setenv("TRACETUI_THREADS", "4")
    got = nest(ts, ts + dur, track)
    monkeypatch.setattr(nesting, "PIECE_EVENTS", 1 << 40)
    assert _same(got, nest(ts, ts + dur, track))


def test_many_short_tracks_nest_as_each_alone(monkeypatch):
    """Thousands of tracks nested together, shifted end to end in time: each track's nesting as if alone."""
    rng = np.random.default_rng(5)
    n = 6000
    track = rng.integers(0, 2000, n).astype(np.int32)
    ts = rng.integers(0, 50, n).astype(np.int64) * 1000
    dur = np.where(rng.random(n) < 0.2, 0, rng.integers(0, 40_000, n)).astype(np.int64)
    together = nest(ts, ts + dur, track)
    monkeypatch.setattr(nesting, "PIECE_EVENTS", 1)  # every track its own piece
    assert _same(together, nest(ts, ts + dur, track))


def test_tracks_too_far_apart_to_lay_end_to_end_nest_alone(monkeypatch):
    """Spans adding up past 62 bits: each track nests on its own, still right."""
    ts = np.array([0, 10, 2**61, 2**61 + 5, 2**62, 2**62 + 1], np.int64)
    end = np.array([2**61 - 1, 20, 2**62 - 3, 2**61 + 9, 2**62 + 9, 2**62 + 2], np.int64)
    track = np.array([0, 0, 1, 1, 2, 2], np.int32)
    got = nest(ts, end, track)
    assert got.parent.tolist() == [-1, 0, -1, 2, -1, 4]
    monkeypatch.setattr(nesting, "PIECE_EVENTS", 1)
    assert _same(got, nest(ts, end, track))


def test_pieces_nest_tangled_events_as_the_whole_does(monkeypatch):
    """Partial overlaps, ties, zero durations at the cuts, several tracks; half the time a root and a step around
    everything (wrappers: the track is cut where only they are open), now and then cut short by a later event."""
    rng = np.random.default_rng(11)
    hung = []
    real = nesting._Wrapped.hang
    monkeypatch.setattr(nesting._Wrapped, "hang", lambda self, out: hung.append(real(self, out)) or hung[-1])
    for _ in range(600):
        n = int(rng.integers(1, 120))
        ts = rng.integers(0, 200, n).astype(np.int64)
        dur = np.where(rng.random(n) < 0.25, 0, rng.integers(0, 30, n)).astype(np.int64)
        if rng.random() < 0.5:
            ts = np.concatenate([[-10, -5], ts])
            dur = np.concatenate([[400, rng.choice([300, 390, 420])], dur])
        track = rng.integers(0, 3, len(ts)).astype(np.int32)
        whole, pieces = _whole_and_pieces(monkeypatch, ts, ts + dur, track)
        assert _same(whole, pieces), (ts.tolist(), dur.tolist(), track.tolist())
    assert hung.count(True) > 100 and hung.count(False) > 0  # both ways were taken (the fallback: 4 times in 600)


def test_cuts_fall_only_where_nothing_is_open():
    s = np.array([0, 1, 5, 5, 9, 12], np.int64)
    e = np.array([4, 3, 9, 5, 20, 13], np.int64)
    # nothing open before positions 2 (4 <= 5) and 4 (9 <= 9); 5 is inside [9, 20)
    runs, wrapped = nesting._pieces(s, e, np.array([0, 6]))
    assert not wrapped and {a for a, _ in runs} | {b for _, b in runs} <= {0, 2, 4, 6}
