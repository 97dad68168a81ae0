"""The critical path and the launch queue in the viewer (issue 27, items 4 and 5), on real traces."""

from __future__ import annotations

import io

import numpy as np
import pytest
from conftest import SAMPLES, press_settled, until, wait_for_main
from rich.console import Console

from tui.app import TraceApp
from tui.model import load_trace
from tui.model.analyses.critical import critical_path, what_if_for_event, window_of
from tui.model.analyses.critical.groups import path_groups
from tui.model.analyses.critical.queue import launch_latency, name_latency, stream_queues
from tui.model.analyses.results import Results
from tui.model.cats import Cat
from tui.model.view.series import QUEUE_TOP
from tui.model.words import saving_said
from tui.reports.tables import kernels_document
from tui.tables import critical as C
from tui.tables import critical_path as P
from tui.tables import kernels as K
from tui.text.fmt import fmt_time
from tui.widgets.critical_view import CriticalPathTable, CriticalView
from tui.widgets.kernels_view import KernelsView

BERT = str(SAMPLES / "h100-bert-small.json.gz")  # CPU bound: its kernels are off the path
GRAPHS = str(SAMPLES / "v100-cudagraph-test.json.gz")  # four streams, one always full


def first_named(a, name: str) -> int:
    return int(np.flatnonzero([a.trace.names[n] == name for n in a.trace.x.name])[0])


def path_events(p) -> set[int]:
    return {it.event for it in p.items if it.event >= 0}


async def opened(pilot):
    screen = await wait_for_main(pilot)
    await pilot.app.workers.wait_for_complete()
    return screen


async def test_b_marks_the_path_of_the_selected_step_and_b_again_clears_it():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        tl, a = screen.timeline, screen.analysis
        op = first_named(a, "aten::linear")
        tl.select(op)
        await press_settled(pilot, "b")
        await until(pilot, lambda: tl.path_mask is not None, "the path marked")
        expected = critical_path(a, window_of(a, op), a.graph_owner)
        assert set(np.flatnonzero(tl.path_mask).tolist()) == path_events(expected)
        assert expected.window.startswith("ProfilerStep#")
        line = screen.critical_line.text
        assert line.startswith(f"critical path of {expected.window}: {C.when(expected.length_ns)}, bound by CPU work")
        assert ("b", "critical path") in tl.keybar_state()
        await press_settled(pilot, "b")
        assert tl.path_mask is None and not screen.critical_line.display


async def test_a_failing_path_stays_in_the_line_and_the_app_goes_on(monkeypatch):
    import tui.model.analyses.critical as critical

    def broken(*_args):
        raise RuntimeError("no graph today")

    monkeypatch.setattr(critical, "critical_path", broken)
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        await press_settled(pilot, "b")
        await until(pilot, lambda: "failed" in screen.critical_line.classes, "the failure said")
        assert "no graph today" in screen.critical_line.text and screen.timeline.path_mask is None
        await press_settled(pilot, "l")  # still answers keys
        assert screen.timeline.selected >= 0 and "no graph today" in screen.critical_line.text


async def test_x_says_what_2x_faster_saves_on_and_off_the_path():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        tl, a = screen.timeline, screen.analysis
        op = first_named(a, "aten::linear")
        model = what_if_for_event(a, op, 2.0, a.graph_owner)
        assert model.saving_ns > 0
        tl.select(op)
        await press_settled(pilot, "x")
        await until(pilot, lambda: "saves" in screen.critical_line.text, "the saving said")
        text = screen.critical_line.text
        assert text == C.event_saving(model, op in path_events(model.before))
        by, of = saving_said(model.before.length_ns / 1000, model.after.length_ns / 1000)  # one unit, as printed
        assert f"saves {by} of {of}" in text
        kernel = int(np.flatnonzero(a.trace.x.cat == int(Cat.KERNEL))[10])
        off = what_if_for_event(a, kernel, 2.0, a.graph_owner)
        assert off.saving_ns == 0 and kernel not in path_events(off.before)
        tl.select(kernel)
        await press_settled(pilot, "x")
        await until(pilot, lambda: "off the critical path" in screen.critical_line.text, "why it saves nothing")
        assert screen.critical_line.text == C.event_saving(off, False)
        assert f"saves nothing: it is off the critical path of {off.before.window} (" in screen.critical_line.text


async def test_g_says_what_one_cuda_graph_replay_of_the_op_would_save():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        tl, a = screen.timeline, screen.analysis
        op = first_named(a, "aten::linear")
        model = what_if_for_event(a, op, 0.0, a.graph_owner, graph=True)
        assert model.saving_ns > 0 and model.specs[0].what == "graphs"
        tl.select(op)
        await press_settled(pilot, "g")
        await until(pilot, lambda: "CUDA graph replay" in screen.critical_line.text, "the replay's saving said")
        assert screen.critical_line.text == C.sentence(model)
        assert screen.critical_line.text.startswith("aten::linear as one CUDA graph replay")
        kernel = int(np.flatnonzero(a.trace.x.cat == int(Cat.KERNEL))[10])
        tl.select(kernel)
        await press_settled(pilot, "g")
        await until(pilot, lambda: "GPU lane" in screen.critical_line.text, "why a kernel has nothing to replay")


async def grouped(pilot, screen) -> CriticalPathTable:
    """The path view shown, its groups ready."""
    await press_settled(pilot, "8")
    table = screen.query_one(CriticalPathTable)
    await until(pilot, lambda: table.groups is not None, "the path grouped")
    await pilot.pause()
    return table


async def test_the_path_view_groups_the_path_as_the_cli_does_frames_in_their_ops():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        assert screen.hide_python  # deep stacks start hidden
        table = await grouped(pilot, screen)
        a, p = screen.analysis, screen.analysis.critical
        assert table.path is p and table.shown == path_groups(a.trace, p, a.frameless)
        assert not any(g.kind == "frame" for g in table.shown) and table.shown[0].name == p.window  # Python: the step's
        assert sum(g.dur_ns for g in table.shown) == p.length_ns and len(table.shown) < len(p.items) / 50
        assert any(g.kind == "bookkeeping" for g in table.shown)
        await press_settled(pilot, "c")  # the table keys sort: calls, then name
        calls = [g.calls for g in table.shown]
        assert calls == sorted(calls, reverse=True) and "sorted by calls" in table.status()
        await press_settled(pilot, "n")
        assert [g.name for g in table.shown] == sorted(g.name for g in table.shown)
        await press_settled(pilot, "p")  # frames shown: the CLI's groups, frames as rows
        table = await grouped(pilot, screen)
        assert table.shown == path_groups(a.trace, p) and any(g.kind == "frame" for g in table.shown)


async def test_enter_opens_a_groups_stretches_then_goes_to_the_event_and_esc_comes_back():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        table = await grouped(pilot, screen)
        k = next(k for k, g in enumerate(table.shown) if g.name == "aten::addmm")
        group = table.shown[k]
        await press_settled(pilot, *["down"] * k, "enter")
        assert table.group is group and table.shown == group.items  # its stretches, in time order
        assert [it.start_ns for it in table.shown] == sorted(it.start_ns for it in group.items)
        assert (
            "aten::addmm: 138 stretches, in time order" in table.status() and "At: from the start of" in table.status()
        )
        await press_settled(pilot, "o", "o")  # the longest, then the shortest first
        assert table.reversed and table.shown[0].dur_ns == min(it.dur_ns for it in group.items)
        await press_settled(pilot, "o")  # a third press: time order again
        assert table.shown == group.items and "in time order" in table.status()
        await press_settled(pilot, "escape")
        assert table.group is None and table.current() is group  # back on that group
        await press_settled(pilot, "enter", "down", "down", "enter")
        assert screen.view_name == "timeline" and screen.timeline.selected == group.items[2].event


async def test_at_80x24_the_path_view_keeps_twelve_rows_and_whole_names():
    app = TraceApp([str(SAMPLES / "a100-train-control.json.gz")], use_cache=False)  # seven classes on its path
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(pilot)
        table = await grouped(pilot, screen)
        lazy = table.table_widget
        assert lazy.scrollable_content_region.height - 1 >= 12  # below its header
        view = screen.query_one(CriticalView)
        assert view.compact and view.query_one("#critical-breakdown").size.height == 2  # its classes on one line
        names = [table.fitted.cells[k][0] for k in range(12)] if table.fitted else []
        readable = [g.name for g in table.shown[:12] if len(P.group_label(g)) <= 32]
        assert names and all(P.group_label(g) in names for g in table.shown[:12] if g.name in readable)


async def test_a_queue_lane_per_stream_with_its_deepest_queue():
    app = TraceApp([GRAPHS], use_cache=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        tl, a = screen.timeline, screen.analysis
        await until(pilot, lambda: any(s.kind == "queue" for s in tl.series), "the queue lanes")
        lanes = {s.label: s.high for s in tl.series if s.kind == "queue"}
        expected = {
            f"{a.trace.tracks[q.track].name} queue": max(q.max_length, QUEUE_TOP)
            for q in stream_queues(a.trace, a.links.launcher)
        }
        # HTA's maximum (1,013): the 12 graph launches are one entry each, their replayed kernels none
        assert lanes == expected and len(lanes) == 4 and max(lanes.values()) == 1013
        line = next(k for k, ln in enumerate(tl.lines) if ln.kind == "series" and ln.label == "GPU 1 stream 7 queue")
        tl.scroll_to(y=max(line - 3, 0), animate=False)
        await pilot.pause()
        text = "".join(seg.text for seg in tl.render_line(line - tl.scroll_offset.y))
        assert text.startswith("GPU 1 stream 7 queue") and "█" in text


async def test_the_kernels_view_shows_launch_to_start_as_queue_py_measures_it():
    app = TraceApp([GRAPHS], use_cache=False)
    async with app.run_test(size=(200, 40)) as pilot:
        screen = await opened(pilot)
        await press_settled(pilot, "4")
        view = screen.query_one(KernelsView)
        a = screen.analysis
        headers = [c.header for c in view.columns()]
        assert "Launch→start median" in headers and "Launch→start p95" in headers
        med, p95 = headers.index("Launch→start median"), headers.index("Launch→start p95")
        latency = {n.name: n for n in name_latency(a.trace, a.links.launcher)}
        source = view._source()
        unlaunched = 0  # names only ever replayed by a graph launch: no launch of their own, no latency
        for k, row in enumerate(view.rows[:20]):
            n = latency.get(row.name)
            unlaunched += n is None
            assert source.cell(k, med) == (fmt_time(n.median_ns / 1000) if n else "-")
            assert source.cell(k, p95) == (fmt_time(n.p95_ns / 1000) if n else "-")
        assert 0 < unlaunched < 20
        document = kernels_document(a, None, 0)["rows"]  # the CLI's JSON: the same two figures, named
        n = [latency.get(r.name) for r in view.rows[:20]]
        assert [(r["launch_latency_median_us"], r["launch_latency_p95_us"]) for r in document[:20]] == [
            (k.median_ns / 1000, k.p95_ns / 1000) if k else (None, None) for k in n
        ]
        status = view.status()
        assert "GPU 1 stream 7: 9,492 launches, queue up to 1,013" in status and "always full" in status


def test_name_latency_is_the_median_p95_and_max_of_each_names_launches():
    a = Results(load_trace(GRAPHS, use_cache=False))
    dev, lat = launch_latency(a.trace, a.links.launcher)
    for n in name_latency(a.trace, a.links.launcher)[:10]:
        mine = lat[[a.trace.name_of(int(i)) == n.name for i in dev]]
        assert n.count == len(mine) and n.max_ns == mine.max()
        assert n.median_ns == int(np.percentile(mine, 50)) and n.p95_ns == int(np.percentile(mine, 95))


@pytest.mark.parametrize(("trace", "verdict"), [(BERT, "empty"), (GRAPHS, "full")])
def test_the_launch_queue_rule_names_the_stream_with_queue_py_figures(trace, verdict):
    from tui.model.analyses.explain.queue import launch_queue
    from tui.tables.explain import note

    a = Results(load_trace(trace, use_cache=False))
    [finding] = launch_queue(a, a.summary)
    [q] = [q for q in stream_queues(a.trace, a.links.launcher) if q.verdict == verdict]
    assert finding.figures["stream"] == a.trace.tracks[q.track].name
    assert finding.figures["max_length"] == q.max_length and finding.figures["activities"] == q.activities
    assert f"always {verdict}" in note(finding) and f"{q.max_length:,}" in note(finding)
    assert [(f.rule, f.figures) for f in a.findings].count(
        (finding.rule, finding.figures)
    ) == 1  # one of the trace's findings


def test_a_collective_stream_is_not_said_to_starve():
    from tui.model.analyses.explain.queue import launch_queue

    a = Results(load_trace(SAMPLES / "a100-ddp-nccl.json.gz", use_cache=False))
    starved = [q for q in stream_queues(a.trace, a.links.launcher) if q.verdict == "empty"]
    assert starved and not launch_queue(a, a.summary)  # the NCCL stream waits for the other ranks


async def test_the_overview_verdict_gains_the_paths_breakdown():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        await press_settled(pilot, "5")
        console = Console(width=120, record=True, file=io.StringIO())
        console.print(screen.query_one("#overview-body").content)
        body = console.export_text()
        p = screen.analysis.critical
        assert f"Critical path of {p.window}: {C.when(p.length_ns)}, bound by CPU work (100%) (8 shows it)" in body
        assert "CPU work ████████ 100%" in body


def test_the_launch_queues_kept_in_the_cache_read_back_as_computed(isolated_cache):
    from tui.model.analyses.critical.queue import launch_queues

    first = Results(load_trace(GRAPHS)).launch_queues
    again = Results(load_trace(GRAPHS))
    kept = again.launch_queues
    assert kept == first == launch_queues(again.trace, again.links.launcher)
    assert kept.stream_names[kept.streams[0].track] == "GPU 1 stream 7"


async def test_the_marked_path_follows_python_frames_shown_or_hidden():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        tl = screen.timeline
        tl.select(first_named(screen.analysis, "aten::linear"))
        await press_settled(pilot, "b")
        await until(pilot, lambda: tl.path_mask is not None, "the path marked")
        marked, hidden = tl.path_mask.copy(), screen.hide_python
        await press_settled(pilot, "p")
        await until(pilot, lambda: screen.hide_python != hidden, "frames shown or hidden")
        s = tl.analysis
        shown = [int(e) for e in np.flatnonzero(marked) if s.nesting.pos[e] >= 0]
        rows = {(int(s.trace.x.track[e]), int(s.nesting.row[e])) for e in shown}
        assert (tl.path_mask == marked).all() and rows <= set(tl._path_rows)


def test_the_kernels_footer_names_each_streams_latency_outliers():
    from tui.text.names import shorten

    a = Results(load_trace(SAMPLES / "a100-train-control.json.gz", use_cache=False))
    lines = K.queue_footers(a.launch_queues, a.trace.name_of)
    busiest = max(a.launch_queues.streams, key=lambda q: q.activities)
    assert busiest.outlier_count > 0 and lines[0].startswith(f"GPU 3 stream 7: {busiest.activities:,} launches")
    slowest = [shorten(a.trace.name_of(e), 40) for e in busiest.outliers[:3]]
    assert lines[0].endswith(f"{busiest.outlier_count:,} outliers ≥10× the median, slowest: {', '.join(slowest)}")
    assert len(a.launch_queues.streams) - 3 == 1 and lines[-1] == "… and 1 more stream with launched work"


def test_the_critical_line_keeps_the_lanes_six_rows_at_any_height():
    from tui.views.room import MIN_LANES, share

    for height in (24, 30, 45):
        without, with_line = share(height, 0, True, False, False), share(height, 0, True, False, False, status=2)
        assert with_line.lanes >= MIN_LANES and with_line.details > 0
        assert with_line.details + with_line.lanes + 2 == without.details + without.lanes  # its two rows are counted


async def test_the_path_view_shows_the_step_b_marked_until_b_clears_it():
    from tui.model.steps import step_events

    app = TraceApp([str(SAMPLES / "mi250-rocm-train.json.gz")], use_cache=False)  # two steps
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        a, tl = screen.analysis, screen.timeline
        slowest = a.critical.window
        other = next(int(s) for s in step_events(a.trace) if a.trace.name_of(int(s)) != slowest)
        await press_settled(pilot, "8")
        assert screen.query_one(CriticalPathTable).path.window == slowest
        await press_settled(pilot, "1")
        tl.select(other)
        await press_settled(pilot, "b")
        await until(pilot, lambda: tl.path_mask is not None, "the path marked")
        marked = critical_path(a, window_of(a, other), a.graph_owner)
        table = screen.query_one(CriticalPathTable)
        await until(pilot, lambda: table.path.window != slowest and table.groups is not None, "the marked path grouped")
        assert table.path.window == a.trace.name_of(other) != slowest
        expected = path_groups(a.trace, marked, a.frameless if screen.hide_python else None)
        assert [(g.name, g.dur_ns) for g in table.shown] == [(g.name, g.dur_ns) for g in expected]
        await press_settled(pilot, "b")
        await until(pilot, lambda: table.path is a.critical and table.groups is not None, "back to the slowest step")
