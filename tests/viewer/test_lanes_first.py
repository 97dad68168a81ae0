"""Lanes first in the viewer: the loading screen paints the lanes of the events decoded so far (issue 29, item 3)."""

from __future__ import annotations

import gzip

import pytest
from conftest import SAMPLES, wait_for_main

from tui.app import TraceApp
from tui.screens import loading
from tui.screens.loading import LoadingScreen
from tui.screens.main import MainScreen
from tui.widgets.timeline import Timeline


async def test_the_loading_screen_paints_the_lanes_decoded_so_far(tmp_path, monkeypatch):
    import tui.model.load.source

    monkeypatch.setattr(tui.model.load.source, "CHUNK_BYTES", 16 << 10)
    monkeypatch.setattr(loading, "PREVIEW_FIRST_S", 0.0)
    monkeypatch.setattr(loading, "PREVIEW_EVERY_S", 0.0)
    monkeypatch.setattr(loading, "PREVIEW_PACE", 0.0)
    painted: list = []
    real = LoadingScreen.preview

    async def preview(self, analysis, lanes, fraction):
        await real(self, analysis, lanes, fraction)
        shown = self.query_one("#loading-lanes", Timeline)
        painted.append((analysis.trace.n, fraction, len(shown.lines), str(self.query_one("#loading-label").render())))

    monkeypatch.setattr(LoadingScreen, "preview", preview)
    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes()))
    app = TraceApp([str(plain)], use_cache=False)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await wait_for_main(pilot)
        assert isinstance(screen, MainScreen) and screen.timeline.analysis.trace.n == 2060
    assert len(painted) >= 2, "the lanes were not painted (and painted again) while loading"
    events, fraction, lines, label = painted[0]
    assert 0 < events < 2060 and 0 < fraction < 1 and lines > 0
    assert "decoded so far" in label
    assert [n for n, *_ in painted] == sorted(n for n, *_ in painted)  # each preview holds more


async def test_a_failing_preview_never_fails_the_load(tmp_path, monkeypatch):
    import tui.model.load.source

    monkeypatch.setattr(tui.model.load.source, "CHUNK_BYTES", 16 << 10)
    monkeypatch.setattr(loading, "PREVIEW_FIRST_S", 0.0)

    async def broken(self, *args):
        raise RuntimeError("a broken preview")

    monkeypatch.setattr(LoadingScreen, "preview", broken)
    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes()))
    app = TraceApp([str(plain)], use_cache=False)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await wait_for_main(pilot)
        assert isinstance(screen, MainScreen) and screen.timeline.analysis.trace.n == 2060


async def test_a_cached_trace_goes_straight_to_the_main_screen(tmp_path, monkeypatch):
    monkeypatch.setattr(loading, "PREVIEW_FIRST_S", 0.0)
    painted: list = []
    monkeypatch.setattr(LoadingScreen, "preview", lambda *a: painted.append(a))
    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes()))
    for _ in range(2):  # the first open writes the cache
        app = TraceApp([str(plain)], use_cache=True)
        painted.clear()
        async with app.run_test(size=(120, 30)) as pilot:
            await wait_for_main(pilot)
    assert painted == []


async def test_a_load_waiting_on_another_writer_of_the_cache_says_so_then_loads(tmp_path):
    """GIVEN another writer holding the trace's cache entry WHEN the viewer opens the trace THEN its decode bar
    says it waits for that writer (not "decode 0%" for the whole wait), and the trace loads once it is let go."""
    import threading
    import time

    from textual.widgets import Label, ProgressBar

    from tui.model.load import cache
    from tui.widgets.phases import WAITING

    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes()))
    held, release = threading.Event(), threading.Event()

    def other_writer() -> None:
        with cache.writing(plain):
            held.set()
            release.wait(30)

    writer = threading.Thread(target=other_writer)
    writer.start()
    assert held.wait(10)
    app = TraceApp([str(plain)], use_cache=True)
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            deadline = time.monotonic() + 20
            what = ""
            while what != WAITING and time.monotonic() < deadline:
                await pilot.pause(0.05)
                if isinstance(app.screen, LoadingScreen):
                    what = str(app.screen.query_one("#what-decode", Label).render())
            assert what == WAITING and app.screen.query_one("#phase-decode", ProgressBar).total is None
            release.set()
            screen = await wait_for_main(pilot)
            assert isinstance(screen, MainScreen) and screen.timeline.analysis.trace.n == 2060
    finally:
        release.set()
        writer.join()


@pytest.mark.filterwarnings("ignore:tracetui. compiling the native decoder")
async def test_a_load_whose_native_decoder_compiles_first_says_so_then_loads(tmp_path, monkeypatch):
    """GIVEN TRACETUI_DECODE=native and numba's cache without the compiled scan WHEN the viewer opens a trace THEN
    its decode bar says the decoder compiles (not "decode 0%" for the 15 s of it), and the trace loads after."""
    import threading
    import time

    pytest.importorskip("numba", reason="the native decoder needs numba (the fast or dev extra)")
    from textual.widgets import Label, ProgressBar

    from tui.model.load import scanned
    from tui.model.load.progress import COMPILING
    from tui.widgets.phases import SAID

    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes()))
    monkeypatch.setenv("TRACETUI_DECODE", "native")
    monkeypatch.setattr(scanned, "NATIVE_MIN_BYTES", 0)  # a small trace: the scan reads it all the same
    compiled, release = threading.Event(), threading.Event()
    warm = scanned.warm

    def slow_warm() -> None:  # the compile, held until the bar has been read
        release.wait(30)
        warm()
        compiled.set()

    monkeypatch.setattr(scanned, "_compiles_first", lambda scan: not compiled.is_set())
    monkeypatch.setattr(scanned, "warm", slow_warm)
    app = TraceApp([str(plain)], use_cache=False)
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            deadline = time.monotonic() + 20
            what = ""
            while what != SAID[COMPILING] and time.monotonic() < deadline:
                await pilot.pause(0.05)
                if isinstance(app.screen, LoadingScreen):
                    what = str(app.screen.query_one("#what-decode", Label).render())
            assert what == SAID[COMPILING] and app.screen.query_one("#phase-decode", ProgressBar).total is None
            release.set()
            screen = await wait_for_main(pilot)
            assert isinstance(screen, MainScreen) and screen.timeline.analysis.trace.n == 2060
    finally:
        release.set()
    assert compiled.is_set()
