"""Bad and odd input: salvage what can be salvaged, say what was skipped, never modify the file."""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest
from conftest import SAMPLES, X

from tui.model import TraceError, load_trace


def _events(n=50):
    return [X(f"aten::op{i % 5}", i * 10, 5, External_id=i + 1) for i in range(n)]


def _kineto_text(events) -> str:
    """Kineto's own layout: one event per line, each ending '},'."""
    body = ",\n".join("  " + json.dumps(e) for e in events)
    return '{\n  "schemaVersion": 1,\n  "traceEvents": [\n' + body + '\n  ],\n  "traceName": "x"\n}\n'


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("comma", [",", ",\n  ", " ,\n"])
def test_a_comma_after_the_last_event_of_a_whole_file_is_no_cut(tmp_path, comma):
    """`[..., {...},]`: Chrome's trace viewer reads it; the last event was dropped as the partial one of a cut file."""
    text = _kineto_text(_events())
    last = text.rindex("}", 0, text.rindex("]"))
    path = tmp_path / "t.json"
    path.write_text(text[: last + 1] + comma + text[last + 1 :])
    t = load_trace(path, use_cache=False)
    assert t.n == 50 and not t.report.truncated and t.report.warning() in ("", None)


def test_truncated_file_loads_everything_before_the_cut(tmp_path):
    text = _kineto_text(_events())
    cut = text.index('"aten::op0", "pid": 1, "tid": 1, "ts": 400')  # inside event 40
    path = tmp_path / "killed.json.tmp"
    path.write_text(text[:cut])
    before = _digest(path)
    t = load_trace(path, use_cache=False)
    assert t.n == 40
    assert t.report.truncated and t.report.dropped_tail
    assert "truncated" in t.report.warning() and "40 events" in t.report.warning()
    assert _digest(path) == before


def test_trailing_comma_after_last_event_loses_nothing(tmp_path):
    text = _kineto_text(_events())
    path = tmp_path / "t.json"
    path.write_text(text[: text.rindex("}") - 1].rsplit("]", 1)[0].rstrip() + ",\n")
    t = load_trace(path, use_cache=False)
    assert t.n == 50
    assert t.report.truncated


def test_malformed_events_are_skipped_and_counted(tmp_path):
    text = _kineto_text(_events())
    text = text.replace(
        '{"ph": "X", "cat": "cpu_op", "name": "aten::op3", "pid": 1, "tid": 1, "ts": 30,', '{"ph": "X" "cat": oops,', 1
    )
    path = tmp_path / "t.json"
    path.write_text(text)
    t = load_trace(path, use_cache=False)
    assert t.n == 49
    assert t.report.skipped == 1
    assert "skipped 1 malformed" in t.report.warning()


def test_control_characters_and_bad_utf8_are_repaired(tmp_path):
    text = _kineto_text(_events(10)).replace("aten::op2", "aten::op\x012", 1)
    raw = text.encode().replace(b"aten::op4", b"aten::op\xff4", 1)
    path = tmp_path / "t.json"
    path.write_bytes(raw)
    t = load_trace(path, use_cache=False)
    assert t.n == 10
    assert t.report.repaired == 2 and t.report.skipped == 0


def test_odd_types_are_tolerated(tmp_path):
    events = [
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "a",
            "pid": "7",
            "tid": -1,
            "ts": "12.5",
            "dur": 3,
            "args": {"External id": "9"},
        },
        {
            "ph": "X",
            "cat": "kernel",
            "name": "k",
            "pid": 0,
            "tid": 7,
            "ts": 20,
            "dur": 1,
            "args": {"correlation": 10159970886766084423, "grid": "grid(1,)", "memory bandwidth (GB/s)": "N/A"},
        },
        {"ph": "X", "name": 5, "ts": "30"},
        {"ph": "X", "name": "no time", "dur": 1},
        {"no": "phase"},
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    t = load_trace(path, use_cache=False)
    assert t.n == 3
    assert t.x.ext.tolist()[0] == 9 and t.x.corr.tolist()[1] == -1
    assert t.name_of(2) == "5" and t.x.ts.tolist() == [12500, 20000, 30000]
    # an event without a time is left out and named: at time 0 it would stretch the timeline from 1970
    assert t.report.untimed == 1
    assert "skipped 1 event without a numeric start time" in t.report.warning()
    # a correlation past 2**63 - 1 (an unsigned 64-bit id, seen in the wild): the link is dropped, the kernel kept
    assert "1 link id(s) past 2**63 - 1 dropped, their events kept unlinked (the id limit)" in t.report.warning()


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "empty trace"),
        (b"   \n", "empty trace"),
        (b"\x0a\x0b\x08\x01\x12", "not a JSON trace"),
        (b'{"foo": 1}', "no 'traceEvents'"),
        (b'{"traceEvents": 5}', "not an array"),
        (gzip.compress(b"", mtime=0), "empty trace"),
    ],
)
def test_unreadable_input_is_a_one_line_error(tmp_path, content, problem):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(TraceError) as err:
        load_trace(path, use_cache=False)
    assert problem in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_missing_file_and_directory_without_traces(tmp_path):
    with pytest.raises(TraceError, match="no such file"):
        load_trace(tmp_path / "nope.json")
    with pytest.raises(TraceError, match="no .json"):
        load_trace(tmp_path)


def test_truncated_gzip_stream_is_salvaged(tmp_path):
    data = (SAMPLES / "a100-ddp-nccl.json.gz").read_bytes()
    path = tmp_path / "cut.json.gz"
    path.write_bytes(data[: len(data) // 2])
    t = load_trace(path, use_cache=False)
    assert 0 < t.n < 26933
    assert t.report.gz_truncated
    assert "gzip stream is truncated" in t.report.warning()


def test_unknown_phases_are_skipped_and_named(tmp_path):
    from conftest import write_trace

    events = [
        X("a", 1, 1),
        {"ph": "B", "name": "b", "pid": 1, "tid": 1, "ts": 2},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 3},
        {"ph": "C", "name": "util", "pid": 0, "ts": 4, "args": {"v": 1}},
    ]
    t = load_trace(write_trace(tmp_path / "t.json", events), use_cache=False)
    assert t.n == 1
    assert t.report.warning() == "skipped events of phases tracetui does not read (1 'B', 1 'E')"


def test_utf8_byte_order_mark_is_skipped(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + _kineto_text(_events(5)).encode())
    t = load_trace(path, use_cache=False)
    assert t.n == 5 and t.report.warning() is None


def test_a_gpu_trace_cut_before_its_gpu_records_is_not_called_cpu_only_without_a_warning(tmp_path):
    """torch writes the kernels after the CPU events: a cut file can hold none, and the verdict must say why."""
    from tui.model.analyses.explain.readings import verdict_reading
    from tui.model.analyses.results import Results

    text = gzip.decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes()).decode()
    path = tmp_path / "cut.json"
    path.write_text(text[: text.index('"cat": "cuda_runtime"')])  # before the first launch call
    s = Results(load_trace(path, use_cache=False)).summary
    assert s.cpu_only and s.cut_short
    assert "cut short" in s.reason and "lost part" in s.reason
    assert verdict_reading(s).startswith("No GPU activity in the part of the file that was read")
    whole = Results(load_trace(SAMPLES / "h100-bert-small.json.gz", use_cache=False)).summary
    assert not whole.cut_short and "cut short" not in whole.reason
