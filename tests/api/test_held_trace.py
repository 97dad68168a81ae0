"""A tracetui.Trace held while its file is rewritten says so: its warnings, and the args it can no longer read
(they were read by offset from the file: other bytes there read as no args, an empty roofline, silently)."""

from __future__ import annotations

import gzip
import os

import pytest
from conftest import SAMPLES

import tracetui

BERT = SAMPLES / "h100-bert-small.json.gz"
OTHER = SAMPLES / "v100-2021-small.json.gz"


def _kernel(t: tracetui.Trace) -> int:
    return t.events(cat="kernel", limit=1)[0]["id"]


@pytest.mark.parametrize("cache", [True, False])
def test_a_rewritten_json_file_is_said_and_its_args_refused(tmp_path, cache):
    path = tmp_path / "t.json"
    path.write_bytes(gzip.decompress(BERT.read_bytes()))
    t = tracetui.load(path, cache=cache)
    k = _kernel(t)
    assert t.event(k)["args"] and t.warnings == []
    path.write_bytes(gzip.decompress(OTHER.read_bytes()))  # rewritten in place
    assert t.warnings == [
        f"{path}: changed since it was loaded; the answers are of the trace as it was loaded, and the args of its "
        "events may no longer be read (tracetui.load it again)"
    ]
    with pytest.raises(tracetui.TraceError, match="changed since the trace was loaded: its events' args cannot"):
        t.event(k)
    assert tracetui.load(path, cache=cache).results.trace.n != t.results.trace.n  # loaded again: the new one


def test_a_rewritten_gzip_is_said_and_its_args_still_read_from_the_unzipped_copy(tmp_path):
    path = tmp_path / "t.json.gz"
    path.write_bytes(BERT.read_bytes())
    t = tracetui.load(path)
    k = _kernel(t)
    args = t.event(k)["args"]
    path.write_bytes(OTHER.read_bytes())
    os.utime(path, (1, 1))
    assert len(t.warnings) == 1 and "changed since it was loaded" in t.warnings[0]
    assert t.event(k)["args"] == args  # the cache's unzipped copy is the loaded trace's own
