"""Memory ([memory] samples) and counter (ph C) tracks: `tracetui memory`, the peaks against the raw
events, leaks, bad samples, the timeline's value lanes and the details panel."""

from __future__ import annotations

import io
import json
import re
from collections import defaultdict

import numpy as np
import pytest
from conftest import SAMPLES, SHARED, X, raw_events, until, wait_for_main, write_trace
from rich.console import Console

from tui.cli import main
from tui.model.analyses.results import Results
from tui.model.load import load_trace
from tui.model.view.series import QUEUE_TOP, Series, cell_values, counter_series, sparkline, value_at

BERT = SAMPLES / "h100-bert-small.json.gz"
NO_MEMORY = "no memory events: capture with profile_memory=True (tracetui profile --profile-memory)"


def memory_json(capsys, path) -> dict:
    assert main(["memory", str(path), "--format", "json", "--no-cache"]) == 0
    return json.loads(capsys.readouterr().out)


def raw_peaks(path) -> dict[str, tuple[int, int, float, int, int]]:
    """Per device from the raw events: peak Total Allocated, peak Total Reserved, its ts, allocs, frees."""
    events = raw_events(path)
    start = min(e["ts"] for e in events if e.get("ph") == "X")
    out: dict = {}
    acc: dict = defaultdict(lambda: [-1, -1, 0.0, 0, 0])
    for e in sorted((e for e in events if e.get("name") == "[memory]"), key=lambda e: e["ts"]):
        a = e["args"]
        kind = {0: "cpu", 1: "cuda"}[a["Device Type"]]
        dev = kind if kind == "cpu" else f"{kind}:{a['Device Id']}"
        r = acc[dev]
        if a["Total Allocated"] > r[0]:
            r[0], r[2] = a["Total Allocated"], e["ts"] - start
        r[1] = max(r[1], a["Total Reserved"])
        r[3 if a["Bytes"] > 0 else 4] += 1
    for dev, r in acc.items():
        out[dev] = tuple(r)
    return out


def test_peaks_counts_and_time_agree_with_the_raw_events(capsys):
    devices = memory_json(capsys, BERT)["devices"]
    expected = raw_peaks(BERT)
    assert [d["device"] for d in devices] == sorted(expected)
    for d in devices:
        peak, reserved, ts, allocs, frees = expected[d["device"]]
        assert d["peak_allocated_bytes"] == peak and d["peak_reserved_bytes"] == reserved
        assert d["peak_ts_us"] == pytest.approx(ts, abs=1e-3)
        assert (d["allocs"], d["frees"]) == (allocs, frees)
        assert d["source"] == "Total Allocated"
        tops = [op["bytes"] for op in d["top_ops"]]
        assert tops == sorted(tops, reverse=True) and all(b > 0 for b in tops)
    cuda = next(d for d in devices if d["device"] == "cuda:0")
    assert cuda["peak_op"] == "aten::empty" and cuda["peak_top_op"] == "aten::linear"
    assert cuda["top_ops"][0]["stack"][-1].startswith("nn.Module: ")  # the user code above the allocation


def _mem(ts, nbytes, total=None, addr=None, dev=1, tid=1):
    args = {"Device Type": dev, "Device Id": 0 if dev else -1, "Bytes": nbytes}
    if total is not None:
        args |= {"Total Allocated": total, "Total Reserved": 1 << 20}
    if addr is not None:
        args["Addr"] = addr
    return {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": tid, "ts": ts, "args": args}


def test_peak_op_leaks_and_the_ops_that_allocate(capsys, tmp_path):
    events = [
        X("aten::linear", 0, 100),
        X("aten::empty", 10, 5),
        _mem(12, 4096, 4096, addr=0xA0),
        X("aten::relu", 40, 20),
        _mem(45, 1024, 5120, addr=0xB0),  # never freed: a candidate leak of aten::relu
        _mem(80, -4096, 1024, addr=0xA0),  # outside every op but linear: linear frees it
        _mem(150, 512, 1536, addr=0xC0),  # outside every op
        _mem(160, -512, 1024, addr=0xC0),
    ]
    path = write_trace(tmp_path / "mem.json", events)
    (d,) = memory_json(capsys, path)["devices"]
    assert d["device"] == "cuda:0" and d["peak_allocated_bytes"] == 5120 and d["peak_ts_us"] == pytest.approx(45)
    assert (d["peak_op"], d["peak_top_op"]) == ("aten::relu", "aten::linear")
    assert (d["allocs"], d["frees"]) == (3, 2)
    assert [(o["op"], o["bytes"], o["count"]) for o in d["top_ops"]] == [
        ("aten::empty", 4096, 1),
        ("aten::relu", 1024, 1),
        ("(no op)", 512, 1),
    ]
    assert [(o["op"], o["bytes"]) for o in d["leaks"]] == [("aten::relu", 1024)] and d["leaked_bytes"] == 1024


def test_traces_without_totals_use_the_running_sum_and_say_so(capsys, tmp_path):
    events = [
        X("aten::add", 0, 100, tid=7),
        *(_mem(t, b, dev=0, tid=7) for t, b in ((5, 100), (6, 50), (9, -100), (20, 30))),
    ]
    path = write_trace(tmp_path / "old.json", events)
    (d,) = memory_json(capsys, path)["devices"]
    assert (d["device"], d["peak_allocated_bytes"], d["peak_reserved_bytes"]) == ("cpu", 150, None)
    assert d["source"] == "running sum of Bytes" and d["leaks"] == []
    assert main(["memory", str(path), "--no-cache"]) == 0
    assert "running sum of Bytes" in capsys.readouterr().out


def test_bad_memory_samples_are_skipped_and_counted(capsys, tmp_path):
    bad = _mem(30, "lots", 100)
    missing = {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 31, "args": {"Bytes": 8}}
    path = write_trace(tmp_path / "bad.json", [X("aten::mm", 0, 100), _mem(10, 64, 64), bad, missing])
    before = path.read_bytes()
    assert main(["memory", str(path), "--format", "json", "--no-cache"]) == 0
    out = capsys.readouterr()
    assert "skipped 2 [memory] events without numeric Bytes and Device Type" in out.err
    (d,) = json.loads(out.out)["devices"]
    assert d["allocs"] == 1 and d["peak_allocated_bytes"] == 64
    assert path.read_bytes() == before


def test_no_memory_events_exit_2_with_one_line(capsys):
    assert main(["memory", str(SAMPLES / "a100-triton-small.json.gz")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.rstrip().endswith(NO_MEMORY)


def test_text_and_csv(capsys, monkeypatch):
    monkeypatch.setenv("TRACETUI_COLUMNS", "160")
    assert main(["memory", str(BERT)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:3] == ["Device", "Peak", "allocated"]
    assert "cuda:0: the ops that allocate the most" in out
    assert main(["memory", str(BERT), "--format", "csv"]) == 0
    head, *rows = capsys.readouterr().out.splitlines()
    assert head.startswith("device,peak_allocated_bytes,peak_reserved_bytes,peak_ts_us,peak_op") and len(rows) == 2


def test_counters_become_series_and_bad_values_are_counted(capsys, tmp_path):
    events = [
        X("aten::mm", 0, 100),
        {"ph": "C", "name": "GPU 0 Utilization", "pid": 0, "ts": 10, "args": {"GPU Utilization": 0.25}},
        {"ph": "C", "name": "GPU 0 Utilization", "pid": 0, "ts": 50, "args": {"GPU Utilization": 0.75}},
        {"ph": "C", "name": "GPU 0 Utilization", "pid": 0, "ts": 60, "args": {"GPU Utilization": "high"}},
        {"ph": "C", "name": "queue", "pid": 0, "ts": 20, "args": {"read": 3, "write": 4}},
    ]
    path = write_trace(tmp_path / "c.json", events)
    trace = load_trace(path, use_cache=False)
    assert trace.report.warning() == "skipped 1 counter value that is not a number"
    series = {s.label: s for s in counter_series(trace)}
    assert sorted(series) == ["GPU 0 Utilization", "queue · read", "queue · write"]
    util = series["GPU 0 Utilization"]
    assert util.values.tolist() == [0.25, 0.75] and (util.ts - trace.x.ts.min()).tolist() == [10_000, 50_000]
    assert value_at(util, int(trace.x.ts.min()) + 30_000) == (0.25, 0)
    assert main(["summary", str(path), "--no-cache"]) == 0
    assert "skipped 1 counter value that is not a number" in capsys.readouterr().err


def test_cells_keep_the_highest_value_and_the_sparkline_scales_low_to_high():
    s = Series("s", "counter", np.array([10, 20, 25, 40]), np.array([1.0, 5.0, 2.0, 3.0]))
    cells = cell_values(s, 0, 10, 6)
    assert np.isnan(cells[0]) and cells[1:].tolist() == [1.0, 5.0, 2.0, 3.0, 3.0]
    assert sparkline(cells, s.low, s.high) == " ▁█▃▅▅"


def test_a_launch_queue_lane_reads_from_none_to_at_least_eight():
    """One launch waiting now and then is a short bar, not a full queue; a deep queue tops its own lane."""
    shallow = Series("q", "queue", np.array([10, 20, 30]), np.array([1.0, 0.0, 1.0]))
    assert (shallow.low, shallow.high) == (0.0, QUEUE_TOP)
    assert sparkline(cell_values(shallow, 10, 10, 3), shallow.low, shallow.high) == "▂▁▂"
    deep = Series("q", "queue", np.array([10, 20]), np.array([3.0, 40.0]))
    assert (deep.low, deep.high) == (0.0, 40.0) and sparkline(np.array([40.0]), deep.low, deep.high) == "█"


def test_shared_memory_traces_peaks_match_the_raw_totals(capsys):
    paths = [p for p in SHARED.glob("*/*") if p.name.endswith((".json", ".gz")) and "memory" in p.parent.name]
    paths += [p for p in SHARED.glob("tracelens-2025-07-h100-*/*.gz")]
    if not paths:
        pytest.skip("../shared/traces is not here")
    for path in paths:
        events = [e for e in raw_events(path) if e.get("name") == "[memory]"]
        if not events:
            continue
        devices = Results(load_trace(path, use_cache=False)).memory
        with_totals = [e for e in events if isinstance(e.get("args", {}).get("Total Allocated"), int)]
        for d in devices:
            if d.source == "Total Allocated":
                kind, _, ident = d.device.partition(":")
                mine = [e for e in with_totals if e["args"]["Device Type"] == (0 if kind == "cpu" else 1)]
                mine = [e for e in mine if not ident or e["args"]["Device Id"] == int(ident)]
                assert d.peak_allocated_bytes == max(e["args"]["Total Allocated"] for e in mine), (path, d.device)


async def test_timeline_draws_memory_lanes_and_details_show_the_bytes():
    from tui.app import TraceApp

    app = TraceApp([str(BERT)], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        await until(pilot, lambda: bool(screen.timeline.series), "the value lanes computed")
        tl = screen.timeline
        labels = [s.label for s in tl.series if s.kind == "memory"]
        assert labels == ["cpu allocated", "cuda:0 allocated", "cuda:0 reserved"]
        line = next(k for k, ln in enumerate(tl.lines) if ln.kind == "series" and ln.label == "cuda:0 allocated")
        tl.scroll_to(y=max(line - 5, 0), animate=False)
        await pilot.pause()
        text = "".join(seg.text for seg in tl.render_line(line - tl.scroll_offset.y))
        assert text.startswith("cuda:0 alloc") and "MiB" in text and any(ch in text for ch in "▁▂▃▄▅▆▇█")
        await pilot.press("l")  # select an event: the details say the memory at its start
        await pilot.pause()
        console = Console(width=160, record=True, file=io.StringIO())
        console.print(screen.query_one("#details-body").content)
        panel = console.export_text()
        assert re.search(
            r"memory\s+cuda:0 [\d.]+ [KM]?i?B allocated, 116.00 MiB reserved \(last: aten::\S+ [+-]", panel
        ), panel


def test_each_allocation_goes_to_its_own_innermost_module_and_line() -> None:
    """aten::addmm allocates from every Linear layer: each row is one (module, line), counted from its own stack."""
    from collections import Counter

    from tui.model.analyses.memory import sample_ops, samples
    from tui.model.analyses.results import Results
    from tui.model.cats import Cat

    a = Results(load_trace(BERT, use_cache=False))
    t, x, parent = a.trace, a.trace.x, a.nesting.parent
    sel = samples(a)
    ops = sample_ops(a, sel)
    cuda = (t.inst.dev_type[sel] == 1) & (t.inst.bytes[sel] > 0)
    expected: Counter = Counter()
    for op in ops[cuda]:
        if op < 0 or t.name_of(int(op)) != "aten::addmm":
            continue
        module = line = None
        j = int(parent[op])
        while j >= 0 and (module is None or line is None):
            name = t.name_of(j)
            if int(x.cat[j]) == int(Cat.PYTHON):
                if module is None and name.startswith("nn.Module: "):
                    module = name.removeprefix("nn.Module: ")
                elif line is None and "transformers/" in name and "): " in name:
                    line = name
            j = int(parent[j])
        expected[(re.sub(r"_\d+$", "", module or ""), line)] += 1
    assert sum(expected.values()) == 26 and len(expected) > 1  # not all from one place
    cuda_dev = next(d for d in a.memory if d.device == "cuda:0")
    rows = [r for r in cuda_dev.top_ops if r.op == "aten::addmm"]
    assert rows and all(r.module and r.line for r in rows)
    for r in rows:
        assert expected[(re.sub(r" ×\d+$|_\d+$", "", r.module), r.line)] == r.count
    assert not any(r.module == "Linear_0" and r.count == 26 for r in rows)
