"""The compiled nesting (numba, taken where the compiled scan has imported numba) equals the nesting in numpy's
passes: on every sample and shared trace, and on drawn tracks of ties, zero durations and partial overlaps."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields

import numpy as np
import pytest
from conftest import SAMPLES, shared_traces

import tui.model.nesting as nesting
from tui.model import load_trace
from tui.model.nesting import depth_of, nearest_kept_levels, nest, nest_track_passes

compiled_module = pytest.importorskip("tui.model.nesting_compiled", reason="numba (the fast extra) is not installed")
compiled = compiled_module.nest_track

OUTPUTS = ("parent", "depth", "row", "killer", "span_end")


def _same_track(s: np.ndarray, e: np.ndarray) -> None:
    order = np.lexsort((np.arange(len(s)), -e, s))  # the visiting order: start, then the longer first
    s, e = s[order], e[order]
    for name, passes, walked in zip(OUTPUTS, nest_track_passes(s, e), compiled(s, e), strict=True):
        assert passes.dtype == walked.dtype, name
        assert np.array_equal(passes, walked), (name, np.flatnonzero(passes != walked)[:5])


@pytest.mark.parametrize("seed", range(4))
def test_drawn_tracks_nest_alike(seed):
    """Small tracks on a coarse clock: many events start or end together, a fifth last no time, most overlap."""
    rng = np.random.default_rng(seed)
    for _ in range(400):
        n = int(rng.integers(0, 60))
        s = rng.integers(0, int(rng.integers(1, 40)), n).astype(np.int64)
        d = rng.integers(0, int(rng.integers(1, 40)), n).astype(np.int64) * (rng.random(n) > 0.2)
        _same_track(s, s + d)


def test_a_chain_of_partial_overlaps_nests_alike():
    """Each event overlapping the next partly, past what the passes settle (nest_track_passes walks it then)."""
    n = 3 * nesting.MAX_PASSES
    s = np.arange(n, dtype=np.int64) * 10
    _same_track(s, s + 15)
    assert nesting._rows(*_rows_inputs(s, s + 15)) is None  # the passes gave way to the walk: that path was compared


def _rows_inputs(s: np.ndarray, e: np.ndarray):
    parent, depth, _, killer, span_end = nest_track_passes(s, e)
    dead = np.flatnonzero(killer >= 0)
    closes = np.searchsorted(s, e, side="left")
    return parent, depth, dead, killer, closes, span_end


def _traces() -> list:
    return sorted(SAMPLES.glob("*.json.gz")) + [p for p in shared_traces() if p.stat().st_size < 60 << 20]


@pytest.mark.parametrize("path", _traces(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_trace_nests_alike(path, monkeypatch):
    """The whole nesting (pieces, wrappers, threads), with the compiled walk and with the passes."""
    x = load_trace(path, use_cache=False).x
    end, mask = x.ts + x.dur, x.dur >= 0
    monkeypatch.setattr(nesting, "_compiled", lambda: None)
    passes = nest(x.ts, end, x.track, mask)
    monkeypatch.setattr(nesting, "_compiled", lambda: compiled_module)
    walked = nest(x.ts, end, x.track, mask)
    for f in fields(passes):
        assert np.array_equal(getattr(passes, f.name), getattr(walked, f.name)), f.name


def test_a_trace_msgspec_reads_never_imports_numba():
    """The compiled nesting is taken only where numba is imported already: a default load's analyses leave it out."""
    code = (
        "import sys; from tui.model import load_trace; from tui.model.analysis import Analysis; "
        f"a = Analysis(load_trace({str(SAMPLES / 'h100-bert-small.json.gz')!r}, use_cache=False)); a.nesting; "
        "print('numba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_numba_imported_takes_the_compiled_functions(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", sys.modules.get("numba") or __import__("numba"))
    assert nesting._compiled() is compiled_module


@pytest.mark.parametrize("seed", range(3))
def test_drawn_forests_find_the_same_nearest_kept_ancestor(seed):
    """The compiled climb (each node's answer shared by every left-out node it climbed through) gives the level
    passes' answer on drawn forests: any numbering, long runs of left-out ancestors, nothing or everything kept."""
    rng = np.random.default_rng(seed)
    for _ in range(300):
        n = int(rng.integers(0, 200))
        label = rng.permutation(n)  # node k of a topological order is numbered label[k]
        parent = np.full(n, -1, np.int32)
        for k in range(1, n):
            if rng.random() < 0.9:
                parent[label[k]] = label[int(rng.integers(max(0, k - 5), k))]  # deep chains, mostly
        keep = rng.random(n) < rng.choice([0.0, 0.1, 0.5, 1.0])
        want = nearest_kept_levels(parent, keep, depth_of(parent))
        got = compiled_module.nearest_kept(parent, keep)
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_the_host_tree_of_every_sample_reads_alike_compiled(monkeypatch):
    """The ops table's host tree (nearest_kept over the display nesting) on each sample, with numba's functions
    and without: the same ops table, row for row."""
    from tui.model.analyses.results import Results

    for path in sorted(SAMPLES.rglob("*.json.gz")):
        trace = load_trace(path)
        monkeypatch.setattr(nesting, "_compiled", lambda: None)
        passes = Results(trace).ops
        monkeypatch.setattr(nesting, "_compiled", lambda: compiled_module)
        walked = Results(trace).ops
        assert passes == walked, path.name
