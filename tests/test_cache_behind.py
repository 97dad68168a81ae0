"""A command's first load writes its cache entry behind the analyses (model/load/behind.py): the analyses do not wait
for the writes, the entry is whole when the command returns, and another opener still waits for the columns."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import copy_sample

from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.results import Results
from tui.model.load import behind, cache, loader
from tui.model.load.cache import EntryStore, entry_dir

BERT = "h100-bert-small.json.gz"


def _slow_commit(monkeypatch, seconds: float, calls: list) -> threading.Event:
    """cache.commit that waits `seconds` first (a slow disk); set when it has written."""
    commit, written = cache.commit, threading.Event()

    def slow(path, trace):
        calls.append(threading.current_thread().name)
        time.sleep(seconds)
        ok = commit(path, trace)
        written.set()
        return ok

    monkeypatch.setattr(cache, "commit", slow)
    return written


def test_a_command_returns_with_its_entry_whole_and_prints_what_a_cached_run_prints(tmp_path, isolated_cache, capsys):
    path = copy_sample(tmp_path, BERT)
    assert main(["summary", str(path), "--format", "json"]) == 0
    first = capsys.readouterr().out
    derived = {f.name.partition("@")[0] for f in (entry_dir(path) / "derived").iterdir()}
    assert {"nesting", "links", "summary", "ops"} <= derived, "what the first run kept is on disk when it returns"
    assert not behind.active(), "write-behind ends with the command"
    assert main(["summary", str(path), "--format", "json"]) == 0
    assert capsys.readouterr().out == first
    assert load_trace(path).report.from_cache


def test_the_analyses_run_while_the_columns_are_written_and_read_back_what_they_kept(
    tmp_path, isolated_cache, monkeypatch
):
    path = copy_sample(tmp_path, BERT)
    calls: list[str] = []
    written = _slow_commit(monkeypatch, 0.5, calls)
    with behind.written_behind() as problems:
        trace = load_trace(path)
        assert isinstance(trace.store, behind.Behind) and not written.is_set(), "load_trace did not wait for the write"
        results = Results(trace)
        summary = results.summary  # computed and kept while the columns are still being written
        assert not written.is_set(), "the summary waited for the columns' write"
        assert Results(trace).summary == summary, "a value kept behind reads back from the queue"
    assert written.is_set() and problems == [] and calls == ["tracetui-cache-writer"]
    assert Results(load_trace(path)).summary == summary
    assert load_trace(path).report.from_cache


def test_another_thread_opening_the_trace_waits_for_the_columns_and_reads_them(tmp_path, isolated_cache, monkeypatch):
    path = copy_sample(tmp_path, BERT)
    parsed: list[int] = []
    parse = loader.parse_file
    monkeypatch.setattr(loader, "parse_file", lambda *a, **k: parsed.append(1) or parse(*a, **k))
    written = _slow_commit(monkeypatch, 0.5, [])
    with behind.written_behind():
        first = load_trace(path)
        second = load_trace(path)  # the entry's lock is the writer's until the columns are in place
        assert written.is_set(), "the second opener did not wait for the columns"
    assert parsed == [1] and not first.report.from_cache and second.report.from_cache
    assert second.n == first.n


def test_a_failed_write_is_a_warning_and_the_results_stand(tmp_path, isolated_cache, monkeypatch, capsys):
    path = copy_sample(tmp_path, BERT)
    assert main(["summary", str(path), "--no-cache"]) == 0
    alone = capsys.readouterr().out
    monkeypatch.setattr(cache, "commit", lambda path, trace: False)  # e.g. the disk filled up meanwhile
    assert main(["summary", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out == alone
    assert f"tracetui: warning: {path}: the cache directory" in err and "nothing was cached" in err
    assert not entry_dir(path).exists() or not (entry_dir(path) / "derived").exists()


@pytest.mark.parametrize("inside", [False, True])
def test_a_library_load_writes_as_it_goes(tmp_path, isolated_cache, inside):
    """Outside a command (the model, the API), or with the cache off, nothing is written behind."""
    path = copy_sample(tmp_path, BERT)
    if inside:
        with behind.written_behind():
            trace = load_trace(path, use_cache=False)
        assert trace.store is None
        return
    trace = load_trace(path)
    assert isinstance(trace.store, EntryStore) and cache.read(path) is not None
