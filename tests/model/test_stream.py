"""Lanes first: while a file decodes, traces of the events decoded so far (model side of issue 29, deliverable 3)."""

from __future__ import annotations

import gzip
from collections import Counter

import numpy as np
import pytest
from conftest import SAMPLES

from tui.model import load_trace
from tui.model.analysis import Analysis
from tui.model.load.args import event_args
from tui.model.load.stream import partial_traces
from tui.model.view.lanes import LaneIndex


@pytest.fixture
def small_chunks(monkeypatch):
    import tui.model.load.source

    monkeypatch.setattr(tui.model.load.source, "CHUNK_BYTES", 32 << 10)


def _plain(tmp_path, name="h100-bert-small.json.gz"):
    path = tmp_path / "t.json"
    path.write_bytes(gzip.decompress((SAMPLES / name).read_bytes()))
    return path


def _events(t) -> Counter:
    return Counter(zip(t.x.ts.tolist(), (t.names[i] for i in t.x.name.tolist()), strict=True))


def _watch(path, **load):
    seen: list = []
    with partial_traces(lambda trace, fraction: seen.append((trace, fraction)), every_s=0, first_s=0, pace=0):
        final = load_trace(path, **load)
    return seen, final


def test_partial_traces_hold_the_events_decoded_so_far(tmp_path, small_chunks):
    path = _plain(tmp_path)
    seen, final = _watch(path, use_cache=False)
    assert len(seen) >= 3
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions) and 0 < fractions[0] and fractions[-1] < 1
    sizes = [t.n for t, _ in seen]
    assert sizes == sorted(sizes) and sizes[-1] < final.n  # growing, and never the whole trace
    whole = _events(final)
    for partial, _ in seen:
        assert not _events(partial) - whole  # each event decoded so far is in the final trace, as it is there


def test_watching_changes_nothing_in_the_final_trace(tmp_path, small_chunks):
    path = _plain(tmp_path)
    _, watched = _watch(path, use_cache=False)
    plain = load_trace(path, use_cache=False)
    for table in ("x", "inst", "flow"):
        for key, column in getattr(plain, table).columns().items():
            assert np.array_equal(column, getattr(watched, table).column(key)), f"{table}.{key}"
    assert watched.names == plain.names and watched.tracks == plain.tracks


def test_a_partial_trace_paints_lanes_and_reads_its_args(tmp_path, small_chunks):
    path = _plain(tmp_path)
    seen, final = _watch(path, use_cache=False)
    partial = seen[len(seen) // 2][0]
    lanes = LaneIndex(Analysis(partial))
    assert lanes.rows and lanes.t_min >= int(final.x.ts.min())
    i = partial.n - 1  # its args come from its own chunk rows: the same as the final trace's for that event
    j = int(np.flatnonzero((final.x.ts == partial.x.ts[i]) & (final.x.dur == partial.x.dur[i]))[0])
    assert event_args(partial, i) == event_args(final, j)


def test_partial_traces_from_worker_processes(tmp_path, force_workers):
    path = _plain(tmp_path, "a100-ddp-nccl.json.gz")
    seen, final = _watch(path, use_cache=False)
    assert force_workers == [2] and seen
    whole = _events(final)
    assert all(not _events(t) - whole and t.n < final.n for t, _ in seen)


def test_a_cached_trace_makes_no_partial_traces(tmp_path, small_chunks):
    path = _plain(tmp_path)
    load_trace(path)  # writes the cache
    seen, final = _watch(path)
    assert final.report.from_cache and seen == []


def test_nobody_watching_outside_the_block(tmp_path, small_chunks):
    path = _plain(tmp_path)
    seen: list = []
    with partial_traces(lambda t, f: seen.append(f), every_s=0, first_s=0, pace=0):
        pass
    load_trace(path, use_cache=False)
    assert seen == []


def test_partial_traces_are_paced_by_what_they_cost(tmp_path, small_chunks):
    """A slow consumer (a viewer nesting each partial trace) gets fewer: the decode waits while one is made."""
    import time

    path = _plain(tmp_path)
    fast, slow = [], []
    with partial_traces(lambda t, f: fast.append(f), every_s=0, first_s=0, pace=0):
        load_trace(path, use_cache=False)
    with partial_traces(lambda t, f: (slow.append(f), time.sleep(0.02)), every_s=0, first_s=0, pace=1000):
        load_trace(path, use_cache=False)
    assert len(slow) == 1 < len(fast)


def test_a_load_stopped_from_its_progress_stops_its_workers(tmp_path, force_workers):
    """The app stops a load the user left by raising from the progress callback: nothing is left running."""
    import multiprocessing

    path = _plain(tmp_path, "a100-ddp-nccl.json.gz")

    class Stop(Exception):
        pass

    def progress(fraction):
        raise Stop

    with pytest.raises(Stop):
        load_trace(path, use_cache=False, progress=progress)
    assert not multiprocessing.active_children()
