"""No control sequence from a trace reaches the terminal through the viewer: traces whose every shown name (ops,
kernels, annotations, Python frames, threads, processes, args) and file name carry escape sequences, C0/C1 controls,
bidi overrides and wide characters (tests/hostile.py), opened and walked through every view's key, a row selected
(the details panel), the help and the search; what the screen would send to the terminal is read from Textual's
compositor, as the terminal would get it.

Twice: with the app's line filter (tui/widgets/visible.py, the net under every widget, Textual's own included), and
without it, so that each widget's own text building is held to it too (that is what keeps wide names aligned)."""

from __future__ import annotations

import pickle
import random
import shutil

import pytest
from conftest import screen_text, wait_for_main
from hostile import SAMPLES, hostile, hostile_trace, leaks
from rich.cells import cell_len
from rich.segment import Segment
from textual.color import Color

from tui.app import TraceApp
from tui.views.registry import COMPARE, MAIN
from tui.widgets import visible as net
from tui.widgets.lazy_table import LazyTable

AFTER_EACH_VIEW = (["down", "down", "enter"], ["j", "j"], ["question_mark"], ["escape"], ["slash", "a", "escape"])


def said(app) -> str:
    """The titles and notifications the app holds (the header and toasts draw them)."""
    notes = " ".join(f"{n.title} {n.message}" for n in app._notifications)
    return f"{app.title} {app.sub_title} {app.screen.title} {app.screen.sub_title} {notes}"


async def walk(app, keys: list[str], pilot) -> dict[str, list[str]]:
    """Each view key, then what a user does in a view; the unsafe characters seen after each, by view."""
    found: dict[str, list[str]] = {}
    for key in keys:
        for then in ([key], *AFTER_EACH_VIEW):
            await pilot.press(*then)
            await app.workers.wait_for_complete()
            await pilot.pause()
            bad = leaks(screen_text(app)) + leaks(said(app))
            if bad:
                found.setdefault(key, []).extend(bad)
    return found


@pytest.fixture(params=["net", "builders"])
def mode(request, monkeypatch) -> str:
    """net: as the app runs; builders: the line filter off, each widget's own text building alone."""
    if request.param == "builders":
        monkeypatch.setattr(net.VisibleFilter, "apply", lambda self, segments, background: segments)
    return request.param


@pytest.mark.parametrize(
    "sample",
    ["cuda-h200/matmul_add_64_warm_eager_stack.json.gz", "b300-moe-small.json.gz", "h100-bert-small.json.gz"],
)
async def test_every_view_of_a_hostile_trace(tmp_path, sample, mode):
    path = hostile_trace(tmp_path, sample, seed=11)
    app = TraceApp([str(path)], use_cache=False)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_for_main(pilot)
        found = await walk(app, [s.key for s in MAIN], pilot)
    assert not found, f"{mode}: {found}"


async def test_every_view_of_two_hostile_traces_compared(tmp_path, mode):
    a = hostile_trace(tmp_path, "b300-moe-small.json.gz", seed=12)
    b = hostile_trace(tmp_path, "b300-moe-small.json.gz", seed=13)
    app = TraceApp([str(a), str(b)], use_cache=False, compare=True)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_for_main(pilot)
        found = await walk(app, [s.key for s in COMPARE], pilot)
    assert not found, f"{mode}: {found}"


async def test_a_hostile_folder_of_ranks(tmp_path, mode):
    ranks = tmp_path / "ranks-\x1b[2J"
    ranks.mkdir()
    for k in (0, 1):
        shutil.move(hostile_trace(tmp_path, f"hta-2rank/sampled_rank-{k}.json.gz", seed=20 + k), ranks / f"r{k}.json")
    app = TraceApp([str(ranks)], use_cache=False)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_for_main(pilot)
        found = await walk(app, ["5"], pilot)  # the overview: the job's ranks
    assert not found, f"{mode}: {found}"


async def test_a_hostile_snapshot(tmp_path, mode):
    rng = random.Random(30)

    def walk_doc(x):
        if isinstance(x, dict):
            return {
                k: hostile(rng, v) if k in ("name", "filename") and isinstance(v, str) else walk_doc(v)
                for k, v in x.items()
            }
        return [walk_doc(v) for v in x] if isinstance(x, list) else x

    src = SAMPLES.parent / "tests" / "data" / "snapshots" / "leak.pickle"
    path = tmp_path / "leak-\x1b]0;T\x07.pickle"
    path.write_bytes(pickle.dumps(walk_doc(pickle.loads(src.read_bytes()))))  # noqa: S301 - the project's test data
    app = TraceApp([str(path)], use_cache=False)
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.pause(0.5)
        await app.workers.wait_for_complete()
        await pilot.pause()
        found = await walk(app, ["1", "2", "3"], pilot)
        assert "leak" in screen_text(app) + said(app)  # the snapshot is open, not an error
    assert not found, f"{mode}: {found}"


def test_the_net_shows_escapes_and_keeps_the_lines_width():
    line = [Segment("ab\x1b]0;T\x07c"), Segment("注意\u202e"), Segment("  end")]
    shown = net.VisibleFilter().apply(line, Color(0, 0, 0))
    assert not leaks("".join(s.text for s in shown))
    assert sum(s.cell_length for s in shown) == sum(s.cell_length for s in line)
    plain = [Segment("aten::mm   1.5ms")]
    assert net.VisibleFilter().apply(plain, Color(0, 0, 0)) is plain  # nothing to show: the line as it was


async def test_wide_names_keep_the_viewers_tables_aligned(tmp_path):
    """The ops and kernels tables: every row's name column (the frozen part) and every row take the same cells."""
    path = hostile_trace(tmp_path, "b300-moe-small.json.gz", seed=14)
    app = TraceApp([str(path)], use_cache=False)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_for_main(pilot)
        for key in ("3", "4"):
            await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause()
            table = next(t for t in app.screen.query(LazyTable) if t.display and t.region.area)
            rows = [table.render_line(y) for y in range(min(table.row_count, 20) + 1)]
            frozen = {list(strip)[0].cell_length for strip in rows}
            assert len(frozen) == 1, frozen
            assert {strip.cell_length for strip in rows} == {table.scrollable_content_region.width}
            names = "".join(list(strip)[0].text for strip in rows)
            assert any(cell_len(ch) == 2 for ch in names)  # wide characters are in the names


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_real_terminal_keeps_its_title_and_clipboard(tmp_path):
    """In tmux (clipboard writes on, as a user's terminal may have them), a hostile trace's kernels report and its
    viewer walked through every view leave the pane's title and tmux's paste buffers as they were (before the
    sanitizer: the title read PWNED-TITLE and nine buffers held "echo pwned" from one kernels report)."""
    import subprocess
    import sys
    import time
    import uuid

    from conftest import ROOT, isolated_env

    socket, session = f"tracetui-safe-{uuid.uuid4().hex[:6]}", "s"
    path = hostile_trace(tmp_path, "b300-moe-small.json.gz", seed=3)

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, check=True).stdout

    def run(command: str) -> None:
        line = f"cd {ROOT} && {isolated_env(TRACETUI_COLUMNS='0')} {sys.executable} -m tui {command}; "
        line += "echo TRACETUI-EXIT=$?; sleep 60"
        tmux("respawn-pane", "-k", "-t", session, line)

    def shown(text: str) -> None:
        """Wait until the pane shows text (a loaded machine starts the viewer late: no fixed sleep is enough)."""
        deadline = time.monotonic() + 90
        while text not in tmux("capture-pane", "-p", "-t", session):
            assert time.monotonic() < deadline, f"{text!r} never appeared in the pane"
            time.sleep(0.2)

    tmux("new-session", "-d", "-s", session, "-x", "150", "-y", "40", "sleep 120")
    try:
        tmux("set", "-g", "set-clipboard", "on")
        title = tmux("display", "-p", "-t", session, "#{pane_title}")
        run(f"kernels '{path}' --no-cache")
        shown("TRACETUI-EXIT=0")
        run(f"open '{path}' --no-cache")
        shown("Timeline")
        for key in [s.key for s in MAIN]:
            tmux("send-keys", "-t", session, key)
            time.sleep(1.0)
            tmux("send-keys", "-t", session, "Down", "Down", "Enter")
            time.sleep(0.5)
        shown("Timeline")  # the viewer is up (its last keys may still be drawing on a busy machine)
        assert tmux("display", "-p", "-t", session, "#{pane_title}") == title
        assert tmux("list-buffers") == ""
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)
