"""Damaged real traces always say so: a cut head, a cut tail, bad events each get one warning line naming
what was lost, and a file that cannot be salvaged is one error line (issue 25, point 9).

Each test cuts a copy of a real trace from ../shared/traces (or a shipped sample) in tmp; the input
is never modified.
"""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest
from conftest import SAMPLES, SHARED

from tui.cli import main
from tui.model import TraceError, load_trace

TRITON = SHARED / "hta-2024-10-a100-triton-small" / "triton_example.json.gz"  # deviceProperties before the events
needs_shared = pytest.mark.skipif(not TRITON.exists(), reason="needs ../shared/traces")


def _text(path) -> str:
    return gzip.decompress(path.read_bytes()).decode()


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _warning(capsys, path) -> tuple[int, str, str]:
    code = main(["summary", str(path), "--no-cache"])
    out = capsys.readouterr()
    return code, out.out, out.err


@needs_shared
def test_a_head_cut_where_device_properties_began_says_the_gpu_properties_are_lost(tmp_path, capsys):
    """The case found by hand: the file starts `{ {` where `"deviceProperties": [` was."""
    text = _text(TRITON)
    opened = text.index('"deviceProperties": [') + len('"deviceProperties": [')
    path = tmp_path / "cut-head.json"
    path.write_text("{ " + text[opened:].lstrip())
    before = _digest(path)
    whole, cut = load_trace(TRITON, use_cache=False), load_trace(path, use_cache=False)
    assert cut.n == whole.n and cut.names == whole.names  # every event is still there
    assert whole.devices and not cut.devices
    warning = cut.report.warning()
    assert warning and "the JSON before the events is damaged" in warning and "deviceProperties" in warning
    code, out, err = _warning(capsys, path)
    assert code == 0 and out and err.count("\n") == 1
    assert err.startswith(f"tracetui: warning: {path}: the JSON before the events is damaged")
    assert _digest(path) == before


@needs_shared
def test_a_damaged_head_keeps_the_keys_it_can_still_read(tmp_path):
    text = _text(SHARED / "hta-2024-04-a100-cuda-event-sync-multistream" / "event_sync_trace.json.gz")
    assert text.index('"distributedInfo"') < text.index('"deviceProperties"')
    path = tmp_path / "cut.json"
    path.write_text(text.replace('"deviceProperties": [', "", 1))
    t = load_trace(path, use_cache=False)
    assert t.ranks[0]["rank_from"] == "distributedInfo"  # read on its own from the damaged head
    assert "kept schemaVersion, distributedInfo" in t.report.warning()


@needs_shared
def test_a_head_cut_inside_the_events_is_read_from_the_first_whole_event(tmp_path):
    text = _text(TRITON)
    events = text.index('"traceEvents"')
    middle = events + (len(text) - events) // 2
    path = tmp_path / "cut.json"
    path.write_text(text[middle:])  # inside some event: no "traceEvents" key is left
    whole, cut = load_trace(TRITON, use_cache=False), load_trace(path, use_cache=False)
    assert 0 < cut.n < whole.n
    assert set(cut.x.ts.tolist()) <= set(whole.x.ts.tolist())  # the events after the cut, as they were
    warning = cut.report.warning()
    assert warning.startswith("the file's head is cut inside its events")
    assert "partial event before it was dropped" in warning


@needs_shared
def test_a_head_and_a_tail_cut_both_say_so(tmp_path):
    text = _text(TRITON)
    path = tmp_path / "cut.json"
    path.write_text("{ " + text[text.index('"deviceProperties": [') + 21 : int(len(text) * 0.7)])
    t = load_trace(path, use_cache=False)
    warning = t.report.warning()
    assert t.n > 0 and t.report.truncated
    assert "the JSON before the events is damaged" in warning and "the JSON is truncated" in warning


def test_a_tail_cut_in_a_real_trace_says_how_many_events_were_kept(tmp_path):
    text = _text(SAMPLES / "h100-bert-small.json.gz")
    path = tmp_path / "cut.json"
    path.write_text(text[: int(len(text) * 0.6)])
    t = load_trace(path, use_cache=False)
    assert t.report.truncated
    assert f"loaded the {t.report.events:,} events before the cut" in t.report.warning()


@pytest.mark.parametrize(
    "where",
    [
        "just after the events' ]",
        "after the comma",
        "inside deviceProperties",
        "after deviceProperties",
        "inside the last key",
    ],
)
def test_a_cut_after_the_events_keeps_every_event_and_the_keys_before_the_cut(tmp_path, where):
    """A fresh-eyes run's case: the H100 sample (Kineto writes deviceProperties and baseTimeNanoseconds after the
    events) cut after the events' closing bracket lost its last event, counted as "1 malformed event"."""
    text = _text(SAMPLES / "h100-bert-small.json.gz")
    whole = load_trace(SAMPLES / "h100-bert-small.json.gz", use_cache=False)
    close = text.rindex("]", 0, text.index('"deviceProperties"'))
    props = text.index('"deviceProperties"')
    cut = {
        "just after the events' ]": close + 1,
        "after the comma": text.index(",", close) + 1,
        "inside deviceProperties": props + 200,
        "after deviceProperties": text.index('"cuda_runtime_version"', props),
        "inside the last key": text.index('"baseTimeNanoseconds"', props) + 30,
    }[where]
    path = tmp_path / "cut.json"
    path.write_text(text[:cut])
    t = load_trace(path, use_cache=False)
    assert t.report.truncated and t.n == whole.n and t.report.events == whole.report.events
    assert t.report.skipped == 0 and t.report.garbled == 0, t.report.warning()
    assert f"loaded the {t.report.events:,} events before the cut" in t.report.warning()
    assert t.names == whole.names
    if where in ("after deviceProperties", "inside the last key"):
        assert t.devices == whole.devices  # read from the keys after the events
    if where == "inside deviceProperties":
        assert t.devices == [] and "the file is cut after its events: lost the GPU properties" in t.report.warning()


def test_a_cut_inside_an_event_after_an_array_of_event_like_objects_loses_no_whole_event(tmp_path):
    """The ']' that closes an arg holding objects with a "ph" key is no end of the events when events follow it."""
    events = [
        {"ph": "X", "name": f"op{k}", "pid": 1, "tid": 1, "ts": 10 * k, "dur": 5, "args": {"k": k}} for k in range(30)
    ]
    events[10]["args"]["inner"] = [{"ph": "X", "name": "not an event", "ts": 1}]
    text = json.dumps({"traceEvents": events})
    path = tmp_path / "cut.json"
    path.write_text(text[: text.index('"op29"')])
    t = load_trace(path, use_cache=False)
    assert t.report.truncated and t.n == 29 and t.report.skipped == 0


def test_a_cut_after_the_first_event_counts_one_event(tmp_path):
    path = tmp_path / "one.json"
    path.write_text('{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}, {"ph": "X", "na')
    t = load_trace(path, use_cache=False)
    assert "loaded the 1 event before the cut" in t.report.warning()


def test_a_bad_event_in_a_real_trace_is_skipped_and_counted(tmp_path):
    text = _text(SAMPLES / "h100-bert-small.json.gz")
    at = text.index('"ph": "X"', len(text) // 2)
    path = tmp_path / "bad.json"
    path.write_text(text[:at] + '"ph": "X" "oops",' + text[at + len('"ph": "X",') :])
    whole, bad = load_trace(SAMPLES / "h100-bert-small.json.gz", use_cache=False), load_trace(path, use_cache=False)
    assert bad.n == whole.n - 1
    assert bad.report.warning() == "skipped 1 malformed event"


@pytest.mark.parametrize("how", ["written over", "written into"])
def test_garbage_across_several_events_is_said_in_bytes_and_the_events_it_held_at_least(tmp_path, how):
    """GIVEN 4 KB of random bytes written over (or into) the events of a real trace WHEN it loads THEN the events
    around the garbage all load, and the warning says the garbled kilobytes and a lower bound of the events lost,
    not "1 malformed event" (one stretch, many events)."""
    import json
    import random

    raw = gzip.decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes())
    at = raw.index(b"\n    {", len(raw) // 2)
    garbage = random.Random(1).randbytes(4096)
    path = tmp_path / "garbled.json"
    path.write_bytes(raw[:at] + garbage + raw[at + (4096 if how == "written over" else 0) :])
    whole, bad = load_trace(SAMPLES / "h100-bert-small.json.gz", use_cache=False), load_trace(path, use_cache=False)
    events = len(json.loads(raw)["traceEvents"])
    lost = events - bad.report.events
    # Written into, no event is lost: the one before the garbage reads (the salvage follows its brackets to its end;
    # it went with the stretch before), and so does the one after. Written over, the tail of an event the garbage
    # began in (an object of its args, no phase key) goes with the stretch.
    over = how == "written over"
    assert lost == (13 if over else 0) and bad.report.skipped == 0
    held = bad.report.garbled_events  # the phase keys left in the garbage: none, the bytes being random
    assert held == 0 and 4096 <= bad.report.garbled < 4096 + 2000 and whole.report.warning() is None
    kb = f"{bad.report.garbled / 1024:.1f} KiB"  # binary units, as every size tracetui prints
    assert bad.report.warning() == f"skipped {kb} of garbled text"


@pytest.mark.parametrize(
    ("cut", "problem"),
    [
        (lambda text: text[: text.index('"traceEvents"')], "cut short before its events"),  # the head alone
        (lambda text: text[: text.index('"traceEvents"') + 40], "no trace events in the file"),
        (lambda text: "garbage " + text[:200], "not a JSON trace"),
    ],
)
def test_a_file_that_cannot_be_salvaged_is_one_error_line(tmp_path, capsys, cut, problem):
    path = tmp_path / "hopeless.json"
    path.write_text(cut(_text(SAMPLES / "h100-bert-small.json.gz")))
    with pytest.raises(TraceError, match=problem):
        load_trace(path, use_cache=False)
    code, out, err = _warning(capsys, path)
    assert code == 2 and out == ""
    assert err.startswith(f"tracetui: error: {path}: ") and problem in err and err.count("\n") == 1
