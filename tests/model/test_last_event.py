"""A raw control byte or bad UTF-8 inside the last event is read as in any other event (repaired, said once),
not taken for a cut file that drops it."""

from __future__ import annotations

import json

import pytest

import tracetui

EVENTS = [{"ph": "X", "cat": "cpu_op", "name": f"op{k}", "pid": 1, "tid": 1, "ts": k * 10, "dur": 5} for k in range(5)]


def _with(tmp_path, which: int, bad: bytes, where: str = "name") -> tracetui.Trace:
    text = json.dumps({"traceEvents": EVENTS}).encode()
    at = text.index(f'"op{which}"'.encode()) + 3  # inside the name, after "op
    path = tmp_path / "t.json"
    path.write_bytes(text[:at] + bad + text[at:])
    return tracetui.load(path, cache=False)


@pytest.mark.parametrize("bad", [b"\x01", b"\x1b[2J", b"\xff\xfe"], ids=["SOH", "ESC", "bad UTF-8"])
@pytest.mark.parametrize("which", [4, 2], ids=["last", "middle"])
def test_a_bad_byte_in_an_event_is_repaired_wherever_it_is(tmp_path, bad, which):
    t = _with(tmp_path, which, bad)
    assert t.results.trace.n == 5
    assert t.warnings == [f"{tmp_path / 't.json'}: repaired 1 event with bad characters"]
    assert not t.results.trace.report.truncated


def test_a_file_cut_inside_its_last_event_is_still_cut(tmp_path):
    text = json.dumps({"traceEvents": EVENTS}).encode()
    path = tmp_path / "t.json"
    path.write_bytes(text[: text.index(b'"op4"') + 3] + b"\x01")
    t = tracetui.load(path, cache=False)
    assert t.results.trace.n == 4 and t.results.trace.report.truncated
