"""Random key walks: seeded sequences of the app's live keys on real traces; nothing may end the app or fail.

The keys come from the bindings of every screen and widget (so a new binding is walked at once),
plus what a user types into the search box, the filters and the command palette. Quitting is
recorded instead of done, so q is walked too. A failure the app contained still fails here: the
log file must stay empty. `pytest -m soak` walks ten more seeds, each five times longer.
"""

from __future__ import annotations

import os
import random
import zlib

import pytest
from conftest import SAMPLES, press_settled, wait_for_main
from textual.binding import Binding

from tui.app import TraceApp
from tui.app.bindings import bound_classes
from tui.appkit import faults
from tui.screens.compare import CompareScreen
from tui.screens.main import MainScreen

BERT = SAMPLES / "h100-bert-small.json.gz"  # with stacks, memory and shapes
CPU = SAMPLES / "cpu" / "attn_sdpa_math.json.gz"  # CPU only, with stacks
RANKS = SAMPLES / "hta-2rank"  # a folder of two ranks
PAIR = (SAMPLES / "cpu" / "matmul_add_64_warm_eager.json.gz", SAMPLES / "cpu" / "matmul_add_64_warm_compiled.json.gz")
TYPED = list("aten:mx.*") + ["backspace"]  # what a user types into the search box, a filter or the palette
EXTRA = ["ctrl+p", "escape", "enter", "tab", "question_mark", "p", "2", "p", "space"]


def live_keys() -> list[str]:
    """Every key some binding of the app's screens and widgets answers to."""
    keys = {
        k.strip()
        for c in bound_classes(TraceApp)
        for b in c.BINDINGS
        if isinstance(b, Binding)
        for k in b.key.split(",")
    }
    return sorted(keys)


def walk_keys(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    pool = live_keys() + EXTRA + TYPED
    return [rng.choice(pool) for _ in range(n)]


async def walk(paths: list[str], size: tuple[int, int], seed: int, n: int, compare: bool = False) -> list[str]:
    """Press n seeded keys; the app must still run, and no failure may have been logged. The keys pressed."""
    app = TraceApp(paths, use_cache=False, compare=compare)
    quits: list[int] = []
    app.exit = lambda *a, **k: quits.append(1)  # type: ignore[method-assign]  # q is walked, not obeyed
    keys = walk_keys(seed, n)
    async with app.run_test(size=size) as pilot:
        await wait_for_main(pilot, settled=seed % 2 == 0)  # odd seeds walk while the analyses still run
        for k, key in enumerate(keys):
            await pilot.press(key)
            if k % 10 == 9:
                await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert app.is_running and app._exception is None, keys
        assert any(isinstance(s, (MainScreen, CompareScreen)) for s in app.screen_stack)
    assert not faults.log_path().exists(), (keys, faults.log_path().read_text()[-3000:])
    return keys


CASES = {
    "with-stack": [str(BERT)],
    "cpu-only": [str(CPU)],
    "ranks": [str(RANKS)],
}
SIZES = [(160, 45), (80, 24)]
LENGTH = 60
SOAK_SEEDS = int(os.environ.get("TRACETUI_SOAK_SEEDS", "10"))


def seed_of(case: str, size: tuple[int, int], k: int) -> int:
    return k * 7919 + zlib.crc32(case.encode()) % 1000 + size[0]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("case", list(CASES))
async def test_a_random_key_walk_never_ends_the_app(case, size):
    await walk(CASES[case], size, seed_of(case, size, 0), LENGTH)


@pytest.mark.soak
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("k", range(1, SOAK_SEEDS + 1))
async def test_a_long_key_walk_soak(case, size, k):
    """pytest -m soak: ten more seeds (TRACETUI_SOAK_SEEDS) of walks five times as long."""
    await walk(CASES[case], size, seed_of(case, size, k), LENGTH * 5)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_a_random_key_walk_on_the_compare_screen(size):
    await walk([str(p) for p in PAIR], size, 11 + size[0], LENGTH, compare=True)


async def test_tree_then_p_then_p_again_keeps_one_tree():
    """The first crash a beginner met: 2 (tree), then p, used to mount a second tree and end the app."""
    from tui.widgets.tree_view import CallTreeView

    app = TraceApp([str(BERT)], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        hidden = screen.hide_python
        await pilot.press("2")
        await pilot.pause()
        for _ in range(3):
            await press_settled(pilot, "p")
            assert len(screen.query(CallTreeView)) == 1
        assert screen.hide_python is not hidden and app.is_running
        assert screen.query_one(CallTreeView).calltree.a is screen.structure
