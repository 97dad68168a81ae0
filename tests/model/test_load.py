"""Loading: inputs, decoding, time precision and categories."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from conftest import SAMPLES, X, write_trace

from tui.model import load_trace
from tui.model.cats import Cat


def test_json_and_gzip_give_the_same_columns(tmp_path):
    src = SAMPLES / "b300-moe-small.json.gz"
    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress(src.read_bytes()))
    a, b = load_trace(src, use_cache=False), load_trace(plain, use_cache=False)
    assert a.n == b.n == 270
    for key in ("ts", "dur", "cat", "corr", "ext"):
        assert np.array_equal(a.x.column(key), b.x.column(key))
    assert a.names == b.names


def test_gzip_is_sniffed_not_taken_from_the_name(tmp_path):
    path = tmp_path / "trace.json"  # gzip bytes under a .json name
    path.write_bytes((SAMPLES / "cpu-only-gloo.json.gz").read_bytes())
    assert load_trace(path, use_cache=False).n == 16


def test_legacy_top_level_array(tmp_path):
    events = [X("aten::mm", 10, 5, pid="CPU functions"), X("aten::add", 20, 1, pid="CPU functions")]
    path = tmp_path / "legacy.json"
    path.write_text(json.dumps(events))
    t = load_trace(path, use_cache=False)
    assert sorted(t.names) == ["aten::add", "aten::mm"]
    assert t.report.warning() is None


def test_ts_and_dur_become_exact_integer_nanoseconds(tmp_path):
    events = [X("a", 1419247332500.684, 22.51), X("b", 1610366662254362, 4)]
    t = load_trace(write_trace(tmp_path / "t.json", events), use_cache=False)
    assert t.x.ts.tolist() == [1419247332500684, 1610366662254362000]
    assert t.x.dur.tolist() == [22510, 4000]


def test_19_digit_absolute_decimals_are_read_from_the_text(tmp_path):
    # 2024-03 nightlies: absolute epoch µs with 3 decimals, not exact in float64.
    path = tmp_path / "t.json"
    path.write_text(
        '{"displayTimeUnit": "ns", "traceEvents": ['
        '{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1712195495406752.801, "dur": 1.5},'
        '{"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1712195495406752.803, "dur": 0.001}]}'
    )
    t = load_trace(path, use_cache=False)
    assert t.x.ts.tolist() == [1712195495406752801, 1712195495406752803]
    assert t.x.dur.tolist() == [1500, 1]


def test_base_time_nanoseconds_is_added(tmp_path):
    t = load_trace(write_trace(tmp_path / "t.json", [X("a", 1.5, 1)], baseTimeNanoseconds=10**18), use_cache=False)
    assert int(t.x.ts[0]) == 10**18 + 1500


def test_legacy_categories_map_to_todays(tmp_path):
    t = load_trace(SAMPLES / "v100-2021-small.json.gz", use_cache=False)
    cats = {t.cat_names[c]: Cat(k) for c, k in zip(t.x.cat_str, t.x.cat, strict=False)}
    assert cats["Operator"] == Cat.CPU_OP
    assert cats["Runtime"] == Cat.RUNTIME
    assert cats["Kernel"] == Cat.KERNEL
    assert cats["Memcpy"] == Cat.MEMCPY


def test_string_and_numeric_string_tids_normalize(tmp_path):
    t = load_trace(SAMPLES / "v100-2021-small.json.gz", use_cache=False)
    keys = {(tr.pid, tr.tid) for tr in t.tracks}
    assert (0, "stream 7") in keys
    assert (24572, 24572) in keys  # "24572" in X events, 24572 in flows: one track
    assert not any(isinstance(tid, str) and tid.isdigit() for _, tid in keys)


def test_negative_duration_is_skipped_and_said_and_missing_dur_is_zero(tmp_path):
    events = [X("a", 10, -5), {"ph": "X", "name": "b", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 12}]
    t = load_trace(write_trace(tmp_path / "t.json", events), use_cache=False)
    assert [t.name_of(i) for i in range(t.n)] == ["b"] and t.x.dur.tolist() == [0]
    assert t.report.warning() == "skipped 1 event holding a number that cannot be: dur negative (1)"


def test_folder_of_ranks_is_one_process_group_per_rank(tmp_path):
    for rank in (0, 1):
        write_trace(
            tmp_path / f"rank{rank}.json",
            [X("aten::mm", 10 + rank, 5, pid=7, tid=7, External_id=1)],
            distributedInfo={"rank": rank, "world_size": 2},
        )
    t = load_trace(tmp_path, use_cache=False)
    assert t.n == 2
    assert sorted(tr.rank for tr in t.tracks) == [0, 1]
    assert {tr.process.split(" ·")[0] for tr in t.tracks} == {"rank 0", "rank 1"}


def test_rank_from_file_name_when_no_distributed_info(tmp_path):
    write_trace(tmp_path / "rank-3.Apr_03.pt.trace.json", [X("a", 1, 1)])
    t = load_trace(tmp_path, use_cache=False)
    assert t.tracks[0].rank == 3


def test_overlapping_events_on_one_row_are_all_kept(tmp_path):
    events = [X("k1", 0, 10, cat="kernel", pid=0, tid=7), X("k2", 5, 10, cat="kernel", pid=0, tid=7)]
    t = load_trace(write_trace(tmp_path / "t.json", events), use_cache=False)
    assert t.n == 2


def test_metadata_names_tracks_last_one_wins(tmp_path):
    events = [
        X("aten::mm", 1, 1, pid=5, tid=9),
        {"ph": "M", "name": "thread_name", "pid": 5, "tid": 9, "args": {"name": "thread 9 (pt_main_thread)"}},
        {"ph": "M", "name": "thread_name", "pid": 5, "tid": 9, "args": {"name": "thread 9 (pt_autograd_0)"}},
    ]
    t = load_trace(write_trace(tmp_path / "t.json", events), use_cache=False)
    assert t.tracks[0].name.startswith("autograd thread")


@pytest.mark.parametrize("name", ["h100-bert-small.json.gz", "a100-ddp-nccl.json.gz"])
def test_gpu_streams_are_named_for_humans(name):
    t = load_trace(SAMPLES / name, use_cache=False)
    gpu = [tr for tr in t.tracks if tr.kind == "gpu"]
    assert gpu and all(tr.name.startswith("GPU ") and " stream " in tr.name for tr in gpu)
    assert any(tr.name == "python main thread" for tr in t.tracks if tr.events)


def test_folder_args_and_links_stay_per_file(tmp_path, monkeypatch):
    import shutil

    import tui.model.load.source

    monkeypatch.setattr(tui.model.load.source, "CHUNK_BYTES", 8192)  # many chunks per file
    from tui.model.analyses.results import Results
    from tui.model.load.args import event_args

    # the same trace twice: both claim rank 0, so they are numbered in file order
    for k in range(2):
        shutil.copy(SAMPLES / "b300-moe-small.json.gz", tmp_path / f"copy{k}.json.gz")
    t = load_trace(tmp_path, use_cache=False)
    assert t.n == 2 * 270 and sorted({tr.rank for tr in t.tracks}) == [0, 1]
    a = Results(t)
    second = np.flatnonzero(t.x.cat == 4)[-1]  # a kernel from the second file
    assert t.tracks[int(t.x.track[second])].rank == 1
    assert event_args(t, int(second))["correlation"] == int(t.x.corr[second])
    launcher = int(a.links.launcher[second])
    assert launcher >= 0 and t.tracks[int(t.x.track[launcher])].rank == 1


@pytest.mark.parametrize("name", ["a100-ddp-nccl.json.gz", "h100-bert-small.json.gz"])
def test_parallel_decode_gives_the_same_trace(tmp_path, request, name):
    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress((SAMPLES / name).read_bytes()))
    one = load_trace(plain, use_cache=False)
    calls = request.getfixturevalue("force_workers")
    seen = []
    many = load_trace(plain, use_cache=False, progress=seen.append)
    assert calls == [2] and seen[-1] == 1.0  # two worker processes decoded it

    # ids are interned per part, so compare what they stand for, event by event
    def values(t, table, key):
        return [getattr(t, table)[i] if i >= 0 else None for i in t.x.column(key)]

    for table, key in (("names", "name"), ("cat_names", "cat_str"), ("shapes", "shape")):
        assert values(one, table, key) == values(many, table, key), key
    assert [one.tracks[i].name for i in one.x.track] == [many.tracks[i].name for i in many.x.track]
    for key in ("ts", "dur", "cat", "ext", "corr", "py_id", "py_parent"):
        assert np.array_equal(one.x.column(key), many.x.column(key)), key
    assert many.report.events == one.report.events
    from tui.model.load.args import event_args

    last = many.n - 1
    assert event_args(many, last) == event_args(one, last)


def test_a_folder_warns_about_unknown_phases_as_one_file_does(tmp_path):
    """The folder merge once dropped unknown_phases, so a two-rank folder lost the warning one file prints."""
    for rank in (0, 1):
        write_trace(
            tmp_path / f"rank{rank}.json",
            [X("aten::mm", 10, 5), {"ph": "O", "name": "snapshot", "pid": 1, "tid": 1, "ts": 12, "id": 1}],
            distributedInfo={"rank": rank},
        )
    one = load_trace(tmp_path / "rank0.json", use_cache=False).report.warning()
    both = load_trace(tmp_path, use_cache=False).report.warning()
    assert one and "1 'O'" in one
    assert both and "2 'O'" in both


def _quick(path) -> bool:
    """Does the quick way (head and tail only) find the events of this file?"""
    from tui.model.load.locate import _locate_fast, first_byte
    from tui.model.load.source import Source, map_file

    src = Source(path, map_file(path))
    return _locate_fast(src, first_byte(src.buf)[0])


def _same_as_whole_decode(path):
    """The events and top-level keys found the quick way (head and tail) equal those of a whole decode."""
    import tui.model.load.locate as locate

    quick = load_trace(path, use_cache=False)
    real = locate._locate_fast
    try:
        locate._locate_fast = lambda src, pos: False  # the whole object decoded instead
        whole = load_trace(path, use_cache=False)
    finally:
        locate._locate_fast = real
    assert quick.n == whole.n and quick.names == whole.names and quick.devices == whole.devices
    assert quick.report.warning() == whole.report.warning()
    return quick


def test_events_followed_by_an_array_of_objects_end_where_they_end(tmp_path):
    """The last ']' of the file closes deviceProperties, not the events: its last element is no event."""
    events = [X("a", 1, 1), X("b]}", 2, 1, Input_Dims=[[1, 2]])]
    path = tmp_path / "t.json"
    devices = [{"id": 0, "name": "GPU ]}", "computeMajor": 9}, {"id": 1, "name": "x", "computeMajor": 9}]
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events, "deviceProperties": devices}))
    t = _same_as_whole_decode(path)
    assert _quick(path)
    assert t.n == 2 and t.names == ["a", "b]}"] and [d["name"] for d in t.devices] == ["GPU ]}", "x"]


@pytest.mark.parametrize(
    "head",
    [{"traceName": "traceEvents"}, {"metadata": {"traceEvents": [1, 2]}}],
    ids=["a value", "a nested key"],
)
def test_a_head_naming_trace_events_elsewhere_is_read_the_whole_way(tmp_path, head):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({**head, "traceEvents": [X("a", 1, 1)]}))
    assert not _quick(path)  # that "traceEvents" does not open the events: the whole object is decoded
    assert _same_as_whole_decode(path).n == 1


def test_an_empty_events_array_with_keys_after_it(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [ ], "deviceProperties": [{"id": 0}], "baseTimeNanoseconds": 5}')
    with pytest.raises(Exception, match="no trace events"):
        load_trace(path, use_cache=False)


def test_the_quick_way_agrees_with_the_whole_decode_on_the_samples(tmp_path):
    for name in ("h100-bert-small.json.gz", "v100-2021-small.json.gz", "cpu-only-gloo.json.gz"):
        plain = tmp_path / name.removesuffix(".gz")
        plain.write_bytes(gzip.decompress((SAMPLES / name).read_bytes()))
        assert _quick(plain), name
        _same_as_whole_decode(plain)
