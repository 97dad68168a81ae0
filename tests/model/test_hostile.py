"""A hostile or absurd file cannot hang tracetui, crash it or exhaust the machine: each limit (model/limits.py)
holds with its one line, and every impossible number is skipped with its field and why (issue 43)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, SAMPLES, X, write_trace

import tracetui
import tui.model.limits as limits
from tui.cli import main
from tui.model.errors import TraceError
from tui.model.load import guard, load_trace
from tui.model.load.args import event_args

pytestmark = pytest.mark.filterwarnings("error")  # no numpy RuntimeWarning (or any other) reaches the user


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.rstrip("\n")


def test_args_nested_100000_deep_are_cut_at_the_nesting_limit(tmp_path, capsys):
    """The issue's first row: 200 KB of `[` once crashed the decoder with a RecursionError (exit 1, "a tracetui bug")."""
    path = tmp_path / "deep.json"
    deep = "[" * 100_000 + "]" * 100_000
    path.write_text(
        '{"traceEvents":['
        + json.dumps(X("op", 1, 2)).replace('"dur": 2', f'"dur": 2, "args": {{"x": {deep}, "y": 7}}')
        + "]}"
    )
    code, out, err = run(capsys, "summary", str(path), "--no-cache")
    assert code == 0 and "Verdict" in out
    assert (
        one_line(err)
        == f"tracetui: warning: {path}: 1 event(s) nested deeper than 64 levels cut there (the nesting limit)"
    )
    args = event_args(load_trace(path, use_cache=False), 0)
    assert args["y"] == 7 and json.dumps(args["x"]).count("[") == limits.NESTING - 2  # the event, args, then x's levels
    assert "nested deeper than 64 levels: not read" in json.dumps(args["x"])


def test_args_deep_enough_for_python_but_past_the_limit_read_as_a_note(tmp_path):
    """300 levels decode (msgspec walks ~1,000): the load says nothing, the details cut them where they are read."""
    deep = "[" * 300 + "1" + "]" * 300
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"args":{"x":' + deep + "}}]}")
    t = load_trace(path, use_cache=False)
    assert t.report.warning() is None
    assert "not read" in json.dumps(event_args(t, 0)) and guard.deepest(json.dumps(event_args(t, 0)).encode()) <= 64


def test_a_50_mb_name_is_cut_at_the_name_limit(tmp_path, capsys):
    """The issue's second row: no answer after 120 s (the summary's line wrapping was quadratic in the name)."""
    path = tmp_path / "long.json"
    write_trace(path, [X("n" * (50 << 20), 1, 2), X("short", 5, 1)])
    code, out, err = run(capsys, "summary", str(path), "--no-cache")
    assert code == 0 and "Verdict" in out and len(out) < 3 * limits.NAME_CHARS  # the name, wrapped, at most
    assert one_line(err) == f"tracetui: warning: {path}: 1 name(s) longer than 65,536 characters cut (the name limit)"
    t = load_trace(path, use_cache=False)
    assert len(t.name_of(0)) == limits.NAME_CHARS and t.name_of(0).endswith("…") and t.name_of(1) == "short"


def test_names_that_read_alike_once_cut_are_one_name(tmp_path):
    a, b = "k" * (limits.NAME_CHARS + 10) + "a", "k" * (limits.NAME_CHARS + 10) + "b"
    t = load_trace(write_trace(tmp_path / "t.json", [X(a, 1, 2), X(b, 5, 1), X("x", 7, 1)]), use_cache=False)
    assert t.names.count(t.name_of(0)) == 1 and t.x.name[0] == t.x.name[1] != t.x.name[2]
    assert "2 name(s) longer than" in t.report.warning()


def test_a_lone_surrogate_escape_keeps_its_escape_as_text_through_the_cache_and_the_viewer(tmp_path, capsys):
    """ "lone\\ud83dx" has no pair: orjson and msgspec refuse it, the standard library reads it into a str no UTF-8
    holds, and writing the cache, hashing a name's colour or printing it failed ("internal error:
    UnicodeEncodeError"). The name, a thread's name and a category keep the escape as text; the command works."""
    path = tmp_path / "lone.json"
    path.write_text(
        '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"lone\\ud83dx","pid":1,"tid":1,"ts":10,"dur":2},'
        '{"ph":"X","cat":"c\\udc00","name":"ok","pid":1,"tid":1,"ts":20,"dur":2,"args":{"note":"a\\udc00b"}},'
        '{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"thr\\ud800"}}]}'
    )
    code, out, err = run(capsys, "ops", str(path))  # with the cache: the names are written there
    assert code == 0 and "lone\\ud83dx" in out and "error" not in err, err
    t = load_trace(path)  # read back from the cache entry
    assert "lone\\ud83dx" in t.names and "c\\udc00" in t.cat_names
    assert all(s.encode("utf-8") for s in t.names + t.cat_names + [tr.name for tr in t.tracks])
    from tui.widgets.paint import color_of

    assert color_of("lone\\ud83dx")


def test_nan_and_infinity_say_the_field_not_a_cut_file(tmp_path, capsys):
    """The issue's third row: once "the file is cut before its first event", the wrong reason."""
    path = tmp_path / "nan.json"
    path.write_text('{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":NaN,"dur":Infinity}]}')
    code, out, err = run(capsys, "summary", str(path), "--no-cache")
    assert (code, out) == (2, "")
    assert one_line(err) == (
        f"tracetui: error: {path}: no trace events left to show: skipped 1 event without a numeric start time (ts)"
    )


def test_each_impossible_number_is_skipped_with_its_field_and_why(tmp_path, capsys):
    """The issue's fourth row: ts 1e30, a negative dur and an External id of 1e40 once went through numpy's
    wrapped-around casts (a RuntimeWarning on stderr, exit 0, figures made of garbage)."""
    path = tmp_path / "range.json"
    path.write_text(
        '{"traceEvents":['
        '{"ph":"X","cat":"cpu_op","name":"far","pid":1,"tid":1,"ts":1e30,"dur":3},'
        '{"ph":"X","cat":"cpu_op","name":"back","pid":1,"tid":1,"ts":5,"dur":-5},'
        '{"ph":"X","cat":"cpu_op","name":"id","pid":1,"tid":1,"ts":6,"dur":1,"args":{"External id":'
        + "1"
        + "0" * 40
        + "}},"
        '{"ph":"X","cat":"cpu_op","name":"inf","pid":1,"tid":1,"ts":7,"dur":1e999},'
        '{"ph":"X","cat":"cpu_op","name":"ok","pid":1,"tid":1,"ts":10,"dur":3}]}'
    )
    code, out, err = run(capsys, "summary", str(path), "--no-cache", "--format", "json")
    assert code == 0 and json.loads(out)["wall_us"] == 3
    assert one_line(err) == (
        f"tracetui: warning: {path}: skipped 4 events holding a number that cannot be: "
        "External id past 64 bits (1), dur infinite (1), dur negative (1), ts out of range (1)"
    )
    t = load_trace(path, use_cache=False)
    assert [t.name_of(i) for i in range(t.n)] == ["ok"] and t.x.ts.tolist() == [10_000]


@pytest.mark.parametrize(
    ("event", "why"),
    [
        ({"ts": 2e15, "dur": 3e15}, "dur out of range"),  # 95 years long
        ({"ts": -1e16, "dur": 1}, "ts out of range"),
        ({"ts": "Infinity", "dur": 1}, "ts infinite"),
        ({"ts": 5, "dur": "NaN"}, "dur not a number"),
        ({"ts": 5, "dur": 1, "args": {"correlation": 2**64}}, "correlation past 64 bits"),
        ({"ts": 5, "dur": 1, "args": {"Python parent id": -(2**70)}}, "Python parent id past 64 bits"),
    ],
)
def test_one_impossible_number(tmp_path, event, why):
    bad = {"ph": "X", "cat": "cpu_op", "name": "bad", "pid": 1, "tid": 1, **event}
    t = load_trace(write_trace(tmp_path / "t.json", [bad, X("ok", 10, 3)]), use_cache=False)
    assert t.n == 1 and t.report.bad_numbers == {why: 1}


def test_negative_times_and_ids_that_torch_writes_are_kept(tmp_path):
    """A relative clock may start before an event (ts < 0); -1 and 0 are torch's 'no id'; an unsigned 64-bit id
    keeps its event, unlinked."""
    events = [X("a", -5, 2, External_id=-1, correlation=0), X("b", 1, 2, correlation=2**64 - 1)]
    t = load_trace(write_trace(tmp_path / "t.json", events), use_cache=False)
    assert (
        t.n == 2 and t.x.ts.tolist() == [-5000, 1000] and t.x.ext.tolist() == [-1, -1] and t.x.corr.tolist() == [-1, -1]
    )
    assert t.report.warning() == "1 link id(s) past 2**63 - 1 dropped, their events kept unlinked (the id limit)"


def test_other_numbers_no_clock_or_allocator_has(tmp_path):
    """A base time past 2116, a rank past 32767, a pid past 64 bits, [memory] bytes past 64 bits, a counter of 1e400."""
    events = [
        X("a", 1, 2, pid=10**30),
        {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 3, "s": "t",
         "args": {"Bytes": 10**30, "Device Type": 1, "Device Id": 0}},
        {"ph": "C", "name": "util", "pid": 1, "ts": 4, "args": {"v": 10**400, "w": 2}},
    ]  # fmt: skip
    path = write_trace(tmp_path / "t.json", events, baseTimeNanoseconds=2**63 + 5, distributedInfo={"rank": 2**40})
    t = load_trace(path, use_cache=False)
    assert t.x.ts.tolist() == [1000] and t.ranks[0]["rank"] == 0 and str(t.tracks[0].pid) == str(10**30)
    warning = t.report.warning()
    assert "ignored baseTimeNanoseconds, a time no clock can have" in warning
    assert "skipped 1 [memory] event without numeric Bytes" in warning
    assert "skipped 1 counter value that is not a number" in warning
    assert tracetui.load(path).summary()["wall_us"] == 2


def _gzip_of_blanks(path: Path, inflated: int) -> Path:
    """`{"traceEvents":[` + `inflated` bytes of blanks + `]}`, gzipped (~1 KB per MB): the same deflate segment
    repeated (each ends with a full flush, so each is whole), framed by hand; built in a second, not minutes."""
    block = b" " * (16 << 20)
    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    head = raw.compress(b'{"traceEvents":[') + raw.flush(zlib.Z_FULL_FLUSH)
    middle = raw.compress(block) + raw.flush(zlib.Z_FULL_FLUSH)
    tail = raw.compress(b"]}") + raw.flush()
    count = inflated // len(block)
    crc = zlib.crc32(b'{"traceEvents":[')
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(b"]}", crc)
    size = 16 + count * len(block) + 2
    with open(path, "wb") as f:
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + head)
        for _ in range(count):
            f.write(middle)
        f.write(tail + crc.to_bytes(4, "little") + (size & 0xFFFFFFFF).to_bytes(4, "little"))
    return path


_MEASURED = """
import atexit, sys
def peak():  # VmHWM: this process's peak since exec (ru_maxrss would count the forked test runner's pages too)
    status = open("/proc/self/status").read()
    open(sys.argv[1], "w").write(status.split("VmHWM:")[1].split()[0])
atexit.register(peak)
from tui.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _peak(argv: list[str], cache: Path, tmp: Path) -> tuple[int, str, int]:
    """Run tracetui in a process of its own: its exit code, its stderr and its peak RSS in bytes."""
    env = {**os.environ, "TRACETUI_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    out = tmp / "peak.txt"
    proc = subprocess.run([sys.executable, "-c", _MEASURED, str(out), *argv], capture_output=True, text=True, env=env)
    return proc.returncode, proc.stderr, int(out.read_text()) * 1024


@pytest.mark.parametrize("cached", [False, True])
def test_a_gzip_bomb_streams_through_in_little_memory(tmp_path, isolated_cache, cached):
    """The issue's fifth row, at a tenth of its size (the whole 2 GB: test_the_2_gb_bomb): 4.5 GB of memory once."""
    bomb = _gzip_of_blanks(tmp_path / "bomb.json.gz", 256 << 20)
    assert bomb.stat().st_size < 300_000
    code, err, peak = _peak(["summary", str(bomb), *([] if cached else ["--no-cache"])], isolated_cache, tmp_path)
    assert (code, err) == (2, f"tracetui: error: {bomb}: no trace events in the file\n")
    assert peak < 200e6, f"peak RSS {peak / 1e6:.0f} MB"
    assert not list(isolated_cache.rglob("*.json")) and not list(isolated_cache.rglob("*.part"))  # nothing left


@pytest.mark.slow
def test_the_2_gb_bomb(tmp_path, isolated_cache):
    """The issue's bomb itself: a 2 MB .json.gz of 2 GB of blanks, peak memory under 200 MB."""
    bomb = _gzip_of_blanks(tmp_path / "bomb.json.gz", 2 << 30)
    assert bomb.stat().st_size < 2_500_000
    code, err, peak = _peak(["summary", str(bomb), "--no-cache"], isolated_cache, tmp_path)
    assert (code, err) == (2, f"tracetui: error: {bomb}: no trace events in the file\n")
    assert peak < 200e6, f"peak RSS {peak / 1e6:.0f} MB"


def test_inflating_past_what_the_machine_can_hold_stops_there(tmp_path, monkeypatch, capsys):
    bomb = _gzip_of_blanks(tmp_path / "bomb.json.gz", 64 << 20)
    monkeypatch.setattr(guard, "memory_available", lambda: 64 << 20)
    monkeypatch.setattr(guard, "disk_free", lambda folder: 40 << 20)
    for cache in (["--no-cache"], []):
        code, out, err = run(capsys, "summary", str(bomb), *cache)
        assert (code, out) == (2, "")
        line = one_line(err)
        assert (
            line.startswith(f"tracetui: error: {bomb}: inflates past ")
            and "the limit for a compressed trace here" in line
        )
        assert "a quarter of the memory available" in line  # past the disk's limit, memory is tried, then refused
        assert ("the disk could not take it" in line) == (cache == [])
    left = [p for p in Path(os.environ["TRACETUI_CACHE_DIR"]).rglob("*") if p.is_file() and p.name != "CACHEDIR.TAG"]
    assert not left


def test_an_event_past_the_event_size_limit_is_skipped_unread(tmp_path, monkeypatch):
    import tui.model.load.source as source

    monkeypatch.setattr(limits, "EVENT_BYTES", 1 << 20)
    monkeypatch.setattr(source.limits, "EVENT_BYTES", 1 << 20)
    monkeypatch.setattr(source, "CHUNK_BYTES", 64 << 10)
    events = [X(f"e{k}", k, 1) for k in range(3000)]
    events[1500]["args"] = {"blob": "z" * (3 << 20)}
    t = load_trace(write_trace(tmp_path / "t.json", events), use_cache=False)
    assert t.n == 2999 and "e1500" not in t.names
    assert t.report.limits == {"event": 1}


def test_many_lanes_load_and_past_the_lane_limit_are_left_out(tmp_path, monkeypatch):
    """The issue's sixth row is in test_two_hundred_thousand_lanes; here the limit itself, made small."""
    import tui.model.load.bounds as bounds

    monkeypatch.setattr(bounds, "LANES", 3)
    events = [X("a", k, 1, pid=k % 5, tid=k % 5) for k in range(20)]
    t = load_trace(write_trace(tmp_path / "t.json", events), use_cache=False)
    assert len(t.tracks) == 3 and t.n == 12 and sorted({int(p) for p in t.x.track}) == [0, 1, 2]
    assert t.report.limits == {"lanes": 8}


def test_two_hundred_thousand_lanes(tmp_path, capsys):
    """The issue's sixth row: 200,000 pid/tid pairs (20 MB) took 26.6 s and 633 MB for a summary: one thread-pool
    job per lane in the nesting. Now they nest together (nesting.py), in time linear in their number."""
    n = 200_000
    events = [{"ph": "X", "cat": "cpu_op", "name": "op", "pid": k, "tid": k, "ts": k, "dur": 5} for k in range(n)]
    path = write_trace(tmp_path / "lanes.json", events)
    code, out, err = run(capsys, "summary", str(path), "--no-cache", "--format", "json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc["wall_us"] == n - 1 + 5 and doc["cpu_self_total_us"] == 5 * n
    t = load_trace(path)
    assert len(t.tracks) == n and np.array_equal(np.bincount(t.x.track), np.ones(n))


def test_the_api_and_the_mcp_server_obey_the_same_limits(tmp_path):
    """They open traces through the same front door (loading.open_trace): the same warnings, the same one line."""
    nan = tmp_path / "nan.json"
    nan.write_text('{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":NaN,"dur":1}]}')
    with pytest.raises(TraceError) as caught:
        tracetui.load(nan)
    assert (
        str(caught.value) == f"{nan}: no trace events left to show: skipped 1 event without a numeric start time (ts)"
    )
    deep = tmp_path / "deep.json"
    deep.write_text(
        '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"x":'
        + "[" * 5000
        + "]" * 5000
        + "}}]}"
    )
    assert tracetui.load(deep).warnings == [
        f"{deep}: 1 event(s) nested deeper than 64 levels cut there (the nesting limit)"
    ]


async def test_an_mcp_call_on_a_hostile_file_is_a_one_line_tool_error(tmp_path, isolated_cache):
    pytest.importorskip("mcp")
    import sys

    from conftest import ROOT

    sys.path.insert(0, str(ROOT / "tests" / "api"))  # the MCP tests' helpers, when tests/api was not collected
    from test_mcp import failure, serve

    nan = tmp_path / "nan.json"
    nan.write_text('{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":NaN,"dur":1}]}')
    bomb = _gzip_of_blanks(tmp_path / "bomb.json.gz", 32 << 20)
    async with serve(isolated_cache) as client:
        said = await failure(client, "summary", trace=str(nan))
        assert said.endswith(f"{nan}: no trace events left to show: skipped 1 event without a numeric start time (ts)")
        assert (await failure(client, "ops", trace=str(bomb))).endswith(f"{bomb}: no trace events in the file")


def test_nothing_hostile_touches_the_input(tmp_path):
    path = tmp_path / "deep.json"
    path.write_bytes(b'{"traceEvents":[{"ph":"X","name":"a","ts":NaN,"args":' + b"{" * 3000 + b"}" * 3000 + b"}]}")
    before = path.read_bytes()
    with pytest.raises(TraceError):
        load_trace(path)
    assert path.read_bytes() == before


def test_a_sample_gzip_inflates_as_before(tmp_path):
    """The streaming inflate reads a real .json.gz byte for byte as gzip does, in memory and to a file."""
    from tui.model.load.source import gunzip

    src = SAMPLES / "h100-bert-small.json.gz"
    want = gzip.decompress(src.read_bytes())
    assert gunzip(src, None) == (want, False)
    mapped, truncated = gunzip(src, tmp_path / "out.json")
    assert bytes(mapped) == want and not truncated


@pytest.mark.parametrize(
    "name",
    [
        "void f<" * 100_000 + "int" + ">" * 100_000 + "(float)",  # deeper than any recursion
        "void k<" + ", ".join(f"A<B{k}<int>>" for k in range(20_000)) + ">(float)",  # 20,000 template arguments
        "aB" * (25 << 20),  # 50 MB of one camelCase word
        "w " * (5 << 20),  # 5 million words
    ],
    ids=["deep", "wide", "50MB-word", "many-words"],
)
def test_a_hostile_name_shortens_within_its_width(name):
    """Names are cut for tables, the details and the selection line (tui/text/names.py) in time linear in them: weighed
    word by word only up to 32 levels, 400 words and 8 KB (real kernel names: 10, 200 and 5 KB), folded in numpy."""
    from tui.text.names import short_name, shorten_names

    out = shorten_names([name, name + "x", "other"], 60)
    assert all(len(s) <= 60 for s in out) and len(set(out)) == 3
    assert len(short_name(name, 100)) <= 100


def test_the_numpy_fold_of_a_long_name_is_the_loops():
    """short_name folds a long name's template arguments in numpy, a block at a time: the same text as its loop."""
    import tui.text.names as names

    rng = np.random.default_rng(7)
    alphabet = list("ab<>()x, é::")
    for block in (7, 64, 1 << 20):
        for _ in range(500):
            name = "".join(rng.choice(alphabet, int(rng.integers(0, 300))))
            limit = int(rng.integers(5, 120))
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(names, "_FOLD_FAST", 10**9)
                want = names.short_name(name, limit)
                mp.setattr(names, "_FOLD_FAST", 0)
                mp.setattr(names, "_BLOCK", block)
                assert names.short_name(name, limit) == want, (name, limit, block)


def test_a_file_name_that_is_not_utf8_opens_and_caches(tmp_path):
    """A name of bytes no encoding reads (Linux allows any): Python holds it with surrogates, the cache keys it."""
    path = Path(os.fsdecode(bytes(tmp_path) + b"/odd\xff.json"))
    write_trace(path, [X("a", 1, 2)])
    assert load_trace(path).n == 1 and load_trace(path).report.from_cache


def test_a_flow_id_no_encoding_reads_is_hashed(tmp_path):
    """Found by the fuzz test (seed 398): a lone surrogate in a flow's string id failed the hash's encode."""
    events = [X("a", 1, 2), {"ph": "s", "id": "\ud800", "pid": 1, "tid": 1, "ts": 1, "cat": "ac2g", "name": "f"}]
    assert len(load_trace(write_trace(tmp_path / "t.json", events), use_cache=False).flow) == 1


def test_events_at_one_instant_read_their_args_once_per_chunk(tmp_path, monkeypatch):
    """20 k identical events (one thread, one start, one end: they nest 20 k deep) took 25 s: each one ending at the
    window's end re-read its chunk for `"finished"`, and the critical path's lanes climbed the tree a level per
    pass. The open ones are still found (a third are marked finished: false), and a walk by levels reads the same
    as the climb."""
    import tui.model.analyses.critical.lanes as lanes
    from tui.model.analyses.results import Results

    events = [dict(X(f"aten::op{i % 50}", 10, 5), args={"finished": False} if i % 3 == 0 else {}) for i in range(6_000)]
    a = Results(load_trace(write_trace(tmp_path / "same.json", events), use_cache=False))
    assert a.op_times.open_events == 2_000
    deep = a.critical
    monkeypatch.setattr(lanes, "CLIMB", 1 << 30)  # the climb alone, as before
    b = Results(load_trace(tmp_path / "same.json", use_cache=False))
    assert b.critical.breakdown == deep.breakdown and len(b.critical.items) == len(deep.items)
