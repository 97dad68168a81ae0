"""A command that loads a big file not yet in the cache starts its decode's workers before its own imports
(parts.start_workers, issue 39): the load takes them; a cached file, a small one or a folder starts none, and
workers no load took are stopped."""

from __future__ import annotations

import gzip
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor

import pytest
from conftest import SAMPLES

from tui.model import load_trace
from tui.model.load import parts


def _plain(tmp_path):
    path = tmp_path / "t.json"
    path.write_bytes(gzip.decompress((SAMPLES / "a100-ddp-nccl.json.gz").read_bytes()))
    return path


def _no_children() -> bool:
    for _ in range(100):  # a pool shut down without waiting: its processes exit on their own, soon
        if not multiprocessing.active_children():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def pools(monkeypatch) -> list:
    """Every process pool made from now on."""
    made: list = []
    real = ProcessPoolExecutor.__init__

    def init(self, *args, **kwargs):
        made.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(ProcessPoolExecutor, "__init__", init)
    return made


def test_the_load_takes_the_workers_started_ahead(tmp_path, force_workers, pools):
    path = _plain(tmp_path)
    parts.start_workers(str(path))
    assert len(pools) == 1 and parts._SPARE  # started: one pool, its process spawning now
    trace = load_trace(path, use_cache=False)
    assert force_workers == [2] and trace.n
    assert len(pools) == 1 and not parts._SPARE  # the decode used that pool, and made none of its own
    assert _no_children()


def test_none_start_for_a_cached_small_or_missing_file(tmp_path, force_workers, pools, monkeypatch):
    path = _plain(tmp_path)
    load_trace(path)  # writes the cache entry (decoding in a pool of its own)
    pools.clear()
    parts.start_workers(str(path))  # the entry is there: nothing to decode
    parts.start_workers(str(tmp_path))  # a folder: its ranks are converted by a pool of their own
    parts.start_workers(str(tmp_path / "missing.json"))
    monkeypatch.setattr(parts, "PARALLEL_MIN_BYTES", path.stat().st_size + 1)
    parts.start_workers(str(path), use_cache=False)  # too small for workers
    assert not pools and not parts._SPARE


def test_workers_no_load_took_are_stopped(tmp_path, force_workers, pools):
    from tui.cli import main

    path = _plain(tmp_path)
    (tmp_path / "bad.json").write_text('{"traceEvents": []}')  # no events: the command fails after its decode
    parts.start_workers(str(path))
    parts.drop_workers()
    assert len(pools) == 1 and not parts._SPARE and _no_children()
    assert main(["summary", str(tmp_path / "bad.json"), "--no-cache"]) == 2  # started ahead, no decode took them
    assert len(pools) == 2 and not parts._SPARE and _no_children()
    assert main(["summary", str(path), "--no-cache"]) == 0
    assert len(pools) == 3 and not parts._SPARE and _no_children()  # started ahead, and the decode's own
