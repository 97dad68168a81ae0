"""Shared fixtures: sample and shared trace paths, an isolated cache, inline trace files."""

from __future__ import annotations

import gzip
import json
import os
import shlex
import sys
from decimal import Decimal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_traces"
SHARED = ROOT.parent / "shared" / "traces"
sys.path.insert(0, str(ROOT))  # benchmarks.tile makes big traces for a few tests


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--full",
        action="store_true",
        help="the full set, as CI runs it (README's command): the tests marked full too (mypy, the shared goldens)",
    )


def pytest_collection_modifyitems(config, items) -> None:
    """Soak tests run only when asked for by name (pytest -m soak), never in the ordinary or fast runs; the tests
    marked full only with --full (the default set is the fast one)."""
    left = [] if config.getoption("full") else [item for item in items if "full" in item.keywords]
    if "soak" not in (config.option.markexpr or ""):
        left += [item for item in items if "soak" in item.keywords]
    if left:
        config.hook.pytest_deselected(items=left)
        gone = set(map(id, left))
        items[:] = [item for item in items if id(item) not in gone]


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory, monkeypatch) -> Path:
    from tui.model.load.cachedir import tag

    cache = tmp_path_factory.mktemp("cache")
    tag(cache)  # tracetui's own (its config folder, made inside it first, would make it someone else's)
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(cache))
    monkeypatch.setenv("TRACETUI_CONFIG_DIR", str(cache / "config"))  # no user keymap, a fresh first open
    home = tmp_path_factory.mktemp("home")  # the defaults a bad folder setting falls back to: not the user's
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    from tui.model.load import native_warm

    monkeypatch.setattr(native_warm, "_STARTED", [True])  # no test starts numba's compile behind unless it asks
    if os.environ.get("TRACETUI_TEST_SCAN_ALL"):  # test_scan.py's rerun of other tests: the scan reads every size
        import tui.model.load.scanned

        monkeypatch.setattr(tui.model.load.scanned, "NATIVE_MIN_BYTES", 0)
    return cache


ISOLATED = ("TRACETUI_CACHE_DIR", "TRACETUI_CONFIG_DIR")  # the folders isolated_cache gives every test


def isolated_env(**more: str) -> str:
    """`env ...` for a command line a tmux pane runs: the test's own cache and config folders (isolated_cache's)
    named on the line, since a tmux server runs its commands in the environment it started with, not the test's
    (unnamed, the viewer wrote its legend's marker into the user's config folder); the runner's COLUMNS and LINES
    unset (they would override the pane's size)."""
    names = {k: os.environ[k] for k in ISOLATED} | more
    return "env -u COLUMNS -u LINES " + " ".join(f"{k}={shlex.quote(v)}" for k, v in names.items())


def tmux_server_env(home: Path) -> dict[str, str]:
    """The environment of a tmux server started before the test (the user's own): none of the test's folders, and
    a home of the test's, so that a command that did not name them writes where a test can look (not the user's)."""
    env = {k: v for k, v in os.environ.items() if k not in ISOLATED}
    return env | {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache")}


def shared_traces() -> list[Path]:
    if not SHARED.is_dir():
        return []
    return sorted(p for p in SHARED.glob("*/*") if p.name.endswith((".json", ".gz")))


def shared_params(paths: list[Path]) -> list:
    """The parameters of a test that sweeps shared traces: the paths, or where there are none here (a clone without
    ../shared) one parameter that skips, saying why (pytest's own skip for an empty set names no reason)."""
    if paths:
        return list(paths)
    return [pytest.param(None, id="no-shared-traces", marks=pytest.mark.skip(reason=f"{SHARED} is not here"))]


def raw_events(path: Path, exact: bool = False) -> list[dict]:
    """The events of a trace with the standard library (exact decimals if asked)."""
    opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal if exact else float)
    return doc if isinstance(doc, list) else doc["traceEvents"]


def write_trace(path: Path, events: list[dict], **top) -> Path:
    """Write an inline Kineto-style trace file."""
    path.write_text(json.dumps({"schemaVersion": 1, **top, "traceEvents": events}))
    return path


def X(name, ts, dur, cat="cpu_op", pid=1, tid=1, **args):
    """An inline duration event."""
    ev = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        ev["args"] = {k.replace("_", " "): v for k, v in args.items()}
    return ev


async def wait_for_main(pilot, settled: bool = True):
    """Wait for the loading worker, then for the main (or compare) screen to be up, then (settled) for
    the background analyses to finish."""
    import time

    from tui.screens.compare import CompareScreen
    from tui.screens.main import MainScreen

    loading = [w for w in pilot.app.workers if w.group == "load"]
    if loading:  # an empty list would wait for every worker, the background analyses too
        await pilot.app.workers.wait_for_complete(loading)
    deadline = time.monotonic() + 30  # generous: CI machines can be busy
    while not isinstance(pilot.app.screen, (MainScreen, CompareScreen)) and time.monotonic() < deadline:
        await pilot.pause(0.02)
    await pilot.pause()
    if settled:
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    return pilot.app.screen


@pytest.fixture
def force_workers(monkeypatch) -> list:
    """Decode in two worker processes even small files, in small chunks; returns the worker counts used."""
    import tui.model.load.parse
    import tui.model.load.parts
    import tui.model.load.source

    monkeypatch.setattr(tui.model.load.source, "CHUNK_BYTES", 64 << 10)
    monkeypatch.setattr(tui.model.load.parts, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(tui.model.load.parts.os, "cpu_count", lambda: 2)
    calls: list = []
    real = tui.model.load.parse.decode_parallel

    def counted(*args):
        calls.append(args[2])
        return real(*args)

    monkeypatch.setattr(tui.model.load.parse, "decode_parallel", counted)
    return calls


async def press_settled(pilot, *keys: str) -> None:
    """Press the keys, then wait for every worker they started and for the screen to redraw."""
    await pilot.press(*keys)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def screen_text(app) -> str:
    """What the screen sends to the terminal, less Textual's own control segments (cursor moves), a line a row."""
    update = app.screen._compositor.render_full_update()
    return "\n".join("".join(seg.text for strip in line for seg in strip if not seg.control) for line in update.strips)


async def until(pilot, check, what: str = "", timeout: float = 30.0) -> None:
    """Let the app run until check() holds, as a user waits for the answer on screen (a busy machine is slow)."""
    import time

    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        await pilot.pause(0.02)


@pytest.fixture(params=[0.0, 0.04], ids=["prompt", "slowed"])
def result_delay(request):
    """Each worker's result held back (tui/appkit/pace.py) or not: the orders a busy machine produces, on every run."""
    from tui.appkit import pace

    pace.set_delay(request.param)
    yield request.param
    pace.set_delay(0.0)


def copy_sample(tmp_path, name="b300-moe-small.json.gz"):
    """A sample trace copied into tmp_path/traces (a cache test may write beside it, or change it)."""
    import shutil

    dst = tmp_path / "traces" / name
    dst.parent.mkdir(exist_ok=True)
    shutil.copy(SAMPLES / name, dst)
    return dst
