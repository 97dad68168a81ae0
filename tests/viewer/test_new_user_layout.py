"""What a new user hit in the viewer's layout (round 14, checked in tmux at 80x24 and 160x45): each asserted here."""

from __future__ import annotations

from conftest import SAMPLES, press_settled, screen_text, until, wait_for_main

from tui.app import TraceApp
from tui.model.cats import Cat

H200 = str(SAMPLES / "cuda-h200" / "matmul_add_64_warm_eager_stack.json.gz")  # lanes 366 us to 861 us


def within(view, whole) -> bool:
    return whole.t0 <= view.t0 and view.t1 <= whole.t1


# ---- 1. zooming out stops at the whole trace, and the view stays inside it ---------------------------


async def test_zoom_out_stops_at_the_whole_trace_and_never_shows_time_outside_it():
    """Four presses of s on the whole 495 us of lanes showed 8.26ms, most of it before 0us."""
    app = TraceApp([H200], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        tl = (await wait_for_main(pilot)).timeline
        whole = tl.view
        lanes = tl.lanes.t_max - tl.lanes.t_min
        assert whole.t0 <= tl.lanes.t_min and tl.lanes.t_max <= whole.t1
        assert whole.t1 - whole.t0 <= lanes * 1.02 + 2 * whole.bucket  # the trace, a 1% margin each side, a cell
        await press_settled(pilot, *"ssss")
        assert tl.view == whole
        a = tl.analysis
        kernels = [int(i) for i in a.nesting.order if a.trace.x.cat[i] == Cat.KERNEL]
        last = max(kernels, key=lambda i: int(a.end[i]))  # the last kernel, at the trace's end
        tl.select(last)
        await pilot.pause()
        middle = (int(a.trace.x.ts[last]) + int(a.end[last])) // 2
        views = [tl.view]
        for _ in range(6):
            await pilot.press("w")
            assert within(tl.view, whole) and tl.view.t0 <= middle <= tl.view.t1
            views.append(tl.view)
        for back in views[-2::-1]:
            await pilot.press("s")
            assert tl.view == back  # s gives back the view before w, kept inside the trace on the way
        await press_settled(pilot, "s")
        assert tl.view == whole
        await press_settled(pilot, "w", "w", *"DDDDDDDD")  # panned far right: stops at the end
        assert within(tl.view, whole) and tl.view.t1 > whole.t1 - tl.view.bucket * tl.view.width // 8
        await press_settled(pilot, *"AAAAAAAAAAAA")
        assert within(tl.view, whole) and tl.view.t0 < whole.t0 + tl.view.bucket * tl.view.width // 8
        tl.select(-1)
        await press_settled(pilot, "0")
        whole = tl.view  # (the details closed: another width)
        await press_settled(pilot, "w", "w", *"DDDDDDDD")  # no selection: zoomed around the middle, at the end
        panned = tl.view
        assert panned.bucket == whole.bucket >> 2 and within(panned, whole)
        await press_settled(pilot, "s")  # around the middle, a view as wide would end past the trace: moved back
        back = tl.view  # by whole cells, as few as keep it inside: its end within a cell of the trace's
        assert back.bucket == whole.bucket >> 1 and within(back, whole) and back.t1 > whole.t1 - back.bucket


# ---- 3. the details panel has the rows the lanes leave --------------------------------------------------


def test_the_details_panel_takes_the_rows_the_lanes_leave():
    from tui.views.room import DETAILS_SHARE, MIN_LANES, share

    few = share(45, 0, timeline=True, marked=False, searching=False, lanes_needed=15)
    assert few.lanes == 15 and few.details == 45 - 2 - 1 - 2 - 15  # tabs, key bar, ruler: the rest is the panel's
    many = share(45, 0, timeline=True, marked=False, searching=False, lanes_needed=200)
    assert many.details == int(45 * DETAILS_SHARE)  # lanes past the screen: the panel keeps its share
    tiny = share(24, 0, timeline=True, marked=False, searching=False, lanes_needed=2)
    assert tiny.lanes >= MIN_LANES


async def test_at_160x45_a_kernels_details_use_the_rows_under_a_few_lanes():
    """A kernel selected on a trace of 15 lane rows: the panel kept to 18 rows ("↓ 11 more lines") while 7 of the
    lanes' rows stayed blank (22 with the panel closed to a line)."""
    app = TraceApp([H200], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        tl = screen.timeline
        await until(pilot, lambda: {"queue"} <= {s.kind for s in tl.series}, "the launch queue lane")
        a = tl.analysis
        kernel = min((int(i) for i in a.nesting.order if a.trace.x.cat[i] == Cat.KERNEL), key=lambda i: a.trace.x.ts[i])
        tl.select(kernel)
        panel = screen.details
        await until(pilot, lambda: getattr(panel, "details", None) is not None, "the kernel's details")
        await pilot.pause()
        assert panel.size.height > 18  # more than the 40% share
        shown = tl.scrollable_content_region.height
        assert shown >= len(tl.lines)  # every lane row still shows
        assert panel.max_scroll_y == 0 or shown == len(tl.lines)  # no blank lane row while the panel hides lines


# ---- 5. the details' roofline line says the op's dtype, and the roof's where it differs -----------------


async def test_a_bf16_add_reads_bf16_over_fp32_in_the_details_as_in_the_roofline_table():
    """The details said "(memory-bound, fp32)" for an aten::add whose inputs are bf16 (its Input type: c10::BFloat16)."""
    from tui.model.load.args import event_args

    app = TraceApp([H200], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        tl = screen.timeline
        a = tl.analysis
        add = next(int(i) for i in a.nesting.order if a.trace.name_of(int(i)) == "aten::add")
        assert "c10::BFloat16" in str(event_args(a.trace, add).get("Input type"))
        row = next(r for r in a.roofline.rows if r.name == "aten::add")
        assert (row.dtype, row.roof_dtype) == ("bf16", "fp32")  # the table's Dtype: bf16/fp32
        tl.select(add)
        panel = screen.details
        await until(pilot, lambda: getattr(panel, "details", None) is not None and panel.details.index == add, "add")
        await pilot.pause()
        text = " ".join(screen_text(app).split())
        assert "(memory-bound, bf16/fp32)" in text and "(memory-bound, fp32)" not in text


# ---- 6. the key bar says what p does, in both states -------------------------------------------------


async def test_the_key_bar_says_what_p_does_whether_frames_show_or_not():
    """ "p frames shown" read as an order ("press p: frames shown"); the bar says the key's action, as it does for
    every other key, and the state still shows in it."""
    from tui.widgets.keybar import KeyBar

    app = TraceApp([H200], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        bar = screen.query_one(KeyBar)
        await until(pilot, lambda: bar.text().startswith("p "), "the frames' entry")
        assert not screen.hide_python and bar.text().startswith("p hide frames  ")
        await press_settled(pilot, "p")
        await until(pilot, lambda: screen.hide_python and bar.text().startswith("p show frames  "), "p show frames")
        assert bar.shown[0].state  # still said as what is on


# ---- 4. the load's notes sit in the details panel, not over the lanes -----------------------------------


async def test_a_jobs_note_is_said_under_the_lanes_not_in_a_toast_over_them():
    """At 80x24 the toast about a job of 2 ranks covered the lanes' lower right and cut the legend mid-line."""
    app = TraceApp([str(SAMPLES / "hta-2rank")], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        await pilot.pause()
        assert not [n for n in app._notifications if "job of 2 ranks" in n.message]  # no toast
        assert screen.details.display and screen.details.notes
        text = " ".join(screen_text(app).split())
        assert "note: sample_traces/hta-2rank is a job of 2 ranks" in text.replace(str(SAMPLES.parent) + "/", "")


async def test_what_a_load_said_once_is_a_note_in_the_viewer(monkeypatch, tmp_path):
    """The first big trace read by default where numba is installed starts numba's compile behind and says so in
    one line on stderr, which the viewer hides: the viewer says it in the load's notes. (With the cache: a load
    that keeps out of it, --no-cache, starts no compile, cachedir.kept_out.)"""
    from tui.model.errors import said_once
    from tui.model.load import native_warm, scanned

    monkeypatch.delenv("TRACETUI_DECODE", raising=False)
    monkeypatch.setattr(scanned, "NATIVE_MIN_BYTES", 0)  # this small trace counts as big
    monkeypatch.setattr(native_warm, "key", lambda: "a numba here")  # installed, its compile never marked
    monkeypatch.setattr(native_warm.subprocess, "Popen", lambda *a, **k: None)  # started (not run here)
    monkeypatch.setattr(native_warm, "_STARTED", [])
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(tmp_path))
    said_once.cache_clear()
    app = TraceApp([H200])
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        await pilot.pause()
        assert ("note", scanned.BEHIND_NOTE) in screen.details.notes
        assert "the native decoder (numba) is compiling in the background" in " ".join(screen_text(app).split())
