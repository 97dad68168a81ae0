"""Allocator snapshots: the real H200 one's figures, and small built ones for each rule (a leak, fragmentation,
two streams, an OOM, allocations from before the history)."""

from __future__ import annotations

import numpy as np
import pytest
from allocator_snapshots import BASE, KB, MB, Builder, at, backward, fragmented, leak, op, py, write
from conftest import ROOT, SHARED

from tui.model.snapshot import open_snapshot
from tui.model.snapshot.columns import ACTIONS, INACTIVE, NO_STACK, build
from tui.model.snapshot.frames import BEFORE_HISTORY, Namer, cpp_label
from tui.model.snapshot.history import BEFORE, BEFORE_ALIVE, IN_HISTORY
from tui.model.snapshot.report import NO_HISTORY, device_memory, report
from tui.model.snapshot.state import END, state_at

REAL = ROOT / "tests" / "data" / "snapshots" / "h200-gpt-train.pickle.gz"  # the shared one, gzipped


def snap_of(b: Builder, history: bool = True):
    return build("built.pickle", b.snapshot(history))


@pytest.fixture(scope="module")
def real():
    return open_snapshot(REAL)


def test_the_real_snapshot_has_the_figures_its_readme_gives(real):
    """2,684 entries: 1,000 allocs, 839 frees requested and completed, 6 segment allocs; 45 segments; frames on
    every entry."""
    h = real.histories[0]
    counts = {ACTIONS[k]: int(n) for k, n in enumerate(np.bincount(h.action, minlength=len(ACTIONS))) if n}
    assert counts == {"alloc": 1000, "free_requested": 839, "free_completed": 839, "segment_alloc": 6}
    assert len(h) == 2684 and len(real.segments) == 45 and (h.stack != NO_STACK).all()
    assert real.timed and real.has_history and real.devices == [0]


def test_now_is_the_sum_over_the_segments_and_their_active_blocks(real):
    import gzip
    import pickle

    class Plain(pickle.Unpickler):
        def find_class(self, module, name):
            raise AssertionError(f"{module}.{name}")

    with gzip.open(REAL, "rb") as f:
        raw = Plain(f).load()
    segments = raw["segments"]
    active = [b for s in segments for b in s["blocks"] if b["state"] == "active_allocated"]
    d = report(real).devices[0]
    assert d.reserved_bytes == sum(s["total_size"] for s in segments) == 1_451_229_184
    assert d.allocated_bytes == sum(b["size"] for b in active) == sum(s["allocated_size"] for s in segments)
    assert d.requested_bytes == sum(b["requested_size"] for b in active) == 424_488_964
    assert d.segments.count == 45 and d.segments.large + d.segments.small == 45
    free = [b["size"] for s in segments for b in s["blocks"] if b["state"] == "inactive"]
    assert d.segments.free_bytes == sum(free) and d.segments.largest_free_bytes == max(free)


def test_the_history_ends_where_the_segments_are(real):
    """The live bytes after the last entry are the requested bytes of the blocks still allocated, and the
    memory rebuilt at the last entry is the snapshot's own blocks, block for block."""
    mem = device_memory(real, 0)
    assert mem.curves is not None and int(mem.curves.live[-1]) == report(real).devices[0].requested_bytes
    assert int(mem.curves.reserved[-1]) == int(real.segments.total_size.sum())
    rebuilt = state_at(real, 0, mem.allocs, mem.spans, len(real.histories[0]) - 1)
    exact = state_at(real, 0, mem.allocs, mem.spans, END)
    for col in ("seg_addr", "seg_size", "blk_addr", "blk_size", "blk_alloc"):
        assert np.array_equal(getattr(rebuilt, col), getattr(exact, col)), col


def test_the_real_peak_and_who_holds_it(real):
    d = report(real).devices[0]
    assert d.peak is not None and d.peak.requested_bytes == 697_333_768 and d.peak.allocations == 233
    top = {r.frame: r for r in d.by_frame}
    assert sum(r.bytes for r in d.by_frame) == d.peak.requested_bytes
    assert top["LogsumexpBackward0 (backward)"].kind == "c++"  # the autograd thread: C++ frames only
    assert (
        top["forward (h200_capture.py:72)"].kind == "user" and top["forward (h200_capture.py:72)"].op == "aten::linear"
    )
    assert BEFORE_HISTORY in top  # 163 MB allocated before _record_memory_history was called


def test_a_leak_is_what_was_allocated_in_the_history_and_never_freed():
    b = leak(3)  # 1 MB a step kept in a list, a 4 MB activation freed each step
    d = report(snap_of(b)).devices[0]
    assert [(r.frame, r.bytes, r.count) for r in d.never_freed] == [("remember (model.py:30)", 3 * MB, 3)]
    assert d.never_freed_bytes == 3 * MB and d.never_freed_count == 3
    assert d.peak is not None and (d.peak.requested_bytes, d.peak.allocations) == (7 * MB, 4)
    assert [(r.frame, r.bytes) for r in d.by_frame] == [
        ("forward (model.py:12)", 4 * MB),
        ("remember (model.py:30)", 3 * MB),
    ]
    assert d.allocated_bytes == 3 * MB and d.segments.free_bytes == d.segments.largest_free_bytes == 17 * MB


def test_an_oom_with_the_bytes_free_in_pieces_is_fragmentation():
    b = fragmented(0).oom(6 * MB, 2 * MB, at(50, aten="empty"))
    (oom,) = report(snap_of(b)).devices[0].ooms
    assert (oom.requested_bytes, oom.device_free_bytes, oom.reserved_bytes) == (6 * MB, 2 * MB, 20 * MB)
    assert (oom.pool_free_bytes, oom.largest_free_bytes, oom.fragmentation) == (8 * MB, 4 * MB, True)
    assert oom.frame == "forward (model.py:50)" and oom.live_bytes == 12 * MB and not oom.small


def test_an_oom_asking_more_than_is_free_is_memory_in_use():
    b = fragmented(0).oom(10 * MB, 2 * MB, at(51))
    (oom,) = report(snap_of(b)).devices[0].ooms
    assert oom.pool_free_bytes == 8 * MB and not oom.fragmentation


def test_the_oom_sees_the_memory_of_its_moment_not_the_end():
    """Freed after the OOM (as the exception unwinds): at the OOM the holes were there, at the end all is free."""
    b = fragmented(0).oom(6 * MB, 2 * MB, at(50))
    for k in (0, 2, 3, 4):
        b.free(BASE + 4 * k * MB)
    d = report(snap_of(b)).devices[0]
    assert d.ooms[0].largest_free_bytes == 4 * MB and d.ooms[0].fragmentation
    assert d.segments.largest_free_bytes == 20 * MB and d.allocated_bytes == 0


def test_a_request_cannot_use_the_free_blocks_of_another_stream():
    side = 0x5555
    b = Builder().segment(BASE, 20 * MB).segment(BASE + 32 * MB, 20 * MB, stream=side)
    b.alloc(BASE, 4 * MB, at(10))
    b.alloc(BASE + 32 * MB, 10 * MB, at(11), stream=side).alloc(BASE + 42 * MB, 10 * MB, at(12), stream=side)
    b.oom(8 * MB, 0, at(13), stream=side)
    d = report(snap_of(b)).devices[0]
    (oom,) = d.ooms
    assert (oom.stream, oom.pool_free_bytes, oom.largest_free_bytes, oom.fragmentation) == (side, 0, 0, False)
    assert d.segments.largest_free_bytes == 16 * MB and d.segments.largest_free_stream == 0
    assert d.segments.streams == [(0, 20 * MB, 16 * MB, 16 * MB), (side, 20 * MB, 0, 0)]


def test_small_requests_use_the_small_pool():
    b = Builder().segment(BASE, 2 * MB).segment(BASE + 4 * MB, 20 * MB)
    b.alloc(BASE, 100 * KB, at(5)).oom(512 * KB, 0, at(6))
    d = report(snap_of(b)).devices[0]
    assert (d.segments.small, d.segments.large) == (1, 1)
    (oom,) = d.ooms
    assert oom.small and oom.pool_free_bytes == 2 * MB - 100 * KB and oom.fragmentation


def test_allocations_from_before_the_history_fill_the_start():
    """A free with no alloc in the trace, and a block still allocated that no entry allocated, were there before."""
    b = Builder().segment(BASE, 20 * MB, record=False)
    b.alloc(BASE, 2 * MB, [], record=False)  # allocated before the history, no frames: still there
    b.alloc(BASE + 2 * MB, 3 * MB, at(8), record=False)  # before the history, its frames on its block
    b.free_unseen(BASE + 8 * MB, MB)
    b.alloc(BASE + 12 * MB, MB, at(9))
    snap = snap_of(b)
    mem = device_memory(snap, 0)
    assert sorted(mem.allocs.origin.tolist()) == [IN_HISTORY, BEFORE, BEFORE_ALIVE, BEFORE_ALIVE]
    assert mem.curves is not None and mem.curves.live_before == 6 * MB  # 2 + 3 alive, 1 freed in the history
    assert mem.curves.live.tolist() == [6 * MB, 5 * MB, 6 * MB]  # free requested, completed, then the alloc
    d = report(snap).devices[0]
    assert d.peak is not None and d.peak.entry == -1 and d.peak.requested_bytes == 6 * MB
    frames = {r.frame: r.bytes for r in d.by_frame}
    assert frames == {"forward (model.py:8)": 3 * MB, BEFORE_HISTORY: 2 * MB, "cleanup (model.py:77)": MB}
    assert [r.frame for r in d.never_freed] == ["forward (model.py:9)"]  # only what the history allocated


def test_reserved_over_the_history_follows_the_segments():
    b = Builder().segment(BASE, 20 * MB).segment(BASE + 32 * MB, 2 * MB)
    b.alloc(BASE, MB, at(3)).release(BASE + 32 * MB)
    mem = device_memory(snap_of(b), 0)
    assert mem.curves is not None and mem.curves.reserved_before == 0
    assert mem.curves.reserved.tolist() == [20 * MB, 22 * MB, 22 * MB, 20 * MB]
    before = state_at(snap_of(b), 0, mem.allocs, mem.spans, 1)
    assert before.seg_size.tolist() == [20 * MB, 2 * MB] and before.largest_free(small=True) == 2 * MB


def test_a_snapshot_without_history_reports_its_segments_and_says_the_history_is_missing():
    b = Builder().segment(BASE, 20 * MB, record=False).alloc(BASE, 5 * MB, at(4), record=False)
    r = report(snap_of(b, history=False))
    d = r.devices[0]
    assert not r.has_history and d.peak is None and d.entries == 0 and NO_HISTORY in d.notes
    assert d.reserved_bytes == 20 * MB and d.allocated_bytes == 5 * MB
    assert [(x.frame, x.bytes) for x in d.by_frame] == [("forward (model.py:4)", 5 * MB)]
    assert d.never_freed == []


def test_allocations_are_named_by_the_innermost_frame_of_your_code():
    namer = Namer(build("x", {"segments": [], "device_traces": []}).stacks)
    s = namer.stacks
    user = s.intern(
        op("addmm") + py(("linear", "/venv/lib/python3.12/site-packages/torch/nn/functional.py", 9)) + at(7)[4:]
    )
    assert namer.named(user) == ("forward (model.py:7)", "user")  # the library frame inside it passed over
    lib = s.intern(op("mm") + py(("step", "/usr/lib/python3.12/site-packages/torch/optim/adam.py", 5)))
    assert namer.named(lib) == ("step (/usr/lib/python3.12/site-packages/torch/optim/adam.py:5)", "library")
    cpp = s.intern(backward("NativeLayerNormBackward0", "native_layer_norm_backward"))
    assert namer.named(cpp) == ("NativeLayerNormBackward0 (backward)", "c++")
    assert namer.op(cpp) == "aten::native_layer_norm_backward"
    assert namer.op(s.intern(at(3, aten="div_Tensor"))) == "aten::div.Tensor"
    assert cpp_label([]) == "(no frames recorded)"
    top = s.intern(op("ones") + py(("<module>", "train.py", 12)))
    assert namer.label(top) == "top level (train.py:12)"
    lines = namer.lines(user)
    assert lines[0] == "… 4 C++ frames folded" and lines[1].endswith("functional.py:9  linear")
    assert len(namer.lines(user, cpp=True)) == 6  # of 8: the unwinder's two frames left out, as memory_viz does


def test_frees_of_one_address_pair_with_its_allocs_in_order():
    """One address reused three times: each alloc ends at its own free, and the stacking is by alloc."""
    b = Builder().segment(BASE, 20 * MB)
    for k in range(3):
        b.alloc(BASE, (k + 1) * MB, at(k + 1)).free(BASE)
    b.alloc(BASE, 8 * MB, at(9))
    a = device_memory(snap_of(b), 0).allocs
    assert a.size.tolist() == [MB, 2 * MB, 3 * MB, 8 * MB]
    assert a.alloc_entry.tolist() == [1, 4, 7, 10] and a.end_entry.tolist() == [3, 6, 9, -1]
    assert (a.freed_ns[:3] > a.start_ns[:3]).all() and (a.end_ns[:3] > a.freed_ns[:3]).all()


def test_every_block_of_a_built_snapshot_is_accounted():
    d = report(snap_of(fragmented(0))).devices[0]
    assert d.allocated_bytes + d.segments.free_bytes == d.reserved_bytes == 20 * MB
    snap = snap_of(fragmented(0))
    assert (snap.blocks.state == INACTIVE).sum() == 2


def test_json_and_gzip_read_as_the_pickle(tmp_path):
    import gzip
    import json

    b = fragmented(0).oom(6 * MB, 2 * MB, at(50))
    pkl = write(tmp_path / "s.pickle", b.snapshot())
    (tmp_path / "s.json").write_text(json.dumps(b.snapshot()))
    (tmp_path / "s.pickle.gz").write_bytes(gzip.compress(pkl.read_bytes()))
    reports = [report(open_snapshot(tmp_path / n)).devices[0] for n in ("s.pickle", "s.json", "s.pickle.gz")]
    assert reports[0].ooms == reports[1].ooms == reports[2].ooms
    assert reports[0].segments == reports[1].segments == reports[2].segments


def test_the_gzipped_copy_is_the_shared_snapshot():
    import gzip

    shared = SHARED / "memory-snapshots" / "h200-gpt-train.pickle"
    if not shared.is_file():
        pytest.skip("../shared/traces/memory-snapshots is not here")
    assert gzip.decompress(REAL.read_bytes()) == shared.read_bytes()


def test_expandable_segments_map_and_unmap_count_in_reserved():
    """With expandable_segments the allocator maps and unmaps pages of one segment: reserved follows them."""
    b = Builder()
    b._entry("segment_map", BASE, 20 * MB, at(1), 0)
    b.alloc(BASE, 4 * MB, at(2))
    b._entry("segment_map", BASE + 20 * MB, 20 * MB, at(3), 0)
    b.alloc(BASE + 20 * MB, 18 * MB, at(4)).free(BASE + 20 * MB)
    b._entry("segment_unmap", BASE + 20 * MB, 20 * MB, at(5), 0)
    b.segments[BASE] = {"address": BASE, "total_size": 20 * MB, "stream": 0}
    doc = b.snapshot()
    doc["segments"][0]["is_expandable"] = True
    snap = build("x", doc)
    mem = device_memory(snap, 0)
    assert mem.curves is not None
    assert mem.curves.reserved.tolist() == [20 * MB, 20 * MB, 40 * MB, 40 * MB, 40 * MB, 40 * MB, 20 * MB]
    d = report(snap).devices[0]
    assert d.max_reserved_bytes == 40 * MB and d.reserved_bytes == 20 * MB and d.peak.requested_bytes == 22 * MB
    assert bool(snap.segments.expandable[0]) and state_at(snap, 0, mem.allocs, mem.spans, 3).seg_size.sum() > 0


def test_an_allocation_says_its_compile_context_and_metadata():
    from tui.tables.snapshot_view import allocation_lines

    b = Builder().segment(BASE, 20 * MB).alloc(BASE, MB, at(3))
    b.entries[-1] |= {"compile_context": "[0/0] torch/_inductor/output_code.py", "user_metadata": "step 7"}
    snap = snap_of(b)
    mem = device_memory(snap, 0)
    extra = int(snap.histories[0].extra[1])
    assert snap.texts[extra] == "compile context: [0/0] torch/_inductor/output_code.py; user metadata: step 7"
    lines = allocation_lines(mem.allocs, 0, Namer(snap.stacks), 0, note=snap.texts[extra])
    assert lines[0] == "1.00 MiB requested" and "never freed" in lines[3] and lines[5].endswith("user metadata: step 7")


def test_a_snapshot_without_times_counts_entries(tmp_path, capsys):
    """torch before 2.1 wrote no time_us: the history's moments are its entries."""
    from tui.cli import main

    doc = fragmented().snapshot()
    for e in doc["device_traces"][0]:
        del e["time_us"]
    snap = build("old.pickle", doc)
    assert not snap.timed and snap.histories[0].time_ns.tolist() == list(range(11))
    path = write(tmp_path / "old.pickle", doc)
    assert main(["memory", str(path)]) == 0
    out = capsys.readouterr().out
    assert (
        "(no times: torch before 2.1)" in out
        and "Out of memory at entry 11" in out
        and "at entry 6 of 11, 20.00 MiB" in out
    )
    assert main(["memory", str(path), "--format", "json"]) == 0
    import json

    d = json.loads(capsys.readouterr().out)["devices"][0]
    assert d["peak"]["time_us"] is None and d["peak"]["entry"] == 5 and d["ooms"][0]["time_us"] is None


def test_a_history_that_lost_a_free_ends_the_allocation_at_the_next_alloc():
    """A ring buffer that dropped entries: two allocs at one address with no free between."""
    b = Builder().segment(BASE, 20 * MB).alloc(BASE, 2 * MB, at(1))
    b.live.pop(BASE)  # its free is not recorded
    b.alloc(BASE, 3 * MB, at(2))
    mem = device_memory(snap_of(b), 0)
    a = mem.allocs
    assert a.size.tolist() == [2 * MB, 3 * MB] and a.end_entry.tolist() == [2, -1]
    assert mem.curves is not None and mem.curves.live.tolist() == [0, 2 * MB, 3 * MB]
    assert a.notes == ["1 allocations have no free in the history before their address was reused"]


def test_a_free_waiting_for_another_stream_is_alive_until_completed():
    """record_stream: the free is requested, the block is reused only once the other stream's work is done."""
    b = Builder().segment(BASE, 20 * MB).alloc(BASE, 4 * MB, at(1))
    b._entry("free_requested", BASE, 4 * MB, at(1), 0)
    b.alloc(BASE + 4 * MB, MB, at(2))
    b._entry("free_completed", BASE, 4 * MB, at(1), 0)
    b.live.pop(BASE)
    mem = device_memory(snap_of(b), 0)
    a = mem.allocs
    assert a.end_entry.tolist() == [4, -1] and a.freed_ns[0] < a.end_ns[0]
    assert mem.curves is not None and mem.curves.live.tolist() == [0, 4 * MB, 4 * MB, 5 * MB, MB]


def test_the_cache_gives_back_the_same_columns(tmp_path, monkeypatch):
    """Read once, the columns come back from the cache (no pickle read); a changed file is read again."""
    import tui.model.snapshot as package
    from tui.model.snapshot import cache as stored

    path = write(tmp_path / "s.pickle", fragmented().snapshot())
    first = open_snapshot(path)
    assert stored.entry_of(path).is_dir()
    calls: list[int] = []
    real_read = package.read_plain
    monkeypatch.setattr(package, "read_plain", lambda *a, **k: calls.append(1) or real_read(*a, **k))
    again = open_snapshot(path)
    assert calls == [] and report(again).devices[0] == report(first).devices[0]
    assert again.stacks.names == first.stacks.names and again.settings == first.settings
    write(path, leak().snapshot())  # the file changes: read again
    assert report(open_snapshot(path)).devices[0].never_freed_bytes == 3 * MB and calls == [1]
    (stored.entry_of(path) / "columns.npz").write_bytes(b"broken")  # a damaged entry: ignored, rebuilt
    assert report(open_snapshot(path)).devices[0].never_freed_bytes == 3 * MB and calls == [1, 1]
    assert open_snapshot(path, cache=False) is not None and calls == [1, 1, 1]


def test_a_free_in_the_backward_is_named_by_its_node_or_the_engine():
    engine = {"name": "torch::autograd::Engine::thread_main(std::shared_ptr<GraphTask> const&)", "filename": "??"}
    release = [
        {"name": "c10::TensorImpl::~TensorImpl()", "filename": "TensorImpl.cpp"},
        {"name": "torch::autograd::generated::NativeLayerNormBackward0::release_variables()", "filename": ""},
        engine,
    ]
    assert cpp_label([f["name"] for f in release]) == "NativeLayerNormBackward0 (backward)"
    helper = "torch::autograd::generated::details::logsumexp_backward(at::Tensor, at::Tensor const&)"
    assert cpp_label([helper, "torch::autograd::generated::LogsumexpBackward0::apply(std::vector<at::Tensor>&&)"]) == (
        "LogsumexpBackward0 (backward)"
    )
    dropped = ["c10::intrusive_ptr<c10::StorageImpl>::reset_not_null_()", "std::vector<at::Tensor>::~vector()"]
    assert cpp_label([*dropped, engine["name"]]) == "the autograd engine (backward)"


def test_the_real_figures_agree_with_torchs_own_segsum(real):
    """torch's _memory_viz.segsum on the same dict (read with our unpickler): its total_allocated is the bytes
    requested, its total_free the reserved bytes not requested (free blocks and rounding)."""
    import gzip
    import io

    mv = pytest.importorskip("torch.cuda._memory_viz")
    from tui.model.snapshot.read import PlainUnpickler

    data = PlainUnpickler(io.BytesIO(gzip.decompress(REAL.read_bytes()))).load()
    told = dict(line.split(": ", 1) for line in mv.segsum(data).splitlines() if line.startswith("total_"))
    d = report(real).devices[0]
    assert told["total_reserved"] == mv._format_size(d.reserved_bytes)
    assert told["total_allocated"] == mv._format_size(d.requested_bytes)
    assert told["total_free"].split(" ")[0] == mv._format_size(d.reserved_bytes - d.requested_bytes)


def test_the_programs_annotations_are_spans_on_the_timeline(real):
    from tui.model.snapshot.timeline import annotation_spans, span_cells

    spans = annotation_spans(real.annotations, 0)
    assert [s.name for s in spans[:2]] == ["Optimizer.step#AdamW.step", "Optimizer.zero_grad#AdamW.zero_grad"]
    assert len(spans) == 6 and all(s.end_ns > s.start_ns for s in spans)
    t0, t1 = int(real.histories[0].time_ns[0]), int(real.histories[0].time_ns[-1])
    cells = span_cells(spans, t0, (t1 - t0) // 400 + 1, 400)
    assert set(cells.tolist()) == {-1, 0, 1, 2, 3, 4, 5}  # every span shows, a 0.13 ms one too
    assert 5 in span_cells(spans, t0, (t1 - t0) // 100 + 1, 100)  # sharing a column, the later one shows
