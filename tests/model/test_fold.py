"""Parts folded into the final columns as they arrive (tui/model/load/fold.py, issue 39): whatever order they come
in and however far off the estimate of the file's size is, the result is the parts merged at once; a worker's part
is folded, never decoded again."""

from __future__ import annotations

import gzip
import random
import time

import numpy as np
import pytest
from conftest import SAMPLES

from tui.model import load_trace
from tui.model.load import parts as parts_module
from tui.model.load.fold import Fold
from tui.model.load.parts import JOB_CHUNKS, decode_range, merge_parts
from tui.model.load.source import ChunkReader, split_chunks


def _decoded(tmp_path, monkeypatch, name="h100-bert-small.json.gz"):
    """The sample's parts as a parallel decode makes them (jobs of JOB_CHUNKS small chunks), and its event bytes."""
    import tui.model.load.source
    from tui.model.load.locate import open_source

    monkeypatch.setattr(tui.model.load.source, "CHUNK_BYTES", 32 << 10)
    path = tmp_path / "t.json"
    path.write_bytes(gzip.decompress((SAMPLES / name).read_bytes()))
    chunks = split_chunks(open_source(path, None))
    with ChunkReader(path) as read:
        parts = [decode_range(read, chunks[k : k + JOB_CHUNKS], -1, k) for k in range(0, len(chunks), JOB_CHUNKS)]
    assert len(parts) >= 4
    return parts, sum(end - start for start, end in chunks)


def _same(a, b) -> None:
    for table in ("x", "inst", "flow"):
        for key, column in getattr(a, table).columns().items():
            assert np.array_equal(column, getattr(b, table).column(key)), f"{table}.{key}"
    assert (a.names, a.cat_names, a.shapes, a.tracks, a.rows) == (b.names, b.cat_names, b.shapes, b.tracks, b.rows)
    assert a.report.events == b.report.events and a.meta == b.meta


@pytest.mark.parametrize("estimate", [1.0, 0.01, 10.0])  # the file's size as told: right, far too small, too big
def test_parts_folded_in_any_order_are_the_parts_merged_at_once(tmp_path, monkeypatch, estimate):
    parts, size = _decoded(tmp_path, monkeypatch)
    whole = merge_parts(parts, keep=True)
    fold = Fold(int(size * estimate))
    arrivals = list(range(len(parts)))
    random.Random(7).shuffle(arrivals)
    for k in arrivals:
        fold.offer(k, parts[k])
        if fold.next:  # what is folded so far is the run of parts from the first
            _same(fold.snapshot(), merge_parts(parts[: fold.next], keep=True))
    rows = len(fold.columns["x"]["ts"])
    result = fold.result()
    _same(result, whole)
    assert rows >= result.x.ts.size  # the room held them (grown where the estimate was short), cut to length


def test_a_fold_cannot_end_with_a_part_missing(tmp_path, monkeypatch):
    parts, size = _decoded(tmp_path, monkeypatch)
    fold = Fold(size)
    for k in range(1, len(parts)):
        fold.offer(k, parts[k])
    assert fold.next == 0
    with pytest.raises(ValueError, match="without part 0"):
        fold.result()


def test_a_workers_part_is_folded_not_decoded_again(tmp_path, force_workers, monkeypatch, isolated_cache):
    """Each job is decoded once: by this process or by a worker, whose part comes back spilled in a file (the fold
    once removed the decode's folder with the first part's file, so every later worker failed and its job was
    decoded again here, the trace still right)."""
    path = tmp_path / "t.json"
    path.write_bytes(gzip.decompress((SAMPLES / "a100-ddp-nccl.json.gz").read_bytes()))
    jobs, here, spilled = [], [], []
    run_init, run_here, offer = parts_module._Run.__init__, parts_module._Run.here, Fold.offer

    def init(self, todo, *args):
        jobs.extend(todo)
        run_init(self, todo, *args)

    def slow_here(self, k):  # leaves the worker time to start and take jobs
        time.sleep(0.3)
        here.append(k)
        run_here(self, k)

    def counted_offer(self, k, part):
        if part.spilled is not None:
            spilled.append(k)
        offer(self, k, part)

    monkeypatch.setattr(parts_module._Run, "__init__", init)
    monkeypatch.setattr(parts_module._Run, "here", slow_here)
    monkeypatch.setattr(Fold, "offer", counted_offer)
    many = load_trace(path, use_cache=False)
    assert force_workers == [2] and spilled, "no worker decoded a job"
    assert sorted(here + spilled) == list(range(len(jobs)))
    assert many.n and not list(isolated_cache.glob(".parts-*"))  # no spilled file or folder is left
