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
    ("name", "cut"),
    [("h100-bert-small.json.gz", False), ("a100-train-control.json.gz", True), ("cpu-only-gloo.json.gz", False)],
)
def test_pieces_nest_a_trace_as_the_whole_does(name, cut, monkeypatch):
    """bert's Python frames hold its CPU thread under one root frame, gloo's tracks are short: nothing to cut."""
    x = load_trace(SAMPLES / name, use_cache=False).x
    calls, pieces = [], []
    real, real_pieces = nesting.nest_track, nesting._pieces
    monkeypatch.setattr(nesting, "nest_track", lambda s, e: calls.append(len(s)) or real(s, e))
    monkeypatch.setattr(nesting, "_pieces", lambda s, e, t: pieces.append((real_pieces(s, e, t), t)) or pieces[-1][0])
    whole, cut_up = _whole_and_pieces(monkeypatch, x.ts, x.ts + x.dur, x.track, x.dur >= 0)
    assert _same(whole, cut_up)
    assert calls[0] == np.count_nonzero(x.dur >= 0)  # the whole: every track in one call, laid end to end in time
    assert sum(calls[1:]) == calls[0] and len(calls) > 2
    (_, _), (bounds, tracks) = pieces
    assert bool(set(bounds) - set(tracks.tolist())) == cut  # a bound inside a track: a track was cut


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
    """Partial overlaps, ties, zero durations at the cuts, several tracks."""
    rng = np.random.default_rng(11)
    for _ in range(400):
        n = int(rng.integers(1, 90))
        ts = rng.integers(0, 200, n).astype(np.int64)
        dur = np.where(rng.random(n) < 0.25, 0, rng.integers(0, 30, n)).astype(np.int64)
        track = rng.integers(0, 3, n).astype(np.int32)
        whole, pieces = _whole_and_pieces(monkeypatch, ts, ts + dur, track)
        assert _same(whole, pieces), (ts.tolist(), dur.tolist(), track.tolist())


def test_cuts_fall_only_where_nothing_is_open():
    s = np.array([0, 1, 5, 5, 9, 12], np.int64)
    e = np.array([4, 3, 9, 5, 20, 13], np.int64)
    # nothing open before positions 2 (4 <= 5) and 4 (9 <= 9); 5 is inside [9, 20)
    assert set(nesting._pieces(s, e, np.array([0, 6]))) <= {0, 2, 4, 6}
