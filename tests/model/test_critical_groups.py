"""The critical path grouped to read (critical/groups.py): by name, kind and class; frames folded into the op they ran
under; bookkeeping before the first op and after the last in one row; the same groups in the CLI and the viewer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import SAMPLES, X, write_trace
from critical_traces import gpu_bound, op, step

from tui.cli import main
from tui.model.analyses.critical.groups import BOOKKEEPING, path_groups
from tui.model.analyses.results import Results
from tui.model.load import load_trace
from tui.tables import critical as C
from tui.tables import critical_path as P

BERT = SAMPLES / "h100-bert-small.json.gz"


def frame(name: str, ts: float, dur: float, pid: int, parent: int) -> dict:
    ev = X(name, ts, dur, cat="python_function")
    ev["args"] = {"Python id": pid, "Python parent id": parent}
    return ev


def harness(tmp: Path) -> Path:
    """Step [0,100]: the harness's is_available [2,6] and log [85,95] run no op; the model's forward [10,80] runs
    aten::mm [20,40] and aten::add [50,60]. All CPU: the path is the step's 100 us."""
    events = [
        step(1, 0, 100),
        frame("harness.py(10): is_available", 2, 4, 1, 0),
        frame("model.py(20): forward", 10, 70, 2, 0),
        op("aten::mm", 20, 20),
        op("aten::add", 50, 10),
        frame("harness.py(30): log", 85, 10, 3, 0),
    ]
    return write_trace(tmp / "harness.json", events)


def groups_of(path: Path, hide: bool) -> tuple[Results, list]:
    a = Results(load_trace(path, use_cache=False))
    return a, path_groups(a.trace, a.critical, a.frameless if hide else None)


def us(groups: list) -> dict[tuple[str, str], float]:
    return {(g.name, g.kind): g.dur_ns / 1000 for g in groups}


def test_the_path_groups_by_name_kind_and_class_and_adds_up(tmp_path):
    a, groups = groups_of(harness(tmp_path), hide=False)
    assert sum(g.dur_ns for g in groups) == a.critical.length_ns == 100_000
    assert us(groups) == {
        ("model.py(20): forward", "frame"): 40.0,  # its Python between and around its ops: the model's, not bookkeeping
        (BOOKKEEPING, "bookkeeping"): 30.0,  # the step's own time, is_available and log: before mm, after add
        ("aten::mm", "op"): 20.0,
        ("aten::add", "op"): 10.0,
    }
    forward = next(g for g in groups if g.kind == "frame")
    assert (forward.calls, len(forward.items)) == (1, 3)  # one call, three stretches in time order
    assert [it.start_ns for it in forward.items] == sorted(it.start_ns for it in forward.items)
    assert [g.dur_ns for g in groups] == sorted((g.dur_ns for g in groups), reverse=True)


def test_hidden_frames_go_to_the_op_they_ran_under(tmp_path):
    _, groups = groups_of(harness(tmp_path), hide=True)
    assert us(groups) == {
        ("ProfilerStep#1", "annotation"): 40.0,  # forward's own time, between the step's ops
        (BOOKKEEPING, "bookkeeping"): 30.0,
        ("aten::mm", "op"): 20.0,
        ("aten::add", "op"): 10.0,
    }
    assert not any(g.kind == "frame" for g in groups)
    # its self time, between its ops: all of it the forward's hidden Python, and the label says so
    assert groups[0].python_ns == 40_000 and P.group_label(groups[0]) == "ProfilerStep#1 (self: its Python)"
    groups[0].python_ns = 15_000  # mostly the step's own time: self, as torch's Self CPU counts it
    assert P.group_label(groups[0]) == "ProfilerStep#1 (self)"
    assert all(g.python_ns == 0 for g in groups_of(harness(tmp_path), hide=False)[1])  # frames shown: none folded


def test_a_kernel_waiting_for_its_launch_is_a_kernel_held_by_launch_delays(tmp_path):
    """The stretch before a kernel starts is the kernel's (its kind says kernel, never `wait`); its class says why."""
    a, groups = groups_of(gpu_bound(tmp_path), hide=False)
    raw = {(it.name, it.kind) for it in a.critical.items}
    assert ("K1", "wait") in raw  # the model's item kind: the launch wait
    kinds = {(g.name, g.bound_by): g.kind for g in groups}
    assert kinds[("K1", "gpu_kernel_launch_overhead")] == "kernel" and kinds[("K3", "gpu_compute_bound")] == "kernel"
    assert not any(g.kind == "wait" for g in groups if g.items[0].event >= 0)


@pytest.fixture(scope="module")
def bert() -> Results:
    return Results(load_trace(str(BERT), use_cache=False))


def test_bookkeeping_of_a_real_step_is_one_row_and_the_model_is_not_in_it(bert):
    """BERT's step opens with the profiler's step(), is_available() and os.getenv(): one bookkeeping row; the model's
    forward and the ops are rows of their own."""
    groups = path_groups(bert.trace, bert.critical)
    [book] = [g for g in groups if g.kind == "bookkeeping"]
    names = {bert.trace.name_of(it.event) for it in book.items if it.event >= 0}
    assert "torch/profiler/profiler.py(821): step" in names and "<frozen os>(808): getenv" in names
    assert not any(n.startswith("aten::") or "modeling_bert" in n for n in names)
    assert book.items[0].start_ns == bert.critical.start_ns  # it opens the step
    assert len(groups) < len(bert.critical.items) / 10  # 3,773 stretches read as a few hundred rows


def test_the_cli_table_lists_the_groups_the_viewer_shows(bert, capsys, monkeypatch):
    monkeypatch.setenv("TRACETUI_COLUMNS", "0")  # no limit: names whole
    assert main(["critical", str(BERT)]) == 0
    out = capsys.readouterr().out
    table = out.split("On the path", 1)[1].splitlines()[2 : 2 + C.TOP]
    groups = path_groups(bert.trace, bert.critical, bert.frameless)[: C.TOP]  # the viewer's default: frames hidden
    for line, g in zip(table, groups, strict=True):
        assert line.startswith(P.group_label(g) + "  ") and line.split()[-2:] == ["CPU", "work"]
        assert f" {g.calls:,} " in line and C.when(g.dur_ns) in line
    assert "Kind" in out and f"{len(bert.critical.items):,} stretches" in out
    assert os.environ["TRACETUI_COLUMNS"] == "0"


def test_the_json_says_what_the_text_says(bert, capsys, monkeypatch):
    """`critical --format json` carries the text's verdict, grouped table and advice (a script reads the same
    judgment a reader does), with every group, not only the top rows."""
    import json

    monkeypatch.setenv("TRACETUI_COLUMNS", "0")  # no limit: lines whole
    assert main(["critical", str(BERT)]) == 0
    text = capsys.readouterr().out
    assert main(["critical", str(BERT), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert f"Verdict: {doc['verdict']}" in text.splitlines()
    advice = text.split("\nAdvice:\n", 1)[1].split("\n\n", 1)[0]
    assert [line.removeprefix("* ") for line in advice.splitlines()] == doc["advice"] != []
    groups = path_groups(bert.trace, bert.critical, bert.frameless)
    assert doc["python_frames_folded"] and [g["name"] for g in doc["groups"]] == [g.name for g in groups]
    assert sum(g["calls"] for g in doc["groups"]) > C.TOP
    assert sum(g["time_us"] for g in doc["groups"]) == pytest.approx(doc["length_us"], rel=1e-3)
    assert sum(g["share"] for g in doc["groups"]) == pytest.approx(1.0, rel=1e-3)
    top = doc["groups"][0]
    assert top["kind"] == groups[0].kind and top["time_us"] == C.us(groups[0].dur_ns)
    table = text.split("On the path", 1)[1].splitlines()[2]
    assert top["label"] == C.group_label(groups[0]) != top["name"] and table.startswith(top["label"] + "  ")


def test_a_kernels_launch_delay_row_says_it_is_the_wait_not_the_kernel(capsys, monkeypatch):
    """The V100 sample's path holds 12.83 ms of an NCCL kernel bound by its launch delay: the row names the kernel
    (its Kind stays kernel) and says it is the launch delay, so that it is not read as the kernel running 12.83 ms;
    the gaps before kernels say so too, and the kernels' own rows say nothing more."""
    monkeypatch.setenv("TRACETUI_COLUMNS", "0")
    a = Results(load_trace(str(SAMPLES / "v100-cudagraph-test.json.gz"), use_cache=False))
    groups = path_groups(a.trace, a.critical)
    delay = [g for g in groups if g.bound_by == "gpu_kernel_launch_overhead" and g.kind == "kernel"]
    gaps = [g for g in groups if g.bound_by == "gpu_kernel_kernel_overhead" and g.kind in ("kernel", "copy", "set")]
    assert delay and gaps and C.when(delay[0].dur_ns) == "12.83 ms"
    assert all(C.group_label(g) == g.name + " (its launch delay)" for g in delay)
    assert all(C.group_label(g) == g.name + " (the gap before it)" for g in gaps)
    assert all(C.group_label(g) == g.name for g in groups if g.bound_by == "gpu_compute_bound")
    assert main(["critical", str(SAMPLES / "v100-cudagraph-test.json.gz")]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "(its launch delay)" in line)
    assert " kernel " in row and "12.83 ms" in row and row.endswith("Launch delays")


def test_each_groups_frames_time_is_its_own_and_adds_up_to_the_frames_folded(bert):
    """A frame's time goes to the group of the stretch it was folded into, once: the step's event has stretches in
    the bookkeeping row and its own (self) row, and the bookkeeping row folds no frame (its Python frames' time was
    counted twice, 2.14 ms of a 0.17 ms row)."""
    from tui.model.analyses.critical.groups import bookkeeping
    from tui.model.cats import Cat

    groups = path_groups(bert.trace, bert.critical, bert.frameless)
    items = list(bert.critical.items)
    outside = bookkeeping(bert.trace, items, bert.critical.event)
    frames = sum(
        it.dur_ns
        for it, out in zip(items, outside, strict=True)
        if not out and it.event >= 0 and int(bert.trace.x.cat[it.event]) == int(Cat.PYTHON)
    )
    assert frames > 0 and sum(g.python_ns for g in groups) == frames
    assert all(0 <= g.python_ns <= g.dur_ns for g in groups)
    [book] = [g for g in groups if g.kind == "bookkeeping"]
    assert book.python_ns == 0
