"""watch reads a capture only once it is whole: a trace written in pieces, each ending at an event's closing
brace, is never summarized half-written; a legacy top-level array is a whole trace."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tui.model.load.source import EVENT_CUT
from tui.model.watch import Watcher, is_complete, summarize

TB = Path(__file__).parents[1] / "data" / "tb-repeat2"
CAPTURE = sorted(TB.iterdir())[-1]  # a handler's plain .json capture


def test_a_trace_written_in_pieces_is_reported_once_whole(tmp_path):
    """Every piece ends with '}' (an event's end), as a writer flushing events leaves it, and nothing is written
    between polls for longer than the settle time: only the whole file, once, is ready."""
    text = CAPTURE.read_bytes()
    cuts = [m.start() + 1 for m in EVENT_CUT.finditer(text)][::3]
    assert len(cuts) > 5
    folder = tmp_path / "run"
    folder.mkdir()
    f = folder / CAPTURE.name
    watcher = Watcher(folder, clock=lambda: time.time() + 5)  # old enough to settle by age at a first look
    reported, notes = [], []
    for cut in cuts:
        f.write_bytes(text[:cut])
        assert text[:cut].rstrip().endswith(b"}") and not is_complete(f)
        ready, said = watcher.poll()
        reported += ready
        notes += said
    f.write_bytes(text)
    for _ in range(3):
        ready, said = watcher.poll()
        reported += ready
        notes += said
    assert reported == [f] and notes == [f"{f.name} is still being written; skipped for now"]
    assert summarize(f, use_cache=False).steps == 2


def test_a_legacy_top_level_array_is_a_whole_trace(tmp_path):
    events = json.loads(CAPTURE.read_text())["traceEvents"]
    folder = tmp_path / "run"
    folder.mkdir()
    legacy = folder / "legacy.json"
    legacy.write_text(json.dumps(events))
    assert is_complete(legacy)
    legacy.write_text(json.dumps(events)[:-200])
    assert not is_complete(legacy)
    legacy.write_text(json.dumps(events))
    watcher = Watcher(folder, clock=lambda: time.time() + 5)
    watcher.poll()
    ready, notes = watcher.poll()
    assert notes == [] and summarize(legacy, use_cache=False).steps == 2


def test_a_whole_trace_with_a_raw_control_byte_is_whole(tmp_path):
    """Malformed but closed (the loader salvages a raw control byte): whole; random bytes are not."""
    f = tmp_path / "a.json"
    f.write_bytes(CAPTURE.read_bytes().replace(b'"name": "', b'"name": "\x01', 1))
    assert is_complete(f)
    f.write_bytes(bytes(range(256)) * 4)
    assert not is_complete(f)
