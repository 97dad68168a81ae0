"""The compiled scan (load/scan.py, scanned.py) reads every trace exactly as the msgspec path does.

Whole traces are loaded both ways (TRACETUI_DECODE=msgspec and =native) and their columns, names, tracks, chunks
and load reports compared field by field. Constructed events pin the rules the scan follows to refuse a chunk (so
that msgspec reads it): each rule is the typed decode's (schema.py: strict msgspec types, so a float is no int, a
string no number) or JSON's own; the rows say which path read the chunk, and the columns must be equal either way.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import msgspec
import numpy as np
import pytest
from conftest import ROOT, SAMPLES, shared_traces

pytest.importorskip("numba", reason="the compiled scan needs numba (the fast extra)")

from tui.model.errors import said_once  # noqa: E402
from tui.model.load import scanned  # noqa: E402
from tui.model.load.loader import load_trace  # noqa: E402

_LEFT_OUT = {"store", "buffers", "job", "stamps"}  # handles and caches, not what was read


def _load(path: Path, how: str, monkeypatch) -> tuple[object, dict]:
    monkeypatch.setenv("TRACETUI_DECODE", how)
    monkeypatch.setattr(scanned, "NATIVE_MIN_BYTES", 0)  # every file is small here: the scan reads them all
    scanned.COUNTS.clear()
    trace = load_trace(path, use_cache=False)
    return trace, dict(scanned.COUNTS)


def _differences(a, b, where: str = "trace") -> list[str]:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        same = (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
        )
        return [] if same else [where]
    if hasattr(a, "__dataclass_fields__") and type(a) is type(b):
        out = []
        for f in fields(a):
            if f.name not in _LEFT_OUT:
                out += _differences(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{where} keys"]
        return [d for k in a for d in _differences(a[k], b[k], f"{where}[{k!r}]")]
    if isinstance(a, list | tuple) and isinstance(b, list | tuple) and type(a) is type(b):
        if len(a) != len(b):
            return [f"{where} length"]
        return [d for k, (x, y) in enumerate(zip(a, b, strict=True)) for d in _differences(x, y, f"{where}[{k}]")]
    return [] if a == b and type(a) is type(b) else [where]


def _both(path: Path, monkeypatch) -> dict:
    slow, _ = _load(path, "msgspec", monkeypatch)
    fast, counts = _load(path, "native", monkeypatch)
    assert _differences(slow, fast) == []
    return counts


SAMPLE_FILES = sorted(p for p in SAMPLES.rglob("*") if p.name.endswith((".json.gz", ".json")))
DATA_FILES = sorted(p for p in (ROOT / "tests" / "data").rglob("*") if p.name.endswith((".json.gz", ".json")))


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_sample_reads_the_same_and_is_scanned(path, monkeypatch):
    counts = _both(path, monkeypatch)
    assert counts.get("scanned", 0) >= 1, counts


@pytest.mark.parametrize("path", DATA_FILES, ids=lambda p: str(p.relative_to(ROOT / "tests" / "data")))
def test_every_test_trace_reads_the_same(path, monkeypatch):
    try:
        _both(path, monkeypatch)
    except Exception as exc:  # noqa: BLE001 - a file meant to fail must fail alike both ways
        with pytest.raises(type(exc)):
            _load(path, "native", monkeypatch)


@pytest.mark.full
@pytest.mark.skipif(not shared_traces(), reason="../shared/traces is not here")
def test_every_shared_trace_reads_the_same(monkeypatch):
    scanned_any = 0
    for path in shared_traces():
        counts = _both(path, monkeypatch)
        scanned_any += counts.get("scanned", 0) > 0
    assert scanned_any >= len(shared_traces()) - 5  # a counter trace or two go to msgspec whole


def _event(**overrides) -> dict:
    event = {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100.5, "dur": 3.25}
    event["args"] = {"External id": 7, "Input Dims": [[2, 3], []], "Python parent id": None}
    for key, value in overrides.items():
        if value is _DROP:
            event.pop(key, None)
        else:
            event[key] = value
    return event


_DROP = object()


_PLAIN = {
    "ph": "X",
    "name": "ok",
    "pid": 1,
    "tid": 1,
    "ts": 300,
    "dur": 1,
}  # so a trace is left when a case's event is not


def _file(tmp_path: Path, events: list, raw: bytes | None = None) -> Path:
    path = tmp_path / "t.json"
    if raw is None:
        raw = json.dumps({"traceEvents": [_PLAIN, *events]}).encode()
    else:
        first = json.dumps(_PLAIN).encode() + b","
        raw = raw.replace(b'"traceEvents":[', b'"traceEvents":[' + first).replace(
            b'"traceEvents": [', b'"traceEvents": [' + first
        )
    path.write_bytes(raw)
    return path


# (what, events or raw text, read by the scan?)  The refusals are the typed decode's rules (schema.py) or JSON's.
CASES = [
    ("plain", [_event(), _event(name="aten::add", ts=104)], True),
    ("an escape in a name is decoded", [_event(name='a\\"b\u00e9')], True),
    ("a numeric string pid is the int's thread", [_event(pid="7"), _event(pid=7, ts=200)], True),
    ("a name for a pid", [_event(pid="Spans", tid="PyTorch Profiler")], True),
    ("null Python parent id", [_event(args={"Python parent id": None})], True),
    ("copy bytes as a string is no size", [_event(args={"bytes": "12"})], True),
    ("the 2021 keys", [_event(args={"external id": 5, "Input dims": [[1]]})], True),
    ("a cat that is a number on an instant (not read)", [{"ph": "i", "name": "x", "ts": 1, "cat": 5}], True),
    (
        "metadata beside events",
        [_event(), {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "w"}}],
        True,
    ),
    ("other phases are counted", [_event(), {"ph": "B", "name": "b", "pid": 1, "tid": 1, "ts": 1}], True),
    ("a big ts with a fraction is read from its text", [_event(ts=9_000_000_000_000.125)], True),
    ("a float External id", [_event(args={"External id": 7.0})], False),
    ("a copy size with a fraction", [_event(args={"bytes": 1.5})], False),
    ("an id past 18 digits", [_event(args={"correlation": 10**19})], False),
    ("a ts as a string", [_event(ts="100")], False),
    ("a negative dur", [_event(dur=-1)], False),
    ("no ts", [_event(ts=_DROP)], False),
    ("args that are a list", [_event(args=[])], False),
    ("a string flow id", [{"ph": "s", "id": "0x1f", "name": "f", "pid": 1, "tid": 1, "ts": 1}], False),
    ("a counter", [{"ph": "C", "name": "c", "pid": 1, "tid": 1, "ts": 1, "args": {"v": 1}}], False),
    ("an unknown phase", [{"ph": "Z", "name": "z", "pid": 1, "tid": 1, "ts": 1}], False),
    ("no phase", [{"name": "z", "pid": 1, "tid": 1, "ts": 1}], False),
    ("args nested 100 deep", [_event(args={"deep": json.loads("[" * 100 + "]" * 100)})], False),
]
RAW_CASES = [
    ("a ts with an exponent", b'{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1.5e2,"dur":1}]}', False),
    (
        "a 19-digit ts",
        b'{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1700000000000000.125,"dur":1}]}',
        False,
    ),
    ("a key with an escape", b'{"traceEvents":[{"ph":"X","n\\u0061me":"a","pid":1,"tid":1,"ts":1,"dur":1}]}', False),
    ("a key twice", b'{"traceEvents":[{"ph":"X","name":"a","name":"b","pid":1,"tid":1,"ts":1,"dur":1}]}', False),
    (
        "a control byte in a skipped string",
        b'{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"s":"a\x01b"}}]}',
        False,
    ),
    (
        "bad UTF-8 in a skipped string",
        b'{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"s":"a\xffb"}}]}',
        False,
    ),
    (
        "a lone surrogate in a name",
        b'{"traceEvents":[{"ph":"X","name":"a\\ud800","pid":1,"tid":1,"ts":1,"dur":1}]}',
        False,
    ),
    (
        "an emoji written as a surrogate pair in a name and a skipped string",
        b'{"traceEvents":[{"ph":"X","name":"a\\ud83d\\ude00","pid":1,"tid":1,"ts":1,"dur":1,"args":{"s":"\\uD83E\\uDD16"}}]}',
        True,
    ),
    (
        "a high surrogate followed by another character's escape",
        b'{"traceEvents":[{"ph":"X","name":"a\\ud83d\\u0041","pid":1,"tid":1,"ts":1,"dur":1}]}',
        False,
    ),
    (
        "a low surrogate first",
        b'{"traceEvents":[{"ph":"X","name":"a\\ude00\\ud83d","pid":1,"tid":1,"ts":1,"dur":1}]}',
        False,
    ),
    (
        "a trailing comma in args",
        b'{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"a":1,}}]}',
        False,
    ),
    (
        "a leading zero in a skipped number",
        b'{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"a":01}}]}',
        False,
    ),
    (
        "NaN in a skipped value",
        b'{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"a":NaN}}]}',
        False,
    ),
    (
        "Kineto's layout, blanks and all",
        b'{\n  "traceEvents": [\n  {\n    "ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,\n    "ts": 5.5, "dur": 1,\n    "args": {\n      "External id": 3\n    }\n  }\n]}',
        True,
    ),
]


@pytest.mark.parametrize(("what", "events", "scans"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_reads_alike_on_the_path_it_names(tmp_path, monkeypatch, what, events, scans):
    counts = _both(_file(tmp_path, events), monkeypatch)
    assert (counts.get("scanned", 0) == 1) is scans, counts


@pytest.mark.parametrize(("what", "raw", "scans"), RAW_CASES, ids=[c[0] for c in RAW_CASES])
def test_each_text_reads_alike_on_the_path_it_names(tmp_path, monkeypatch, what, raw, scans):
    counts = _both(_file(tmp_path, [], raw), monkeypatch)
    assert (counts.get("scanned", 0) == 1) is scans, counts


def test_the_scan_reads_the_args_keys_the_typed_decode_reads_in_its_order():
    """The scan's columns for the link and allocator args are laid out in schema.py's field order."""
    import msgspec

    from tui.model.load import scan, schema

    names = [f.encode_name for kind in (schema.LinkArgs, schema.MemoryArgs) for f in msgspec.structs.fields(kind)]
    assert list(scan._KEY_NAMES[scan._EVENT_KEYS :]) == names


_NUMBERS = [
    *"0 7 10 0.5 12.25 1419247334787.39 128184607326720 -3 -0 -0.5 1e5 1E5 2.5e-3 05 00 0. .5 1.x 1- - e".split(),
    "9007199254740992",  # 2**53: exact
    "9007199254740993",  # past 2**53: _number reads it as inexact
    "123456789012345678",  # 18 digits
    "1234567890123456789",  # 19
    "12345678901234567.8",  # 18 digits with the point
    "1234567890.123456789",  # 19 with the point
    "0.1234567890123456789012",
    "1.",
]


@pytest.mark.parametrize("text", _NUMBERS)
@pytest.mark.parametrize("tail", ["", ",", "}", "]"])
def test_the_inlined_number_reads_as_the_whole_reader_does(text, tail):
    """_num reads the common numbers inline and hands the rest to _number: both give the same end, kind, value and
    exactness for any number text, valid or not, where it ends a chunk or something follows it."""
    from tui.model.load import scan

    b = np.frombuffer(bytearray((text + tail).encode()), np.uint8)
    fast, whole = scan._num(b, 0, len(b)), scan._number(b, 0, len(b))
    assert fast[0] == whole[0] and (fast[0] < 0 or fast[1:] == whole[1:]), (fast, whole)


@pytest.mark.parametrize(
    ("text", "value_at", "key"),
    [
        ('"ph": 1', 6, 0),
        ('"Input Dims":[]', 13, 14),
        ('"other" :1', 9, -1),
        ('"p\\u0068":1', -3, -1),  # a valid escape: the typed decode would read it as "ph", the scan does not
        ('"p\\q":1', -1, -1),  # not JSON
        ('"p\x01":1', -1, -1),  # a control byte: not JSON
        ('"ph', -1, -1),  # no closing quote
        ('"ph" 1', -1, -1),  # no colon
    ],
)
def test_a_member_is_read_by_its_key_as_written(text, value_at, key):
    """_member's keys without an escape are read by _plain_key; any other falls back to _string, which says whether
    it is an escape (refused as a key with one) or not JSON at all."""
    from tui.model.load import scan

    b = np.frombuffer(bytearray(text.encode()), np.uint8)
    assert scan._member(b, 0, len(b), 0, scan._KEYS) == (value_at, key)


def test_the_inlined_number_reads_random_numbers_as_the_whole_reader_does():
    from tui.model.load import scan

    rng = np.random.default_rng(55)
    for _ in range(3000):
        whole, frac = rng.integers(1, 21), rng.integers(0, 8)
        digits = "".join(map(str, rng.integers(0, 10, whole + frac)))
        text = digits[:whole] + ("." + digits[whole:] if frac else "")
        b = np.frombuffer(bytearray(text.encode() + b","), np.uint8)
        assert scan._num(b, 0, len(b)) == scan._number(b, 0, len(b)), text


@pytest.mark.parametrize("text", _NUMBERS)
@pytest.mark.parametrize("tail", ["", ",", "}", "]", " ", "e"])
def test_the_inlined_number_skip_ends_where_the_whole_skip_does(text, tail):
    """_value passes numbers with _pass_number, which hands all but the common ones to _skip_number: both end
    alike for any number text, valid or not, where it ends a chunk or something follows it."""
    from tui.model.load import scan

    b = np.frombuffer(bytearray((text + tail).encode()), np.uint8)
    assert scan._pass_number(b, 0, len(b)) == scan._skip_number(b, 0, len(b)), text + tail


def _drawn_json(rng, depth: int = 0) -> str:
    """A random JSON value: containers to depth 4, strings with escapes, numbers of every form, random whitespace."""
    ws = lambda: "".join(rng.choice([" ", "\n", "\t", "\r", ""], rng.integers(0, 3)).tolist())  # noqa: E731
    kind = rng.integers(0, 6 if depth < 4 else 3)
    if kind == 0:
        return rng.choice(['"a"', '"a\\"b"', '"\\u00e9x"', '""', '"x\\\\y"', '"Input Dims"'])
    if kind == 1:
        return rng.choice(["0", "-0.5", "12.25", "1e5", "-3", "1419247334787.39", "2.5E-3", "7"])
    if kind == 2:
        return rng.choice(["true", "false", "null"])
    items = [_drawn_json(rng, depth + 1) for _ in range(rng.integers(0, 4))]
    if kind == 3:
        return "[" + ws() + ("," + ws()).join(x + ws() for x in items) + "]"
    keys = [rng.choice(['"k"', '"External id"', '"a\\nb"', '""']) for _ in items]
    return (
        "{" + ws() + ",".join(ws() + k + ws() + ":" + ws() + x + ws() for k, x in zip(keys, items, strict=True)) + "}"
    )


def test_a_value_ends_where_json_says_for_drawn_values():
    """_value (strings and numbers read inline, escapes and odd numbers by the whole readers, the ',' or closing
    byte after each value read at once) ends each drawn value where Python's json reader does, and fails exactly
    where it fails: on drawn values, and on the same with one byte deleted, doubled or put in."""
    from tui.model.load import scan

    rng = np.random.default_rng(56)
    stack = np.zeros(scan.MAX_DEPTH, np.uint8)
    inserts = list(',:[]{}" 0a\\-.e')
    for _ in range(6000):
        text = "[" + _drawn_json(rng) + "]" if rng.random() < 0.5 else '{"x": ' + _drawn_json(rng) + "}"
        if rng.random() < 0.6:  # one byte deleted, doubled, or put in, past the first
            at = int(rng.integers(1, len(text)))
            edit = rng.integers(0, 3)
            put = text[at] if edit == 1 else str(rng.choice(inserts))
            text = text[:at] + text[at + 1 :] if edit == 0 else text[:at] + put + text[at:]
        text += str(rng.choice(["", ",", " ]", "}"]))
        b = np.frombuffer(bytearray(text.encode()), np.uint8)
        try:
            _, want = json.JSONDecoder().raw_decode(text)
        except json.JSONDecodeError:
            want = -1
        assert scan._value(b, 0, len(b), stack) == want, text


def test_strings_that_share_a_hash_stay_apart():
    from tui.model.load import scan

    b = np.frombuffer(bytearray(b"abcabdabc"), np.uint8)
    starts, lengths = np.array([0, 3, 6]), np.array([3, 3, 3])
    firsts, inverse = scan.first_seen(b, np.zeros(3, np.uint64), starts, lengths)  # one hash for all three
    assert firsts.tolist() == [0, 1] and inverse.tolist() == [0, 1, 0]


def test_the_scan_reads_only_when_asked_and_big_enough(monkeypatch):
    big = scanned.NATIVE_MIN_BYTES
    monkeypatch.delenv("TRACETUI_DECODE", raising=False)
    assert not scanned.wanted(big)  # not the default (see scanned.py's doc)
    monkeypatch.setenv("TRACETUI_DECODE", "msgspec")
    assert not scanned.wanted(big)
    monkeypatch.setenv("TRACETUI_DECODE", "native")
    assert scanned.wanted(big) and not scanned.wanted(big - 1)


def test_a_small_file_asked_for_native_is_read_by_msgspec_without_numba(tmp_path):
    """Below NATIVE_MIN_BYTES, TRACETUI_DECODE=native reads with msgspec (faster there: numba's import alone costs
    a process about 0.4 s), and numba is not imported."""
    env = {**os.environ, "TRACETUI_DECODE": "native", "TRACETUI_CACHE_DIR": str(tmp_path)}
    code = (
        "import sys; from tui.model.load import scanned; from tui.model.load.loader import load_trace\n"
        f"t = load_trace({str(SAMPLES / 'h100-bert-small.json.gz')!r}, use_cache=False)\n"
        "print(t.n, dict(scanned.COUNTS), 'numba' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2060", "{}", "False"]


def test_a_load_for_workers_scans_in_threads_alike(tmp_path, monkeypatch, force_workers):
    """A file big enough for worker processes: msgspec decodes it in two of them, the scan in threads of this
    process (numba releases the GIL), many chunks each; the traces are the same."""
    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes()))
    counts = _both(plain, monkeypatch)
    assert force_workers == [2] and counts["scanned"] > 4


def test_the_salvage_and_hostile_tests_pass_on_the_scan(tmp_path):
    """The damaged-file, salvage, fuzz and hostile-file tests, run again with every chunk offered to the scan."""
    env = {**os.environ, "TRACETUI_DECODE": "native", "TRACETUI_TEST_SCAN_ALL": "1"}
    tests = ["test_salvage.py", "test_hostile.py", "test_damaged.py", "test_fuzz.py", "test_lazy_args.py"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-x"]
        + [str(ROOT / "tests" / "model" / t) for t in tests],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert done.returncode == 0, done.stdout[-3000:]


def test_what_cannot_be_done_is_said_once(monkeypatch):
    said_once.cache_clear()
    monkeypatch.setenv("TRACETUI_DECODE", "fast")
    with pytest.warns(RuntimeWarning, match="TRACETUI_DECODE=fast is not auto, msgspec or native: the default, auto"):
        assert not scanned.wanted(scanned.NATIVE_MIN_BYTES)
    monkeypatch.setenv("TRACETUI_DECODE", "native")
    monkeypatch.setattr(scanned, "_scan_module", lambda: None)
    with pytest.warns(RuntimeWarning, match=r"needs numba \(pip install 'tracetui\[fast\]'\)"):
        assert not scanned.wanted(scanned.NATIVE_MIN_BYTES)


def test_the_command_line_says_it_in_one_line(tmp_path):
    """The model's warnings reach a user of the command line as their line alone, not Python's file and line."""
    env = {**os.environ, "TRACETUI_DECODE": "bogus", "TRACETUI_CACHE_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "tui", "summary", str(SAMPLES / "b300-moe-small.json.gz")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0
    assert done.stderr.splitlines() == [
        "tracetui: TRACETUI_DECODE=bogus is not auto, msgspec or native: the default, auto"
    ]


def _json_string_end(raw: bytes) -> tuple[int, bool]:
    """The reference for _string: past the first unescaped quote after the opening one, and whether an escape came
    before it; (-1, _) where msgspec refuses the string (a control byte, a bad escape, a lone surrogate, no end)."""
    i, esc = 1, False
    while i < len(raw) and raw[i] != 34:
        if raw[i] == 92:
            esc = True
            i += 1
        i += 1
    if i >= len(raw):
        return -1, esc
    try:
        msgspec.json.decode(raw[: i + 1], type=str)
    except msgspec.DecodeError:
        return -1, esc
    return i + 1, esc


def test_strings_read_eight_bytes_at_a_time_end_where_json_says():
    """_string and _plain_key skip eight plain bytes at a time: the stop they find (a quote, an escape, a control
    byte) is the first, wherever it falls in a word and however near the chunk's end, UTF-8 and bytes past 0x7f
    included."""
    from tui.model.load import scan

    rng = np.random.default_rng(8)
    pieces = [b"a", b"Z", b"~", b" ", b"\xc3\xa9", b"\x7f", b"\\n", b'\\"', b"\\\\", b"\\u00e9", b"\\ud83d\\ude00"]
    pieces += [b"\\ud800", b"\\q", b"\x01", b"\x1f", b"\t", b"]", b"}"]
    for _ in range(4000):
        body = b"".join(rng.choice(pieces, rng.integers(0, 30), p=None).tolist())
        raw = b'"' + body + (b'"' if rng.random() < 0.9 else b"") + b"x" * rng.integers(0, 10)
        b = np.frombuffer(bytearray(raw), np.uint8)
        end, esc = scan._string(b, 0, len(b))
        want = _json_string_end(raw)
        assert end == want[0] and (end < 0 or esc == want[1]), raw
        if b"\\" not in body:  # a key's reader: the same end where there is no escape
            assert scan._plain_key(b, 1, len(b)) == want[0], raw


def test_the_word_hash_tells_spans_apart_and_spreads_them():
    """Equal spans hash alike wherever they lie; names that differ in one digit hash apart, and their low bits
    (the grouping table's slot) spread over the table rather than piling into a few slots."""
    from tui.model.load import scan

    names = [f"torch/utils/_pytree.py({k}): tree_iter".encode() for k in range(100, 1100)]
    text = b"".join(b"?" + name for name in names) + b"???" + names[7]
    b = np.frombuffer(bytearray(text), np.uint8)
    starts = np.cumsum([1] + [len(n) + 1 for n in names[:-1]])
    lengths = np.array([len(n) for n in names])
    hashes = scan.span_hashes(b, starts, lengths)
    assert len(set(hashes.tolist())) == len(names)
    assert scan.span_hashes(b, np.array([len(text) - len(names[7])]), lengths[7:8])[0] == hashes[7]
    assert scan.span_hashes(b, np.array([3]), np.array([0]))[0] == scan._FNV_BASIS  # a cleared row's value
    assert np.bincount((hashes & np.uint64(1023)).astype(np.int64)).max() <= 6


def test_spans_compared_eight_bytes_at_a_time_differ_where_one_byte_does():
    """first_seen confirms a shared hash byte for byte, eight bytes a step: spans that differ in any one byte, of
    any length, anywhere in a word and up to the chunk's last byte, stay apart; equal ones group."""
    from tui.model.load import scan

    rng = np.random.default_rng(9)
    for length in range(1, 40):
        base = rng.integers(97, 123, length).astype(np.uint8)
        for at in range(length):
            other = base.copy()
            other[at] = 65
            text = np.concatenate([base, other, base])  # the last span ends the chunk
            starts, lengths = np.array([0, length, 2 * length]), np.full(3, length)
            firsts, inverse = scan.first_seen(text, np.zeros(3, np.uint64), starts, lengths)
            assert inverse.tolist() == [0, 1, 0], (length, at)


def test_a_scan_numba_cannot_compile_is_said_once_and_msgspec_reads(monkeypatch):
    """GIVEN TRACETUI_DECODE=native and a numba that fails to compile the scan (a helper round 16 tried failed so,
    with an AssertionError from numba's lowering, and the command ended in "internal error") WHEN a trace loads THEN
    one line says so, with the error's first line, and msgspec reads the trace: the same trace, no chunk scanned."""
    path = SAMPLES / "h100-bert-small.json.gz"
    slow, _ = _load(path, "msgspec", monkeypatch)

    def broken() -> None:
        raise AssertionError("array(int8, 1d, C)\nand pages more of numba's lowering")

    monkeypatch.setattr(scanned, "warm", broken)
    said_once.cache_clear()
    with pytest.warns(
        RuntimeWarning, match=r"did not compile here \(AssertionError: array\(int8, 1d, C\)\): msgspec re"
    ):
        fast, counts = _load(path, "native", monkeypatch)
    assert _differences(slow, fast) == [] and counts == {}
