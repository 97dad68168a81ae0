"""The on-disk cache: where it lives, when it is used, rebuilt or skipped."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES, X, copy_sample, write_trace

from tui.model import load_trace
from tui.model.load.cachedir import entry_dir


def test_second_open_comes_from_the_cache_with_the_same_columns(tmp_path, isolated_cache):
    path = copy_sample(tmp_path)
    first = load_trace(path)
    second = load_trace(path)
    assert not first.report.from_cache and second.report.from_cache
    assert isinstance(second.x.ts, np.memmap)
    for key in first.x.dtypes():
        assert np.array_equal(first.x.column(key), second.x.column(key))
    assert [t.name for t in first.tracks] == [t.name for t in second.tracks]
    assert entry_dir(path).parent == isolated_cache


def test_cache_is_never_written_beside_the_trace(tmp_path):
    path = copy_sample(tmp_path)
    load_trace(path)
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_stale_entry_is_rebuilt_when_the_file_changes(tmp_path):
    path = copy_sample(tmp_path)
    load_trace(path)
    os.utime(path, ns=(1, 1))
    assert not load_trace(path).report.from_cache


def test_an_edit_in_the_middle_with_the_mtime_put_back_is_read_again(tmp_path):
    """Only the head and tail are hashed: the change time (any write moves it, `touch -r` cannot set it back) tells
    an edit between them. A fresh-eyes run changed one digit of a dur and got the old GPU busy time."""
    path = tmp_path / "t.json"
    write_trace(path, [X(f"aten::op{k}", 10 * k, 5) for k in range(5000)])  # well past the 64 KB hashed at each end
    assert load_trace(path).x.dur.sum() == 5 * 5000 * 1000  # (ns)
    st = path.stat()
    text = path.read_bytes()
    middle = text.index(b'"dur": 5', len(text) // 2)
    path.write_bytes(text[:middle] + b'"dur": 7' + text[middle + 8 :])  # the same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the same mtime
    again = load_trace(path)
    assert not again.report.from_cache and again.x.dur.sum() == (5 * 5000 + 2) * 1000


def test_corrupt_entry_is_ignored_and_rebuilt(tmp_path):
    path = copy_sample(tmp_path)
    load_trace(path)
    (entry_dir(path) / "x.ts.npy").write_bytes(b"garbage")
    again = load_trace(path)
    assert not again.report.from_cache and again.n == 270
    assert load_trace(path).report.from_cache


def test_no_cache_writes_nothing(tmp_path, isolated_cache):
    path = copy_sample(tmp_path)
    load_trace(path, use_cache=False)
    assert [p.name for p in isolated_cache.iterdir()] == ["CACHEDIR.TAG"]  # (the fixture's tag only)


UNMADE = "/proc/tracetui-cache"  # a folder nobody can make, root included (a file in its way is a bad setting)
ON_LINUX = pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="Linux's /proc makes the unmade folder")


@ON_LINUX
def test_unwritable_cache_dir_still_loads(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACETUI_CACHE_DIR", UNMADE)
    assert load_trace(copy_sample(tmp_path)).n == 270


def test_plain_json_is_cached_and_args_still_read_from_the_trace(tmp_path):
    import gzip

    from tui.model.load.args import event_args

    path = tmp_path / "plain.json"
    path.write_bytes(gzip.decompress((SAMPLES / "b300-moe-small.json.gz").read_bytes()))
    first = load_trace(path)
    again = load_trace(path)
    assert again.report.from_cache and again.sources == [str(path)]
    kernel = int(np.flatnonzero(again.x.cat == 4)[0])
    assert event_args(again, kernel) == event_args(first, kernel) and "correlation" in event_args(again, kernel)


def _entries(root):
    return [d for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")]


def test_old_entries_are_pruned_when_a_new_one_is_written(tmp_path, isolated_cache, monkeypatch):
    import tui.model.load.cachedir as cachedir

    monkeypatch.setattr(cachedir, "KEEP_ENTRIES", 2)
    paths = []
    for k in range(4):
        p = tmp_path / f"t{k}.json.gz"
        shutil.copy(SAMPLES / "cpu-only-gloo.json.gz", p)
        os.utime(p, ns=(k * 10**9, k * 10**9))
        paths.append(p)
        load_trace(p)  # writing the entry prunes the older ones
        os.utime(entry_dir(p), (1000 + k, 1000 + k))  # the write order, as mtimes (coarse clocks tie)
    left = sorted(d.name for d in _entries(isolated_cache))
    assert left == sorted(entry_dir(p).name for p in paths[2:])
    assert sorted(f.name for f in (isolated_cache / ".tracetui-unzipped").glob("*.json")) == sorted(
        entry_dir(p).name + ".json" for p in paths[2:]
    )


def test_entries_beyond_the_disk_budget_are_pruned_the_newest_always_stays(tmp_path, isolated_cache, monkeypatch):
    import tui.model.load.cachedir as cache

    paths = []
    for k in range(3):
        p = tmp_path / f"t{k}.json.gz"
        shutil.copy(SAMPLES / "h100-bert-small.json.gz", p)
        paths.append(p)
        load_trace(p)
        os.utime(entry_dir(p), (1000 + k, 1000 + k))
    one = cache._size(entry_dir(paths[0]))
    assert one > 100_000 and len(_entries(isolated_cache)) == 3
    monkeypatch.setenv("TRACETUI_CACHE_MAX_GB", str(1.5 * one / 1e9))  # room for one entry and a half
    cache.prune(isolated_cache)
    assert [d.name for d in _entries(isolated_cache)] == [entry_dir(paths[2]).name]
    monkeypatch.setenv("TRACETUI_CACHE_MAX_GB", "0")
    cache.prune(isolated_cache)  # the newest stays, whatever the budget
    assert [d.name for d in _entries(isolated_cache)] == [entry_dir(paths[2]).name]


def _results(path):
    from tui.model.analyses.results import Results

    return Results(load_trace(path))


def test_derived_data_is_kept_and_read_back_without_recomputing(tmp_path, monkeypatch):
    import tui.model.analyses.results as results

    path = copy_sample(tmp_path)
    first = _results(path)
    ops, summary, parent = first.ops, first.summary, np.array(first.nesting.parent)

    def forbidden(*args, **kwargs):
        raise AssertionError("recomputed although the cache has it")

    monkeypatch.setattr(results, "ops_table", forbidden)
    monkeypatch.setattr(results, "summarize", forbidden)
    again = _results(path)
    assert again.summary == summary and again.ops == ops
    assert isinstance(again.nesting.parent, np.memmap) and np.array_equal(again.nesting.parent, parent)


def test_summary_of_a_cached_trace_touches_only_the_summary(tmp_path, monkeypatch):
    import tui.model.analysis as analysis

    path = copy_sample(tmp_path)
    assert _results(path).summary.verdict

    def forbidden(*args, **kwargs):
        raise AssertionError("nested again")

    monkeypatch.setattr(analysis, "nest", forbidden)
    assert _results(path).summary.verdict


def test_a_truncated_derived_file_is_recomputed_not_trusted(tmp_path):
    path = copy_sample(tmp_path)
    parent = np.array(_results(path).nesting.parent)
    (stored,) = (entry_dir(path) / "derived").glob("nesting@*.parent.npy")  # under the fingerprint of its code
    stored.write_bytes(stored.read_bytes()[:-100])
    again = _results(path)
    assert np.array_equal(again.nesting.parent, parent)


@pytest.mark.parametrize("how", ["dtype", "length", "format"])
def test_an_altered_entry_is_ignored_and_rebuilt(tmp_path, how):
    import json

    path = copy_sample(tmp_path)
    load_trace(path)
    entry = entry_dir(path)
    if how == "dtype":
        np.save(entry / "x.dur.npy", np.load(entry / "x.dur.npy").astype(np.float64))
    elif how == "length":
        np.save(entry / "x.ts.npy", np.load(entry / "x.ts.npy")[:-1])
    else:
        meta = json.loads((entry / "meta.json").read_text())
        meta["format"] = 1
        (entry / "meta.json").write_text(json.dumps(meta))
    again = load_trace(path)
    assert not again.report.from_cache and again.n == 270 and again.x.dur.dtype == np.int64


def test_two_processes_opening_one_trace_leave_a_sound_entry(tmp_path, isolated_cache):
    import subprocess
    import sys

    path = copy_sample(tmp_path, "h100-bert-small.json.gz")
    code = f"from tui.model.analyses.results import Results; from tui.model import load_trace; print(Results(load_trace({str(path)!r})).summary.verdict)"
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate()[0].strip() for p in procs]
    assert outs == ["overhead-bound"] * 3 and all(p.returncode == 0 for p in procs)
    again = _results(path)
    assert again.trace.report.from_cache and again.summary.verdict == "overhead-bound"
    assert not [p for p in isolated_cache.rglob(".*") if p.is_file()]  # no temporary files left


@ON_LINUX
def test_an_unwritable_cache_dir_is_one_warning_not_a_failure(tmp_path, monkeypatch, capsys):
    """A folder that cannot be made (a file in its way is a bad setting: tests/cli/test_settings.py)."""
    from tui.cli import main

    monkeypatch.setenv("TRACETUI_CACHE_DIR", UNMADE)
    assert main(["summary", str(copy_sample(tmp_path)), "--format", "json"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot be written" in err and UNMADE in err


def test_the_launch_links_come_back_from_the_cache_memory_mapped(tmp_path):
    """Links hold three counters besides their arrays; the whole value must read back (it once never did)."""
    path = copy_sample(tmp_path)
    links = _results(path).links
    again = _results(path).links
    assert isinstance(again.launcher, np.memmap) and np.array_equal(again.launcher, links.launcher)
    assert (again.flows_paired, again.flows_agree) == (links.flows_paired, links.flows_agree)


def test_what_a_killed_run_left_in_the_cache_goes_after_a_day(isolated_cache, tmp_path):
    import os
    import time

    from tui.model.load import cachedir

    assert cachedir.ensure_root() and cachedir.cache_root() == isolated_cache
    old, fresh = (cachedir.own_tempdir(".parts-", isolated_cache) for _ in range(2))
    for folder in (old, fresh):
        (folder / "part-1.bin").write_bytes(b"x")
    day_ago = time.time() - 2 * 24 * 3600
    os.utime(old, (day_ago, day_ago))
    cachedir.prune(isolated_cache)
    assert not old.exists() and fresh.exists()  # a decode may be writing the fresh one right now


def test_a_killed_writers_partial_files_and_the_locks_of_gone_entries_go_after_a_day(isolated_cache):
    """A half-unzipped source and a lock file whose entry was removed, a day old, go; a fresh one, a lock whose
    entry is there, and a lock a writer holds now, stay."""
    import os
    import time

    from tui.model.load import cachedir
    from tui.model.load.flight import one_writer, private_file

    assert cachedir.ensure_root()
    day_ago = time.time() - 2 * 24 * 3600
    unzipped, locks = isolated_cache / ".tracetui-unzipped", isolated_cache / ".tracetui-locks"
    old_part, fresh_part = (Path(private_file(unzipped / f"{k * 32}.json")[1]) for k in ("a", "b"))
    orphan, kept, held = (locks / f"{k * 32}.lock" for k in ("c", "d", "e"))
    cachedir.own_tempdir(".tmp-old-", isolated_cache).rename(isolated_cache / ("d" * 32))
    for f in (orphan, kept, held):
        f.write_bytes(b"")
    for f in (old_part, orphan, kept, held):
        os.utime(f, (day_ago, day_ago))
    with one_writer(held, wait_s=1):
        os.utime(held, (day_ago, day_ago))  # taken long ago, still held
        cachedir.prune(isolated_cache)
    assert not old_part.exists() and not orphan.exists()
    assert fresh_part.exists() and kept.exists() and held.exists()
