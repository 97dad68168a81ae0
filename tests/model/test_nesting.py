"""Nesting and dup-removal rules, each on a few inline events."""

from __future__ import annotations

import numpy as np
import pytest

from tui.model import nesting
from tui.model.nesting import nest, subtree_sum


@pytest.fixture(autouse=True)
def numpy_passes(monkeypatch):
    """numpy's passes unless a test asks for the walk (numba may be imported by an earlier test in this process)."""
    monkeypatch.setattr(nesting, "_compiled", lambda: None)


@pytest.fixture(params=["passes", "compiled"])
def walk(request, monkeypatch):
    """A rule's test, in numpy's passes and in the compiled walk (where numba is installed: the fast extra)."""
    if request.param == "compiled":
        compiled = pytest.importorskip("tui.model.nesting_compiled", reason="numba (the fast extra) is not installed")
        monkeypatch.setattr(nesting, "_compiled", lambda: compiled)
    else:
        monkeypatch.setattr(nesting, "_compiled", lambda: None)
    return request.param


def _nest(events):
    ts = np.array([e[0] for e in events], np.int64)
    end = np.array([e[0] + e[1] for e in events], np.int64)
    track = np.array([e[2] if len(e) > 2 else 0 for e in events], np.int32)
    return nest(ts, end, track)


def test_containment_makes_parents(walk):
    n = _nest([(0, 10), (1, 2), (3, 1)])
    assert n.parent.tolist() == [-1, 0, 0]
    assert n.row.tolist() == [0, 1, 1]


def test_equal_start_the_longer_is_the_parent(walk):
    n = _nest([(0, 5), (0, 10)])
    assert n.parent.tolist() == [1, -1]


def test_identical_intervals_nest_in_file_order(walk):
    n = _nest([(0, 5), (0, 5)])
    assert n.parent.tolist() == [-1, 0]


def test_zero_duration_never_contains_and_sits_inside_its_parent(walk):
    n = _nest([(0, 10), (4, 0), (4, 2), (8, 0), (8, 1)])
    # at equal start the longer comes first, so a zero-duration event is the child
    assert n.parent.tolist() == [-1, 2, 0, 4, 0]


def test_zero_duration_at_parent_end_is_not_a_child(walk):
    n = _nest([(0, 10), (10, 0)])
    assert n.parent.tolist() == [-1, -1]


def test_partial_overlap_is_not_nested_but_gets_its_own_row(walk):
    n = _nest([(0, 10), (5, 10)])
    assert n.parent.tolist() == [-1, -1]
    assert n.row.tolist() == [0, 1]  # pushed to the next free row, not dropped


def test_tracks_nest_independently(walk):
    n = _nest([(0, 10, 0), (1, 2, 1)])
    assert n.parent.tolist() == [-1, -1]


def test_subtree_sum_adds_descendants():
    parent = np.array([-1, 0, 1, 0])
    assert subtree_sum(parent, np.array([1, 2, 4, 8])).tolist() == [15, 6, 4, 8]


def test_python_frames_follow_their_python_ids(tmp_path):
    from conftest import X, write_trace

    from tui.model import load_trace
    from tui.model.analyses.results import Results

    # two background threads' frames reported on one (pid 0, tid 0) row: time chains them, ids do not
    events = [
        X(
            "threading.py(1032): _bootstrap",
            0,
            100,
            cat="python_function",
            pid=0,
            tid=0,
            Python_id=1,
            Python_parent_id=None,
        ),
        X("worker_a", 5, 20, cat="python_function", pid=0, tid=0, Python_id=2, Python_parent_id=1),
        X(
            "threading.py(1032): _bootstrap",
            30,
            60,
            cat="python_function",
            pid=0,
            tid=0,
            Python_id=3,
            Python_parent_id=None,
        ),
        X("worker_b", 35, 10, cat="python_function", pid=0, tid=0, Python_id=4, Python_parent_id=3),
        X("aten::add", 36, 2, pid=0, tid=0),
    ]
    a = Results(load_trace(write_trace(tmp_path / "t.json", events), use_cache=False))
    assert a.nesting.parent.tolist() == [-1, 0, -1, 2, 3]  # time alone would put frame 3 under frame 0


def test_ops_reuse_the_display_nesting_only_where_it_equals_torchs_host_nesting():
    """The ops table borrows the display nesting per thread; it must equal nesting host events alone."""
    from conftest import SAMPLES, shared_traces

    from tui.model import load_trace
    from tui.model.analyses.op_events import op_events
    from tui.model.analyses.ops import FILTERED, host_parent
    from tui.model.analyses.results import Results

    for path in sorted(SAMPLES.rglob("*.json.gz")) + shared_traces():
        a = Results(load_trace(path, use_cache=False))
        keep = np.array([n not in FILTERED for n in a.trace.names] + [True])
        ev = op_events(a.trace, keep[a.trace.x.name])
        end = a.trace.x.ts + a.trace.x.dur
        borrowed = host_parent(a.trace, ev, end, a.nesting)[0]
        alone = host_parent(a.trace, ev, end, None)[0]
        assert np.array_equal(borrowed[ev.host], alone[ev.host]), path


def _agree(ts, end, track):
    from nest_reference import nest_walk

    parent, row = nest_walk(ts, end, track)
    n = nest(ts, end, track)
    return np.array_equal(parent, n.parent) and np.array_equal(row, n.row)


def test_vectorized_nesting_agrees_with_the_walk_on_every_trace():
    from conftest import SAMPLES, shared_traces

    from tui.model import load_trace

    for path in sorted(SAMPLES.rglob("*.json.gz")) + shared_traces():
        x = load_trace(path, use_cache=False).x
        assert _agree(x.ts, x.ts + x.dur, x.track), path


@pytest.mark.parametrize("passes", [32, 1, 0])
def test_vectorized_nesting_agrees_with_the_walk_on_tangled_events(passes, monkeypatch):
    """Random events full of partial overlaps, ties and zero durations, several tracks; with the display rows' passes
    cut short (the walk taking over after 1, or at once), the same."""
    monkeypatch.setattr(nesting, "MAX_PASSES", passes)
    rng = np.random.default_rng(7)
    for _ in range(1500):
        n = int(rng.integers(1, 70))
        ts = rng.integers(0, 60, n).astype(np.int64)
        dur = np.where(rng.random(n) < 0.2, 0, rng.integers(0, 40, n)).astype(np.int64)
        track = rng.integers(0, 3, n).astype(np.int32)
        assert _agree(ts, ts + dur, track), (ts.tolist(), dur.tolist(), track.tolist())


def test_python_ids_found_by_guess_as_by_search():
    """A frame's parent by time is the guess for the frame its parent id names: taken where the ids are distinct
    and it holds that id, else the id is searched; either way the holder of the id's first appearance, -1 for ids
    that are not there."""
    from tui.model.nesting import _find_ids

    rng = np.random.default_rng(3)
    for distinct in (True, False):
        ids = rng.choice(10**9, 500, replace=False) if distinct else rng.integers(0, 300, 500)
        holders = rng.choice(10_000, 500, replace=False)
        wanted = np.concatenate([rng.choice(ids, 300), [-1, 10**10, -1]])
        first: dict[int, int] = {}
        for i, h in zip(ids.tolist(), holders.tolist(), strict=True):
            first.setdefault(i, h)
        right = np.array([first.get(w, -1) for w in wanted.tolist()])
        guess = np.where(rng.random(len(wanted)) < 0.7, right, rng.choice(holders, len(wanted)))
        guess_id = np.array([dict(zip(holders.tolist(), ids.tolist(), strict=True)).get(g, -1) for g in guess])
        found, named = _find_ids(ids, holders, wanted, guess, guess_id)
        assert named.tolist() == right.tolist()
        assert found.tolist() == [w in first for w in wanted.tolist()]


def test_a_chain_of_partial_overlaps_nests_in_linear_time_as_the_walk_does():
    """Each event overlapping the next partly, on 4 threads (a fresh-eyes user's file): the display rows took a pass
    per event (40 k events: 60 s; 2.6 M: past 14 minutes). Past MAX_PASSES the rows are walked one by one: the
    same rows as the walk, and no more passes than that."""
    n = 40_000
    i = np.arange(n)
    ts = ((i // 4) * 2_000).astype(np.int64)  # ts steps 2 us per 4 events: every event overlaps its track's next
    end = ts + 3_000
    track = (i % 4).astype(np.int32)
    calls = []
    real = nesting._rows
    nesting_rows = lambda *a: calls.append(real(*a)) or calls[-1]  # noqa: E731
    try:
        nesting._rows = nesting_rows
        assert _agree(ts, end, track)
    finally:
        nesting._rows = real
    assert calls and all(r is None for r in calls)  # the passes gave way to the walk
    rows = nest(ts, end, track).row
    assert set(rows.tolist()) == {0, 1}  # on each track, alternate rows hold the overlapping neighbours
