"""Many at once: threads and processes opening one trace, the Python API from threads, SQL queries side by side.

Each check makes the same calls at once and alone, and asserts the answers are equal and the cache holds one
sound entry written once.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, SAMPLES, copy_sample

import tracetui
from tui.model import load_trace
from tui.model.load import cache, parse
from tui.model.load.flight import SingleFlight, one_writer, remove_lock

BERT = "h100-bert-small.json.gz"
THREADS = 8
# what each thread asks a trace, in a different order per thread: the API's methods, each answer as data
CALLS: dict[str, Callable[[tracetui.Trace], object]] = {
    "summary": lambda t: t.summary(),
    "explain": lambda t: t.explain(),
    "ops": lambda t: t.ops(sort="self_cpu", limit=20),
    "ops by shape": lambda t: t.ops(group_by_shape=True),
    "kernels": lambda t: t.kernels(),
    "code": lambda t: t.code(all_frames=True),
    "memory": lambda t: t.memory(),
    "roofline": lambda t: t.roofline(),
    "critical": lambda t: t.critical(what_if=["launch=0"]),
    "steps": lambda t: t.steps(),
    "events": lambda t: t.events(name="gemm|memcpy", limit=0),
    "event": lambda t: t.event(100),
    "sql": lambda t: t.sql("SELECT kind, count(*) AS n, sum(dur_us) AS us FROM events GROUP BY kind ORDER BY kind"),
    "sql join": lambda t: t.sql(
        "SELECT count(*) AS n FROM launches l JOIN events e ON e.id = l.activity_id WHERE e.kind = 'kernel'"
    ),
}


def together(n: int, fn: Callable[[int], object]) -> list[object]:
    """fn(k) for k in range(n), each in its own thread, all released at the same moment."""
    start = threading.Barrier(n)

    def run(k: int) -> object:
        start.wait()
        return fn(k)

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(run, range(n)))


def leftovers(root: Path) -> list[Path]:
    """What a writer left in the cache besides entries, sources and lock files: temporary files and folders."""
    return [p for p in root.rglob(".*") if not p.name.startswith(".tracetui-")]  # (the folders of locks, sources)


# --- the mechanisms ---------------------------------------------------------------------------------------


def test_callers_of_one_key_share_one_run_and_its_error():
    flight: SingleFlight[int] = SingleFlight()
    runs = []

    def slow() -> int:
        runs.append(1)
        time.sleep(0.2)
        return 42

    assert together(THREADS, lambda k: flight.do("a", slow)) == [42] * THREADS
    assert len(runs) == 1  # seven waited for the first
    assert flight.do("a", slow) == 42 and len(runs) == 2  # a call after it ended runs again

    def failing() -> int:
        runs.append(1)
        time.sleep(0.2)
        raise tracetui.TraceError("x.json", "no such file")

    def attempt(k: int) -> str:
        try:
            return str(flight.do("b", failing))
        except tracetui.TraceError as exc:
            return str(exc)

    before = len(runs)
    assert together(4, attempt) == ["x.json: no such file"] * 4 and len(runs) == before + 1


def test_one_writer_at_a_time_among_threads_and_a_removed_lock_file_is_taken_again(tmp_path):
    lock = tmp_path / "entry.lock"
    inside, most = [0], [0]
    guard = threading.Lock()

    def write(k: int) -> bool:
        with one_writer(lock, wait_s=30) as held:
            with guard:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.02)
            with guard:
                inside[0] -= 1
            return held

    assert together(THREADS, write) == [True] * THREADS and most[0] == 1
    assert lock.exists() and remove_lock(lock) and not lock.exists()  # nobody holds it: removed
    with one_writer(lock, wait_s=30):
        assert not remove_lock(lock) and lock.exists()  # held: it stays


def test_a_writer_that_outlasts_the_wait_is_not_waited_for_longer(tmp_path):
    lock = tmp_path / "entry.lock"
    code = f"from pathlib import Path; import time; from tui.model.load.flight import one_writer\nwith one_writer(Path({str(lock)!r}), 5):\n    print('held', flush=True); time.sleep(30)"
    holder = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        began, waits = time.monotonic(), []
        with one_writer(lock, wait_s=0.3, on_wait=lambda: waits.append(time.monotonic())) as held:
            entered = time.monotonic()
            assert not held  # the other process holds it: the block runs anyway, after the wait
        assert 0.3 <= entered - began < 5  # the holder keeps it 30 s: not waited for
        assert len(waits) == 1 and began <= waits[0] < entered  # told once, while it waited (no time bound: load)
    finally:
        holder.kill()
        holder.wait()
    with one_writer(lock, wait_s=5, on_wait=lambda: waits.append(0.0)) as held:  # a killed holder's went with it
        assert held and len(waits) == 1  # nobody held it: no wait told


def test_threads_making_a_fresh_cache_folder_at_once_all_get_to_use_it(tmp_path, monkeypatch, recwarn):
    """GIVEN a cache folder not made yet (or made and tagged, its folders of locks and unzipped sources not yet)
    WHEN 8 threads open traces at once THEN every one may use it: the tag another wrote between one's look and
    its take is no stranger's file (each fresh folder was a one-in-eight chance of a lost cache before)."""
    from tui.model.load import cachedir

    refused = 0
    for trial in range(40):
        root = tmp_path / f"cache{trial}"
        if trial % 2:
            root.mkdir()
            cachedir.tag(root)
        monkeypatch.setenv("TRACETUI_CACHE_DIR", str(root))
        refused += together(THREADS, lambda k: cachedir.ensure_root()).count(False)
        assert all(cachedir.is_tagged(f) for f in (root, root / cachedir.LOCKS, root / cachedir.UNZIPPED))
        assert not (root / cachedir.SUBFOLDER).exists()  # all took the one folder (none thought it a stranger's)
    assert refused == 0
    # nor a file: the setting's check looked twice (is_dir, then exists) and another thread made the folder between
    assert not [str(w.message) for w in recwarn if "is not a folder's path" in str(w.message)]


# --- the cache: threads, then processes and threads ----------------------------------------------------------


def test_threads_opening_one_trace_parse_it_once_and_read_the_entry(tmp_path, isolated_cache, monkeypatch):
    """GIVEN a gzip trace (unzipped into the cache) and no entry WHEN 8 threads load it at once THEN one parses it
    and writes the entry while the others wait, then map what it wrote; nothing temporary is left behind."""
    path = copy_sample(tmp_path, BERT)
    alone = load_trace(path, use_cache=False)
    parsed = []
    real_parse = parse.parse_file
    monkeypatch.setattr(parse, "parse_file", lambda *a, **k: parsed.append(1) or real_parse(*a, **k))
    traces = together(THREADS, lambda k: load_trace(path))
    assert len(parsed) == 1
    assert sorted(t.report.from_cache for t in traces) == [False] + [True] * (THREADS - 1)  # type: ignore[attr-defined]
    for t in traces:
        assert t.names == alone.names and np.array_equal(t.x.ts, alone.x.ts) and np.array_equal(t.x.dur, alone.x.dur)  # type: ignore[attr-defined]
    assert leftovers(isolated_cache) == [], "temporary files left in the cache"
    assert cache.read(path) is not None


def test_two_processes_of_threads_opening_one_trace_parse_it_once(tmp_path, isolated_cache):
    """GIVEN two processes of 4 threads each WHEN all load one trace through tracetui.load at once THEN one thread
    of one process parses it (the threads of a process share one opening; the other process waits on the entry's
    lock file and reads it) and every thread's answers are the answers of the trace opened alone."""
    path = copy_sample(tmp_path, BERT)
    script = f"""
import json, threading, time, tracetui
start = {time.time() + 4.0!r}  # the same moment in both processes, once both are up
def run(k, out):
    time.sleep(max(start - time.time(), 0))
    t = tracetui.load({str(path)!r})
    out[k] = [t.results.trace.report.from_cache, t.summary(), t.ops(limit=10), t.sql("SELECT count(*) AS n FROM events")]
out = [None] * 4
threads = [threading.Thread(target=run, args=(k, out)) for k in range(4)]
[t.start() for t in threads]; [t.join() for t in threads]
print(json.dumps(out))
"""
    procs = [
        subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True) for _ in range(2)
    ]
    outs = [json.loads(p.communicate(timeout=300)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    flags = sorted(row[0] for out in outs for row in out)
    assert flags == [False] * 4 + [True] * 4  # one process parsed (its threads shared that opening)
    alone = tracetui.load(path, cache=False)
    want = [alone.summary(), alone.ops(limit=10), alone.sql("SELECT count(*) AS n FROM events")]
    assert all(row[1:] == want for out in outs for row in out)
    assert leftovers(isolated_cache) == []


def test_threads_asking_for_an_arg_column_decode_it_once_per_key(tmp_path, monkeypatch):
    """Lazy args: 8 threads asking for two keys of one cold trace decode each key once and get equal columns."""
    from tui.model.load import lazy

    path = copy_sample(tmp_path, BERT)
    trace = load_trace(path)
    decoded: list[str] = []
    decode = lazy._decoded
    monkeypatch.setattr(lazy, "_decoded", lambda t, key: decoded.append(key) or decode(t, key))
    keys = ["Concrete Inputs", "Input type"]
    columns = together(THREADS, lambda k: lazy.arg_column(trace, keys[k % 2]))
    assert sorted(decoded) == sorted(keys)
    for k, column in enumerate(columns):
        alone = lazy._decoded(load_trace(path, use_cache=False), keys[k % 2])
        assert column.key == alone.key and np.array_equal(column.ids, alone.ids) and column.values == alone.values


# --- the API from threads ----------------------------------------------------------------------------------


@pytest.mark.parametrize("share", [False, True], ids=["each thread loads", "one Trace shared"])
def test_the_api_from_8_threads_answers_as_alone_cold_then_warm(tmp_path, isolated_cache, share):
    """GIVEN the answers of every method made alone WHEN 8 threads each make all of them, in different orders,
    on a cold cache and then a warm one (each thread loading the trace, or all sharing one Trace) THEN every
    answer is the one made alone."""
    path = copy_sample(tmp_path, BERT)
    alone = tracetui.load(path, cache=False)
    want = {name: call(alone) for name, call in CALLS.items()}
    names = list(CALLS)

    def thread(k: int, shared: tracetui.Trace | None) -> dict[str, object]:
        t = shared or tracetui.load(path)
        order = names[k % len(names) :] + names[: k % len(names)]
        return {name: CALLS[name](t) for name in (order if k % 2 else order[::-1])}

    for _ in ("cold", "warm"):
        shared = tracetui.load(path) if share else None
        for got in together(THREADS, lambda k, shared=shared: thread(k, shared)):
            assert got == want
    assert leftovers(isolated_cache) == []


def test_one_trace_builds_its_sql_session_once_for_threads_that_ask_together():
    t = tracetui.load(SAMPLES / BERT)
    sessions = together(THREADS, lambda k: t._session)
    assert len({id(s) for s in sessions}) == 1


# --- SQL side by side ----------------------------------------------------------------------------------------


def test_queries_at_once_each_get_a_connection_and_the_sandbox_holds_on_each():
    """GIVEN the MCP server's locked session WHEN 16 threads query it at once THEN each answer is the one made
    alone (no 'connection is busy'); refused queries made at once are each refused; and any new connection to
    the session's database (a cursor, as each concurrent query gets) reads and writes no file and cannot unlock
    the settings."""
    import duckdb

    from tui.model.errors import QueryError
    from tui.sql import Session

    s = Session(tracetui.load(SAMPLES / BERT).results, locked=True)
    queries = [
        "SELECT kind, count(*) AS n FROM events GROUP BY kind ORDER BY kind",
        "SELECT name, total_us FROM kernels ORDER BY total_us DESC, name LIMIT 5",
        "SELECT count(*) FROM launches l JOIN events e ON e.id = l.launch_id",
        "SELECT name, dur_us FROM steps ORDER BY start_us",
    ]
    want = [s.query(q).rows for q in queries]
    got = together(16, lambda k: s.query(queries[k % len(queries)]).rows)
    assert got == [want[k % len(queries)] for k in range(16)]
    target = Path("/tmp/tracetui-should-not-exist.csv")
    refused = [
        "SELECT * FROM read_csv('/etc/passwd')",
        "SET enable_external_access = true",
        "SET lock_configuration = false",
        f"COPY (SELECT 1) TO '{target}'",
    ]

    def refuse(k: int) -> str:
        try:
            s.query(refused[k % len(refused)])
        except QueryError as exc:
            return str(exc)
        return "answered"

    assert all(("disabled by configuration" in r or "read-only" in r) for r in together(8, refuse))
    other = s.cursor()
    for query in refused:
        with pytest.raises(duckdb.Error, match="disabled by configuration|locked"):
            other.execute(query)
    assert other.execute(queries[0]).fetchall() == want[0] and not target.exists()
