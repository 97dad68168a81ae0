"""Chunks end between events, never inside one: a `}, {` inside an args value (an array of objects, a string) is no
boundary (source.event_end). Before, a valid trace of more than one chunk whose args held one lost nearly every
event: each cut there left two chunks of half events, both read as damaged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui.model.load import source
from tui.model.load.args import event_args
from tui.model.load.loader import load_trace


def _event(k: int) -> dict:
    args = {
        "External id": k,
        "Input Dims": [[2, 3], [3, 4]],
        "extra": [{"a": 1}, {"b": [2, {"c": "}, {"}]}, {}],
        "Concrete Inputs": ["x}, {y", '}, {"ph": "X"}'],
    }
    return {"ph": "X", "cat": "cpu_op", "name": f"op{k % 7}", "pid": 1, "tid": 1, "ts": 10 + k, "dur": 1, "args": args}


def _trace(tmp_path: Path, events: int, indent: int | None) -> Path:
    path = tmp_path / f"cuts-{indent}.json"
    path.write_text(json.dumps({"traceEvents": [_event(k) for k in range(events)]}, indent=indent))
    return path


@pytest.mark.parametrize("indent", [None, 1])
def test_a_boundary_inside_an_args_value_is_not_a_cut(tmp_path, monkeypatch, indent):
    monkeypatch.setattr(source, "CHUNK_BYTES", 16 << 10)  # a hundred chunks, each cut near such an args value
    path = _trace(tmp_path, 3000, indent)
    before = path.read_bytes()
    trace = load_trace(path, use_cache=False)
    assert trace.n == 3000 and trace.report.warning() is None
    assert len(trace.chunks) > 40
    for i in (0, 1, 777, 1500, 2999):
        k = int(trace.x.ts[i] - trace.x.ts[0]) // 1000  # the events are in time order, one a microsecond apart
        assert event_args(trace, i) == _event(k)["args"]
    assert path.read_bytes() == before


def test_every_cut_is_where_a_whole_event_ends(tmp_path):
    path = _trace(tmp_path, 400, None)
    src = source.Source(path, path.read_bytes())
    text = src.buf
    src.start, src.end = text.index(b"[") + 1, text.rindex(b"]")
    cuts = source.split_chunks(src, 2 << 10)
    assert len(cuts) > 20
    events = [json.loads(b"[" + bytes(text[s:e]).strip().rstrip(b",") + b"]") for s, e in cuts]
    assert sum(map(len, events)) == 400 and all(e["ph"] == "X" for chunk in events for e in chunk)


def test_a_damaged_stretch_still_cuts_at_the_first_boundary(tmp_path):
    """Where no event reads whole (damage before the boundary), the first candidate is taken as before, and the
    chunk's salvage says what it skipped."""
    body = b'{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}, ' * 50
    broken = b'{"ph":"X","name":"b" "pid":1}, '  # no comma between two members
    buf = b"[" + body + broken + body + b'{"ph":"X","name":"c","pid":1,"tid":1,"ts":2,"dur":1}]'
    probe = buf.index(broken) - 5
    m = source.event_end(buf, 1, probe, len(buf))
    assert m is not None and m.start() == buf.index(b"}, ", probe)


def _damaged(tmp_path: Path, events: int) -> Path:
    """A trace of such events with one malformed event in the middle: the chunk is read by the salvage."""
    texts = [json.dumps(_event(k)) for k in range(events)]
    texts.insert(events // 2, '{"ph":"X","name":"b" "pid":1}')  # no comma between two members
    texts.insert(events // 3, '{"ph":"X" "l":[{"a":1}, {"c":3}, {"b":2}]}')  # and one whose args hold objects
    path = tmp_path / "damaged.json"
    path.write_text('{"traceEvents":[' + ", ".join(texts) + "]}")
    return path


def test_the_salvage_of_a_damaged_chunk_keeps_events_whose_args_hold_a_boundary(tmp_path):
    """The salvage cuts at every `}, {` and joins back the pieces of an event cut inside (source.whole_events):
    before, each such event was lost in pieces, and a piece that is an object of the args was read as an event."""
    path = _damaged(tmp_path, 300)
    before = path.read_bytes()
    trace = load_trace(path, use_cache=False)
    assert trace.n == 300 and "malformed" in (trace.report.warning() or "")
    for i in (0, 149, 150, 299):
        k = int(trace.x.ts[i] - trace.x.ts[0]) // 1000
        assert event_args(trace, i) == _event(k)["args"]
    assert path.read_bytes() == before


def test_an_export_of_a_damaged_trace_writes_its_events_whole(tmp_path):
    import tracetui

    path = _damaged(tmp_path, 120)
    done = tracetui.load(path).export(tmp_path / "out.json")
    assert done["left_out"] == 2 and done["notes"] == ["2 damaged events left out (not JSON)"]
    written = json.loads((tmp_path / "out.json").read_text())["traceEvents"]
    ops = [e for e in written if e.get("cat") == "cpu_op"]
    assert ops == [_event(k) for k in range(120)]
    assert all("ph" in e for e in written)  # no object of an args value written as an event


def _kineto(tmp_path: Path, texts: list[str]) -> Path:
    """Events as Kineto writes them (indented, a key after the array), one text each."""
    path = tmp_path / "kineto.json"
    body = ",\n  ".join(texts)
    path.write_text('{\n  "schemaVersion": 1,\n  "traceEvents": [\n  ' + body + '\n  ],\n  "traceName": "x.json"\n}\n')
    return path


@pytest.mark.parametrize("at", [0, 100, 199])
def test_one_damaged_event_is_one_skipped_wherever_it_is(tmp_path, at):
    """A missing comma inside one event whose args hold a `}, {`, first, in the middle or last: the other 199 read
    and "skipped 1" said (the last one: not a truncated file, its array closes and the keys after it read)."""
    texts = [json.dumps(_event(k), indent=2) for k in range(200)]
    texts[at] = texts[at].replace('"cat": "cpu_op",', '"cat": "cpu_op"')
    path = _kineto(tmp_path, texts)
    trace = load_trace(path, use_cache=False)
    assert trace.n == 199 and trace.report.warning() == "skipped 1 malformed event"


@pytest.mark.parametrize("args", [True, False])
def test_events_written_without_a_comma_between_are_read_and_said(tmp_path, args):
    texts = [json.dumps(_event(k) if args else {**_event(k), "args": {}}, indent=2) for k in range(200)]
    texts[100] = texts[100] + "\n  " + texts.pop(101)  # no comma between 100 and 101
    trace = load_trace(_kineto(tmp_path, texts), use_cache=False)
    assert trace.n == 200 and trace.report.warning() == "read 1 event not followed by a comma"
    if args:
        assert [event_args(trace, i) for i in (100, 101)] == [_event(100)["args"], _event(101)["args"]]


def test_the_cutter_walks_a_damaged_stretch_without_decoding_it(tmp_path, monkeypatch):
    """Where the quick check cannot vouch for a cut (a damaged event before it), the chunk's objects are walked by
    their brackets: no decode past the quick check's tries. The walk decoded the text since the last boundary at
    every candidate, all of it past a damaged event: quadratic, 13 minutes for 100,000 such events."""
    monkeypatch.setattr(source, "CHUNK_BYTES", 16 << 10)
    texts = [json.dumps(_event(k)) for k in range(3000)]
    for k in range(20, 3000, 50):
        texts[k] = texts[k].replace('"cat": "cpu_op",', '"cat": "cpu_op"')  # damaged inside, brackets whole
    path = tmp_path / "walk.json"
    path.write_text('{"traceEvents":[' + ", ".join(texts) + "]}")
    decoded = []
    real = source._decoded
    monkeypatch.setattr(source, "_decoded", lambda *a: decoded.append(a) or real(*a))
    trace = load_trace(path, use_cache=False)
    assert trace.n == 3000 - 60 and trace.report.warning() == "skipped 60 malformed events"
    assert len(decoded) <= source._TRIES * len(trace.chunks)  # the quick check's, at most, per cut


def _compact(tmp_path: Path, texts: list[str], name: str = "compact.json") -> Path:
    path = tmp_path / name
    path.write_text('{"traceEvents": [\n' + ",\n".join(texts) + "\n]}\n")
    return path


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (",\n@@##!!", "skipped 1 malformed event"),  # garbage between two events
        ("]", "skipped 1 malformed event"),  # a stray bracket
    ],
)
def test_what_stands_between_two_events_loses_neither(tmp_path, damage, said):
    """The event after it holds `}, {` in a string, where the salvage cut it: it is read from its own start. It
    lost every event after it (200 of 300), or the two beside it, found by a fresh-eyes run."""
    texts = [json.dumps(_event(k)) for k in range(300)]
    texts[100] = damage.lstrip(",\n") and texts[100].replace("{", damage.lstrip(",\n") + ",\n{", 1)
    trace = load_trace(_compact(tmp_path, texts), use_cache=False)
    assert trace.n == 300 and trace.report.warning() == said


def test_an_unclosed_string_is_one_event_skipped(tmp_path):
    texts = [json.dumps(_event(k)) for k in range(300)]
    texts[101] = texts[101].replace('"op3"', '"op3', 1)
    trace = load_trace(_compact(tmp_path, texts), use_cache=False)
    assert trace.n == 299 and trace.report.warning() == "skipped 1 malformed event"


def test_garbage_at_a_chunk_cut_is_walked_past(tmp_path, monkeypatch):
    """Garbage right where a chunk is cut, before an event with `}, {` in a string: the cutter walks past it to a
    boundary between events, never into the string (the next chunk read out of step: 8,500 of 65,000 lost)."""
    monkeypatch.setattr(source, "CHUNK_BYTES", 16 << 10)
    texts = [json.dumps(_event(k)) for k in range(3000)]
    for k in range(40, 3000, 41):  # about one per chunk, at every offset from its cut
        texts[k] = "@@##!!,\n" + texts[k]
    trace = load_trace(_compact(tmp_path, texts), use_cache=False)
    assert trace.n == 3000 and trace.report.warning() == f"skipped {len(range(40, 3000, 41))} malformed events"


def test_an_export_of_events_without_a_comma_is_json(tmp_path):
    """The export rebuilds a file whose events it read without a comma between (copied, it was no JSON)."""
    import tracetui

    texts = [json.dumps(_event(k)) for k in range(50)]
    texts[20] = texts[20] + "\n" + texts.pop(21)
    done = tracetui.load(_compact(tmp_path, texts)).export(tmp_path / "out.json")
    written = json.loads((tmp_path / "out.json").read_text())["traceEvents"]
    assert [e for e in written if e.get("cat") == "cpu_op"] == [_event(k) for k in range(50)] and not done["left_out"]
