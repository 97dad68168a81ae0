"""A command's first load writes its cache entry behind the analyses (model/load/behind.py): the analyses do not wait
for the writes, the entry is whole when the command returns, and another opener still waits for the columns."""

from __future__ import annotations

import errno
import os
import threading
import time

import pytest
from conftest import copy_sample, wait_for_main

from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.results import Results
from tui.model.load import behind, cache, parse
from tui.model.load.cache import EntryStore, entry_dir

BERT = "h100-bert-small.json.gz"


def _slow_commit(monkeypatch, seconds: float, calls: list, gate: threading.Event | None = None) -> threading.Event:
    """cache.commit that waits `seconds` first (a slow disk), or until `gate` is set (at most 60 s); set when it has
    written."""
    commit, written = cache.commit, threading.Event()

    def slow(path, trace):
        calls.append(threading.current_thread().name)
        if gate is None:
            time.sleep(seconds)
        else:
            gate.wait(60)
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
    gate = threading.Event()  # the disk writes when the test says (a sleep raced a busy machine's summary)
    written = _slow_commit(monkeypatch, 0, calls, gate)
    with behind.written_behind() as problems:
        try:
            trace = load_trace(path)
            assert isinstance(trace.store, behind.Behind) and not written.is_set(), "load_trace waited for the write"
            results = Results(trace)
            summary = results.summary  # computed and kept while the columns are still being written
            assert not written.is_set(), "the summary waited for the columns' write"
            assert Results(trace).summary == summary, "a value kept behind reads back from the queue"
        finally:
            gate.set()
    assert written.is_set() and problems == [] and calls == ["tracetui-cache-writer"]
    assert Results(load_trace(path)).summary == summary
    assert load_trace(path).report.from_cache


def test_another_thread_opening_the_trace_waits_for_the_columns_and_reads_them(tmp_path, isolated_cache, monkeypatch):
    path = copy_sample(tmp_path, BERT)
    parsed: list[int] = []
    real_parse = parse.parse_file
    monkeypatch.setattr(parse, "parse_file", lambda *a, **k: parsed.append(1) or real_parse(*a, **k))
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

    def full(path, trace):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(cache, "commit", full)  # the disk filled up meanwhile
    assert main(["summary", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out == alone
    assert (
        err.strip()
        == f"tracetui: warning: {path}: its cache entry could not be written in {isolated_cache} (No space left on device)"
    )
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


def test_an_interrupt_leaves_no_traceback_and_no_unzipped_copy(tmp_path, isolated_cache, monkeypatch, capsys):
    """Ctrl-C while a gzip trace is read: exit 130, no traceback, and its copy unzipped into the cache is removed."""
    path = copy_sample(tmp_path, BERT)
    real_parse = parse.parse_file

    def interrupted(p, unzipped, progress=None):
        real_parse(p, unzipped, progress)  # the copy is unzipped into the cache
        assert unzipped is not None and unzipped.exists()
        raise KeyboardInterrupt

    monkeypatch.setattr(parse, "parse_file", interrupted)
    assert main(["summary", str(path)]) == 130
    assert capsys.readouterr().err == ""
    assert not list(isolated_cache.glob(".tracetui-unzipped/*.json")), "an unzipped copy was left without its entry"


def test_an_unzipped_copy_whose_entry_was_never_written_goes_after_a_day(tmp_path, isolated_cache):
    path = copy_sample(tmp_path, BERT)
    assert main(["summary", str(path), "--format", "json"]) == 0
    unzipped = isolated_cache / ".tracetui-unzipped"
    orphan, kept = unzipped / ("0" * 32 + ".json"), unzipped / (entry_dir(path).name + ".json")
    orphan.write_text("{}")
    day_ago = time.time() - 25 * 3600
    for f in (orphan, kept):
        os.utime(f, (day_ago, day_ago))
    cache.prune(isolated_cache)
    assert not orphan.exists() and kept.exists(), "only the copy with no entry goes"


async def test_the_viewer_says_a_cache_write_that_failed_while_it_runs(tmp_path, isolated_cache, monkeypatch):
    from tui.app import TraceApp

    path = copy_sample(tmp_path, BERT)

    def full(path, trace):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(cache, "commit", full)
    with behind.written_behind() as problems:
        app = TraceApp([str(path)])
        async with app.run_test() as pilot:
            await wait_for_main(pilot)
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
            told = [n.message for n in app._notifications if n.title == "cache"]
    assert told == [f"{path}: its cache entry could not be written in {isolated_cache} (No space left on device)"]
    assert problems == told, "and the command line says it again after the viewer"
