"""Args decoded by column the first time they are asked for, then kept (issue 29, deliverable 2); and the analyses
that read shapes, stacks or memory give the same results from a cold and from a cached trace."""

from __future__ import annotations

import gzip
import json

import msgspec
import numpy as np
import pytest
from conftest import SAMPLES

from tui.model import load_trace
from tui.model.analyses.results import Results
from tui.model.load import lazy
from tui.model.load.args import event_args
from tui.model.load.lazy import arg_column

BERT = SAMPLES / "h100-bert-small.json.gz"  # shapes, concrete inputs, stacks and [memory] samples


@pytest.fixture
def small_chunks(monkeypatch):
    import tui.model.load.source

    monkeypatch.setattr(tui.model.load.source, "CHUNK_BYTES", 16 << 10)


@pytest.mark.parametrize("key", ["Input type", "Concrete Inputs", "Input Strides", "grid", "est. achieved occupancy %"])
def test_a_column_holds_each_events_arg_as_the_details_panel_reads_it(key, small_chunks):
    t = load_trace(BERT, use_cache=False)
    column = arg_column(t, key)
    assert len(column.ids) == t.n and (column.ids >= 0).any()
    for i in range(t.n):
        assert column.of(i) == event_args(t, i).get(key), i


def test_input_dims_by_column_agree_with_the_shapes_of_the_first_pass():
    t = load_trace(BERT, use_cache=False)
    column = arg_column(t, "Input Dims")
    has = t.x.shape >= 0
    assert np.array_equal(column.ids >= 0, has)
    for i in np.flatnonzero(has).tolist():
        assert column.of(i) == json.loads(t.shapes[int(t.x.shape[i])])


def test_a_column_is_kept_in_the_cache_and_mapped_back(tmp_path, monkeypatch):
    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress(BERT.read_bytes()))
    first = arg_column(load_trace(plain), "Input type")  # decoded and kept
    monkeypatch.setattr(lazy, "_decoded", lambda *a: pytest.fail("a kept column was decoded again"))
    again = load_trace(plain)
    assert again.report.from_cache
    second = arg_column(again, "Input type")
    assert np.array_equal(first.ids, second.ids) and first.values == second.values


def test_a_key_with_a_slash_is_kept_too(tmp_path, monkeypatch):
    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress(BERT.read_bytes()))
    first = arg_column(load_trace(plain), "memory bandwidth (GB/s)")
    assert (first.ids >= 0).sum() == 1
    monkeypatch.setattr(lazy, "_decoded", lambda *a: pytest.fail("a kept column was decoded again"))
    assert arg_column(load_trace(plain), "memory bandwidth (GB/s)").values == first.values


def test_a_kept_column_that_does_not_check_out_is_decoded_again(tmp_path):
    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress(BERT.read_bytes()))
    t = load_trace(plain)
    arg_column(t, "Input type")
    t.store.put_blob(lazy._name("Input type"), msgspec.msgpack.encode([b"[1]"]))  # too few values for the ids
    again = load_trace(plain)
    assert arg_column(again, "Input type").values == arg_column(t, "Input type").values


def test_a_damaged_events_args_are_read_as_the_salvage_reads_them(tmp_path, small_chunks):
    text = gzip.decompress(BERT.read_bytes()).decode()
    at = text.index('"Input type": [', len(text) // 3)
    broken = text[:at] + '"Input type": ["\\q", ' + text[at + len('"Input type": [') :]  # a stray backslash
    path = tmp_path / "t.json"
    path.write_text(broken)
    t = load_trace(path, use_cache=False)
    assert t.report.repaired == 1
    column = arg_column(t, "Input type")
    for i in range(t.n):
        assert column.of(i) == event_args(t, i).get("Input type"), i
    assert any(isinstance(v, list) and "/q" in v for v in column.values)  # the repaired value, as the panel has it


def _recomputed(trace) -> Results:
    """The analyses computed again from the trace's columns (nothing read back from the store)."""
    trace.store = None
    return Results(trace)


@pytest.mark.parametrize("name", ["h100-bert-small.json.gz", "b300-moe-small.json.gz"])
def test_analyses_of_shapes_stacks_and_memory_are_the_same_cold_and_cached(tmp_path, name):
    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress((SAMPLES / name).read_bytes()))
    cold = Results(load_trace(plain, use_cache=False))
    load_trace(plain)  # writes the cache entry
    cached = load_trace(plain)
    assert cached.report.from_cache
    warm = _recomputed(cached)
    for result in ("ops_by_shape", "roofline", "memory", "code", "code_all", "ops"):
        assert getattr(cold, result) == getattr(warm, result), result


@pytest.mark.parametrize("bad_bytes", [b"\xff\xfe", b"ok"])
def test_args_python_writes_but_orjson_refuses_are_read_and_stay_json(tmp_path, bad_bytes):
    """NaN and Infinity (Python's json.dumps writes them), a lone surrogate and bad UTF-8 in one event's args: that
    event's args read (a constant as its name), and its neighbours' too. Before, the event read as no args."""
    args = [{"External id": k, "v": 1.5} for k in range(6)]
    args[1]["v"], args[2]["v"], args[3]["s"] = float("nan"), float("-inf"), "\ud800x"
    events = [
        {"ph": "X", "cat": "cpu_op", "name": f"op{k}", "pid": 1, "tid": 1, "ts": 10 * k, "dur": 5, "args": a}
        for k, a in enumerate(args)
    ]
    text = json.dumps({"traceEvents": events}).replace('"External id": 4', '"b": "BAD", "External id": 4')
    path = tmp_path / "constants.json"
    path.write_bytes(text.encode().replace(b"BAD", bad_bytes))  # (without bad bytes the chunk reads by column)
    t = load_trace(path, use_cache=False)
    read = [event_args(t, i) for i in range(t.n)]
    assert [a["External id"] for a in read] == list(range(6))
    assert read[1]["v"] == "NaN" and read[2]["v"] == "-Infinity" and read[3]["s"] == "\ud800x"
    assert read[4]["b"] == bad_bytes.decode("utf-8", "replace") and read[5] == args[5]
    json.dumps(read, allow_nan=False)  # plain JSON values
    for key in ("v", "s", "b", "External id"):  # as the analyses read them, by column
        column = arg_column(t, key)
        assert [column.of(i) for i in range(t.n)] == [a.get(key) for a in read], key
