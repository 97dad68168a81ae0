"""Python frames in their place: the code view, ops --python-frames, frames hidden in the viewer, the code stack."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import SAMPLES, X, press_settled, shared_traces, until, wait_for_main, write_trace

from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.code import frame_kind, frame_label
from tui.model.analyses.graphs.capture import load_credited
from tui.model.analyses.results import Results
from tui.model.cats import Cat

BERT = SAMPLES / "h100-bert-small.json.gz"
WITH_STACK = [BERT] + [p for p in shared_traces() if Results(load_trace(p, use_cache=False)).frame_levels > 3]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("moca/library/profiling/profile.py(34): run_torch_profiler", "user"),
        ("train.py(12): main", "user"),
        ("nn.Module: BertModel_0", "module"),
        ("torch/nn/modules/module.py(1743): _call_impl", "library"),
        ("transformers/models/bert/modeling_bert.py(410): forward", "library"),
        ("threading.py(1032): _bootstrap", "library"),
        ("multiprocessing/spawn.py(122): spawn_main", "library"),
        ("/usr/lib/python3.11/site-packages/foo/bar.py(3): f", "library"),
        ("<built-in method addmm of type object at 0x7f>", "library"),
        ("<string>(1): <module>", "library"),
        ("some odd frame name", "user"),
    ],
)
def test_frames_are_told_apart(name, kind):
    assert frame_kind(name) == kind


@pytest.mark.parametrize("path", WITH_STACK, ids=lambda p: p.parent.name)
def test_frames_are_rows_only_with_python_frames_and_device_time_is_the_same(path, capsys):
    """ops lists no frame (torch's table up to 2.11); --python-frames lists every frame as a row (2.12-2.13's), the
    other rows' names are the same, and no frame holds device time: Self CUDA adds up the same either way."""
    _, plain, _ = run(capsys, "ops", path, "--format", "json")
    _, framed, _ = run(capsys, "ops", path, "--format", "json", "--python-frames")
    plain_doc, framed_doc = json.loads(plain), json.loads(framed)
    a = Results(load_credited(str(path), use_cache=False)[0])  # as the command loads it: graph captures credited
    frames = {a.trace.names[n] for n in np.unique(a.trace.x.name[a.trace.x.cat == int(Cat.PYTHON)])}
    plain_names, framed_names = ({r["name"] for r in doc["rows"]} for doc in (plain_doc, framed_doc))
    assert frames and not frames & plain_names and frames <= framed_names
    assert framed_names - frames == plain_names - {"[memory]"}  # allocations under a frame alone: torch's [memory] row
    assert plain_doc["python_frames"] is False and framed_doc["python_frames"] is True
    assert plain_doc["self_device_total_us"] == framed_doc["self_device_total_us"] > 0
    for kind in ("host", "device"):  # no frame held device time: every op's Self CUDA is still there
        sums = [sum(r["self_device_us"] for r in doc["rows"] if r["kind"] == kind) for doc in (plain_doc, framed_doc)]
        assert sums[0] == pytest.approx(sums[1], rel=1e-12)


@pytest.mark.parametrize("path", WITH_STACK, ids=lambda p: p.parent.name)
def test_the_largest_device_total_is_the_device_time_launched_from_python(path, capsys):
    code, out, _ = run(capsys, "code", path, "--format", "json", "--sort", "device_total")
    doc = json.loads(out)
    assert code == 0 and doc["rows"]
    assert set(doc["rows"][0]) >= {"frame", "count", "self_cpu_us", "cpu_total_us", "device_total_us", "pct_gpu"}
    largest = max(r["device_total_us"] for r in doc["rows"])
    assert largest == pytest.approx(doc["from_python_us"], rel=0.10)


def test_code_rows_on_bert_name_the_module_that_launches_the_most():
    a = Results(load_trace(BERT, use_cache=False))
    rows = a.code.rows
    hottest = max(rows, key=lambda r: r.self_device_us)
    assert hottest.frame.startswith("nn.Module: Linear_") and hottest.kind == "module"
    assert not [r for r in rows if r.kind == "library"]  # folded by default
    assert any(r.kind == "library" for r in a.code_all.rows)
    # device time launched under a frame, through the launch links, equals the kernels below it
    top = max(rows, key=lambda r: r.device_total_us)
    kernels = a.trace.x.dur[a.links.launcher >= 0].sum() / 1000
    assert top.device_total_us == pytest.approx(kernels, rel=1e-6)


def test_a_recursive_frame_counts_its_time_once(tmp_path):
    events = [
        X("train.py(1): main", 0, 100, cat="python_function", Python_id=1, Python_parent_id=None),
        X("train.py(5): walk", 10, 80, cat="python_function", Python_id=2, Python_parent_id=1),
        X("train.py(5): walk", 20, 60, cat="python_function", Python_id=3, Python_parent_id=2),
        X("aten::add", 30, 10),
    ]
    a = Results(load_trace(write_trace(tmp_path / "t.json", events), use_cache=False))
    walk = next(r for r in a.code.rows if r.frame.endswith("walk"))
    assert (walk.count, walk.cpu_total_us, walk.self_cpu_us) == (2, 80.0, 80.0)


def test_code_on_a_trace_without_frames_says_how_to_get_them(capsys):
    code, out, err = run(capsys, "code", SAMPLES / "cpu" / "linear_fwd.json.gz")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "with_stack=True" in err and "tracetui profile --with-stack" in err


def test_code_text_names_the_hottest_frame(capsys):
    code, out, _ = run(capsys, "code", BERT, "--limit", "3")
    lines = out.splitlines()
    # the footers: what a row is, the frames running at start, GPU time from Python, the hottest, the folding
    assert code == 0 and lines[0].startswith("Function") and len(lines) == 2 + 3 + 5
    assert "Launches the most GPU time itself: nn.Module: Linear_" in out


def test_details_show_your_code_above_an_op_and_why_a_self_time_is_negative():
    from tui.model.analyses.details import describe

    a = Results(load_trace(BERT, use_cache=False))
    mm = next(i for i in a.nesting.order if a.trace.name_of(int(i)) == "aten::addmm")
    d = describe(a, int(mm), 0, frames=a)
    assert d.stack and d.stack[0].startswith("moca/") and any(s.startswith("nn.Module: Linear_") for s in d.stack)
    assert not any(frame_kind(s) == "library" for s in d.stack)
    step = next(i for i in range(a.trace.n) if a.trace.name_of(i).startswith("moca/library/profiling/profile.py(34)"))
    d = describe(a, step, 0)
    assert d.self_ns is not None and d.self_ns < 0
    assert any("ProfilerStep#6" in (x, y) for x, y, _ in d.overlaps)


async def test_the_viewer_hides_deep_stacks_and_p_shows_them():
    from tui.app import TraceApp
    from tui.widgets.ops_view import OpsView

    app = TraceApp([str(BERT)], use_cache=False)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await wait_for_main(pilot)
        tl = screen.timeline
        shown = tl.analysis.nesting.order
        assert screen.hide_python and not (tl.analysis.trace.x.cat[shown] == int(Cat.PYTHON)).any()
        bindings = {b.binding.action for b in screen.active_bindings.values() if b.enabled}
        assert "python(False)" in bindings and "python(True)" not in bindings  # the footer offers "show"
        await pilot.press("3")
        await pilot.pause()
        assert not any(r.is_python for r in screen.query_one(OpsView).shown)
        await press_settled(pilot, "p")
        assert not screen.hide_python and (tl.analysis.trace.x.cat[tl.analysis.nesting.order] == int(Cat.PYTHON)).any()
        assert any(r.is_python for r in screen.query_one(OpsView).shown)


async def test_the_code_view_shows_the_table_and_the_icicle_zooms():
    from tui.app import TraceApp
    from tui.widgets.code_view import FramesTable
    from tui.widgets.icicle import IcicleView

    app = TraceApp([str(BERT)], use_cache=False)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await wait_for_main(pilot)
        await pilot.press("6")
        await pilot.pause()
        table = screen.query_one(FramesTable)
        assert table.shown[0].frame.startswith("nn.Module: Linear_")  # sorted by self device time
        await pilot.press("i", "down", "down", "enter")
        ice = screen.query_one(IcicleView)
        assert ice.root >= 0 and ice.root == ice.selected
        assert "device time" in str(screen.query_one("#icicle-status").render())
        await pilot.press("backspace", "v")
        assert ice.by == "cpu"
        table.focus()  # the table has the focus, as on first visit: v still works, and a says it shows every frame
        await pilot.press("v")
        assert ice.by == "device"
        assert "a shows them" in table.status() and "--all-frames" not in table.status()


async def _icicle_status_at_80(trace) -> tuple[str, int]:
    """The code view's icicle status at 80x24 with a frame below the root selected: its text and width."""
    from tui.app import TraceApp
    from tui.widgets.icicle import IcicleView

    app = TraceApp([str(trace)], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        await pilot.press("6")
        await until(pilot, lambda: bool(screen.query(IcicleView)), "the icicle")
        await pilot.press("i", "down", "enter")
        await pilot.pause()
        status = screen.query_one("#icicle-status")
        return str(status.render()), status.size.width


async def test_the_icicle_status_fits_80_columns_whole():
    """At 80 columns the selected frame's line takes the longest wording that fits, never one cut mid-sentence."""
    text, width = await _icicle_status_at_80(BERT)
    assert "\n" not in text and len(text) <= width and "device time" in text
    assert text.endswith(("(v)", "%)")) and "launched from beneath it" not in text  # the shorter wording


async def test_the_code_view_on_a_trace_without_frames_says_how_to_get_them():
    from tui.app import TraceApp

    app = TraceApp([str(SAMPLES / "b300-moe-small.json.gz")], use_cache=False)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await wait_for_main(pilot)
        await pilot.press("6")
        await pilot.pause()
        assert "with_stack=True" in str(screen.query_one("ViewPane#code .pane-note").render())


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("mymodel.py(25): forward", "forward (mymodel.py:25)"),
        ("train.py(27): <module>", "top level (train.py:27)"),
        ("<string>(1): <module>", "top level (<string>:1)"),
        ("nn.Module: Linear_0", "nn.Module: Linear_0"),
        ("<built-in method add of Tensor object at 0x7f>", "<built-in method add of Tensor object at 0x7f>"),
    ],
)
def test_a_row_is_a_function_at_its_def_line(name, label):
    assert frame_label(name) == label


def _script(tmp_path):
    """A training loop at module level: torch records the <module> frame, and forward at its def line (25) each
    call; lines 31-33 that ran inside forward appear nowhere."""
    events = [X("train.py(27): <module>", 0, 1000, cat="python_function", Python_id=1, Python_parent_id=None)]
    for k in range(3):
        t = 100 + 300 * k
        events += [
            X("mymodel.py(25): forward", t, 200, cat="python_function", Python_id=10 + k, Python_parent_id=1),
            X("aten::mm", t + 10, 150),
        ]
    return write_trace(tmp_path / "script.json", events)


def test_the_code_report_names_functions_and_the_scripts_top_level(tmp_path, capsys):
    code, out, _ = run(capsys, "code", _script(tmp_path), "--no-cache")
    lines = out.splitlines()
    assert code == 0 and lines[0].split()[:3] == ["Function", "(file:def", "line)"]
    rows = [line.split("  ")[0] for line in lines[2:4]]
    assert rows == ["forward (mymodel.py:25)", "top level (train.py:27)"]  # CPU only: by self CPU (600 > 400 us)
    assert "A row is a function at its def line" in out and "top level is a script's module-level code" in out
    code, out, _ = run(capsys, "code", _script(tmp_path), "--format", "json", "--no-cache")
    first = json.loads(out)["rows"][0]
    assert (first["frame"], first["function"]) == ("mymodel.py(25): forward", "forward (mymodel.py:25)")


def test_a_cpu_only_capture_has_no_device_columns_and_is_sorted_by_cpu_time(capsys):
    code, out, _ = run(capsys, "code", SAMPLES / "cpu" / "attn_sdpa_math.json.gz")
    head = out.splitlines()[0]
    assert code == 0 and "Self CPU" in head and "device" not in head.lower() and "GPU" not in head
    assert "CPU only: no device columns" in out
    code, out, _ = run(capsys, "code", SAMPLES / "cpu" / "attn_sdpa_math.json.gz", "--format", "json")
    rows = json.loads(out)["rows"]
    assert [r["self_cpu_us"] for r in rows] == sorted((r["self_cpu_us"] for r in rows), reverse=True)


async def test_the_code_view_of_a_cpu_only_capture_opens_sorted_by_cpu_time():
    from tui.app import TraceApp
    from tui.widgets.code_view import FramesTable

    app = TraceApp([str(SAMPLES / "cpu" / "attn_sdpa_math.json.gz")], use_cache=False)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "6")
        table = screen.query_one(FramesTable)
        assert table.sort_key == "self_cpu"
        assert [c.header for c in table.columns()] == ["Function (file:def line)", "Calls", "Self CPU", "CPU total"]
        shown = [r.self_cpu_us for r in table.shown]
        assert shown == sorted(shown, reverse=True) and table.shown[0].label.startswith("capture (profiler_runner/")


async def test_the_selection_stays_on_screen_when_p_shows_the_frames_above_it():
    """A fresh-eyes run: `p` put the frames' rows above the selected op, pushing it below the lanes' visible rows
    until the next move."""
    from tui.app import TraceApp

    app = TraceApp([str(BERT)], use_cache=False)
    async with app.run_test(size=(100, 24)) as pilot:
        screen = await wait_for_main(pilot)
        tl = screen.timeline
        a = tl.analysis
        host = [int(i) for i in a.nesting.order if a.trace.x.cat[int(i)] != int(Cat.KERNEL)]
        deepest = max(host, key=lambda i: int(a.nesting.row[i]))  # a kernel's own row: not moved by frames
        tl.select(deepest)
        await pilot.pause()
        await press_settled(pilot, "p")
        await pilot.pause()
        assert not screen.hide_python and tl.selected == deepest
        track = int(tl.analysis.trace.x.track[deepest])
        line = tl._line_of_track.get(track, 0) + int(tl.analysis.nesting.row[deepest])
        assert tl.scroll_offset.y <= line < tl.scroll_offset.y + tl.scrollable_content_region.height


async def test_the_icicle_status_of_a_cpu_capture_says_cpu_time_at_80_columns_too():
    """A fresh-eyes run: the status said "of cpu time" at 80 columns and "of CPU time" on a wider terminal."""
    text, _ = await _icicle_status_at_80(SAMPLES / "cpu" / "attn_sdpa_math.json.gz")
    assert "CPU time" in text and "cpu time" not in text
