"""Lane names: a CPU lane says CPU (its thread's name below), no two lanes share a title; memory lanes say
allocated or reserved at any width."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import SAMPLES, X, screen_text, wait_for_main, write_trace

from tui.model import load_trace
from tui.model.analyses.results import Results
from tui.model.tracks import lane_titles
from tui.model.view.lanes import LaneIndex, layout_lines
from tui.model.view.series import memory_series, series_label
from tui.text.sanitize import cell_len
from tui.widgets.timeline import gutter_for

BERT = SAMPLES / "h100-bert-small.json.gz"


def test_cpu_lanes_say_cpu_with_the_thread_name_below_and_never_share_a_title():
    a = Results(load_trace(str(BERT), use_cache=False))
    for structure in (a, a.frameless):  # p: frames shown and hidden
        lines = layout_lines(LaneIndex(structure))
        titles = [line.label for line in lines if line.kind == "row" and line.depth == 0]
        assert len(titles) == len(set(titles))
        cpu = [t for t in a.trace.tracks if t.kind == "cpu" and t.events]
        names = lane_titles(cpu)
        assert all(names[t.id][0].startswith("CPU ") and t.name in names[t.id][1] for t in cpu)
        subtitles = [line.label for line in lines if line.kind == "row" and line.depth == 1]
        assert "python main thread · tid" in " ".join(subtitles)
        assert any(title.startswith("GPU ") for title in titles)


def test_two_main_threads_get_two_titles(tmp_path):
    events = [
        X("a", 0, 10, pid=5, tid=5),  # tid == pid: the main thread
        X("b", 0, 10, pid=5, tid=9),
        {"ph": "M", "name": "thread_name", "pid": 5, "tid": 9, "args": {"name": "pt_main_thread"}},
    ]
    t = load_trace(write_trace(tmp_path / "t.json", events), use_cache=False)
    cpu = [tr for tr in t.tracks if tr.kind == "cpu"]
    assert [tr.name for tr in cpu] == ["python main thread", "python main thread"]  # both read as the main thread
    titles = lane_titles(cpu)
    assert sorted(v[0] for v in titles.values()) == ["CPU main thread (tid 5)", "CPU main thread (tid 9)"]


def test_memory_lanes_say_allocated_or_reserved_at_any_width():
    a = Results(load_trace(str(BERT), use_cache=False))
    lanes = memory_series(a.memory_curves)
    cuda = [s for s in lanes if s.label.startswith("cuda:0")]
    assert [s.label for s in cuda] == ["cuda:0 allocated", "cuda:0 reserved"]
    for room in range(1, 30):
        alloc, resv = (series_label(s, room) for s in cuda)
        assert len(alloc) <= room and len(resv) <= room and alloc != resv
        assert alloc in ("cuda:0 allocated", "cuda:0 alloc", "cuda:0 A", "allocated", "alloc", "A"), alloc
        assert resv in ("cuda:0 reserved", "cuda:0 resv", "cuda:0 R", "reserved", "resv", "R"), resv
    assert series_label(cuda[0], 9) == "cuda:0 A" and series_label(cuda[1], 9) == "cuda:0 R"  # the device kept
    assert series_label(cuda[0], 7) == "alloc" and series_label(cuda[1], 7) == "resv"
    assert np.array_equal(cuda[0].values, a.memory_curves[1].allocated.astype(float))


def test_memory_lanes_keep_their_value_at_80_columns():
    """At 80x24 the gutter is 16 columns: each memory lane keeps its device, its kind and its value at the cursor,
    in the binary units README names (KiB, MiB, GiB), not 1.33G."""
    from tui.text.fmt import fmt_memory_gutter
    from tui.widgets.timeline import Timeline, gutter_for

    a = Results(load_trace(str(BERT), use_cache=False))
    g = gutter_for(79)
    for s in memory_series(a.memory_curves):
        value = Timeline.format_value(s, float(s.values.max()), short=True)
        assert value == fmt_memory_gutter(s.values.max()) and len(value) <= 7
        label = series_label(s, g - len(value) - 2)
        assert s.label.split()[0] in label or len(s.label.split()[0]) > g - len(value) - 4, (label, value)
    sizes = (0, 512 << 10, 87.4 * 2**20, 116 * 2**20, 1.33 * 2**30, 99.97 * 2**20, 3 * 2**40)
    assert [fmt_memory_gutter(b) for b in sizes] == ["0B", "512KiB", "87.4MiB", "116MiB", "1.33GiB", "100MiB", "3TiB"]
    assert [fmt_memory_gutter(b, digits=2) for b in sizes[2:6]] == ["87MiB", "116MiB", "1.3GiB", "100MiB"]


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_memory_gutter_names_its_units_and_keeps_the_device(size):
    """The timeline's memory lanes read `cuda:0 A 1.3GiB`, `cuda:0 alloc  1.33 GiB`: a unit README names, never
    `1.33G` or `87.4M`, and the lane's device kept in its label."""
    from conftest import until, wait_for_main

    from tui.app import TraceApp
    from tui.widgets.timeline import Timeline

    app = TraceApp([str(BERT)], use_cache=False)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_main(pilot)
        tl = screen.query_one(Timeline)
        await until(pilot, lambda: any(s.kind == "memory" for s in tl.series), "the memory lanes")
        gutters = [tl._series_line(s)[0].text for s in tl.series if s.kind == "memory"]
        assert len(gutters) >= 3 and all(len(g) == tl.name_cols for g in gutters)
        for gutter, s in zip(gutters, [s for s in tl.series if s.kind == "memory"], strict=True):
            assert re.fullmatch(r"\S.* (–|\d[\d.]* ?(B|KiB|MiB|GiB|TiB))│", gutter), gutter
            assert gutter.startswith(s.label.rpartition(" ")[0] + " "), gutter  # cpu, cuda:0
        assert any(re.search(r"\d ?[KMG]iB│", g) for g in gutters), gutters


def test_a_thread_is_named_by_what_the_trace_says_not_called_the_main_thread():
    """BERT's pid 0 is its GPU's; the Python frames Kineto put on its thread 0 are tqdm's monitor thread."""
    a = Results(load_trace(str(BERT), use_cache=False))
    tqdm = next(t for t in a.trace.tracks if t.kind == "cpu" and t.pid == 0 and t.tid == 0)
    assert tqdm.name == "thread 0 (python3)"  # tid == pid, but pid 0 holds a GPU's streams: not a process's main
    titles = LaneIndex(a).titles
    assert titles[tqdm.id] == ("CPU tqdm thread", "thread 0 (python3)")
    main = next(t for t in a.trace.tracks if t.name == "python main thread")
    assert titles[main.id][0] == "CPU main thread" and main.pid == 19392


def test_package_of_a_frame():
    from tui.model.tracks import package_of

    assert package_of("tqdm/_monitor.py(60): run") == "tqdm"
    assert package_of("/usr/lib/python3/site-packages/torch/nn/modules/module.py(1501): _call_impl") == "torch"
    assert package_of("threading.py(1032): _bootstrap") == ""  # the standard library's bootstrap says nothing
    assert package_of("<string>(1): <module>") == "" and package_of("aten::mm") == ""


def test_lane_names_get_room_on_a_wide_terminal():
    """A fresh-eyes run: at 160 columns "python main thread ·…" was cut in a 24-cell gutter beside a 136-cell axis."""
    from tui.widgets.timeline import gutter_for

    assert [gutter_for(w) for w in (80, 110, 120, 139, 140, 160, 200, 300)] == [16, 24, 24, 24, 28, 32, 32, 32]
    assert gutter_for(160) - 1 >= len("python main thread · tid 2005")


async def test_the_main_threads_lane_name_is_whole_at_160_columns():
    from tui.app import TraceApp

    app = TraceApp([str(SAMPLES / "cuda-h200" / "matmul_add_64_warm_eager_stack.json.gz")], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for_main(pilot)
        await pilot.pause()
        assert "python main thread · tid 2005│" in screen_text(app)


def test_a_lane_subtitle_keeps_its_thread_id_whole_and_drops_the_filler_words_first():
    """A fresh-eyes run: at 160 columns "python main thread · tid 200…" lost the id's last digits in the 32-cell
    gutter; the words every CPU lane says (python, thread) and then the middle of the thread's name give way first."""
    from tui.widgets.timeline_draw import subtitle_text

    label = "python main thread · tid 20051"
    rooms = {w: gutter_for(w) - 3 for w in (80, 120, 160)}  # less the │ and the subtitle's indent
    assert subtitle_text(label, rooms[160]) == "main thread · tid 20051"
    assert subtitle_text(label, rooms[120]) == "main · tid 20051"
    assert subtitle_text(label, rooms[80]) == "tid 20051"
    assert subtitle_text("python main thread · tid 2005", rooms[160]) == "python main thread · tid 2005"  # fits: whole
    assert subtitle_text("pt_dataloader_worker_3 · tid 20051", rooms[120]) == "pt_d…er_3 · tid 20051"
    assert subtitle_text("autograd thread (1234567)", rooms[120]) == "autograd (1234567)"
    assert subtitle_text("thread 0 (python3)", 13) == "thread 0 (py…"  # no id to keep: cut at its end
    for room in range(1, 40):
        for name in (label, "pt_dataloader_worker_3 · tid 20051", "数据加载线程 · tid 20051"):
            shown = subtitle_text(name, room)
            assert cell_len(shown) <= room, (name, room, shown)
            assert "20051" in shown or room < len("tid 20051"), (name, room, shown)


@pytest.mark.parametrize("size", [(80, 24), (120, 35), (160, 45)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_main_threads_five_digit_id_is_whole_in_the_gutter(size):
    """BERT's main thread is tid 19392: its lane's subtitle ends in the whole id at every width."""
    from tui.app import TraceApp
    from tui.widgets.timeline import Timeline

    app = TraceApp([str(BERT)], use_cache=False)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_main(pilot)
        await pilot.pause()
        g = screen.query_one(Timeline).name_cols
        subtitles = [line[:g] for line in screen_text(app).splitlines() if re.match(r"^  (\S.* )?tid 19392 *│", line)]
        assert len(subtitles) == 1, screen_text(app)
        words = {80: "  tid 19392", 120: "  main · tid 19392", 160: "  main thread · tid 19392"}[size[0]]
        assert subtitles[0] == words.ljust(g - 1) + "│"


async def test_a_python_main_thread_with_a_five_digit_id_keeps_it_at_160_columns(tmp_path):
    from tui.app import TraceApp

    events = [X("aten::linear", 0, 10, pid=20051, tid=20051), X("aten::mm", 2, 5, pid=20051, tid=20051)]
    path = write_trace(tmp_path / "t.json", events)  # two rows: the thread's name is said beside the second
    app = TraceApp([str(path)], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for_main(pilot)
        await pilot.pause()
        assert re.search(r"^  main thread · tid 20051 +│", screen_text(app), re.M), screen_text(app)
