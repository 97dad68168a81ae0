"""The default decode (TRACETUI_DECODE unset) reads with the compiled scan once numba has compiled it, and starts
that compile in a process of its own where it has not (load/native_warm.py): never a wait, never twice at once."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from conftest import ROOT, SAMPLES

pytest.importorskip("numba", reason="the compiled scan needs numba (the fast extra)")

from tui.model.errors import said_once  # noqa: E402
from tui.model.load import native_compile, native_warm, scanned  # noqa: E402
from tui.model.load.cachedir import cache_root  # noqa: E402
from tui.model.load.loader import load_trace  # noqa: E402

SAMPLE = SAMPLES / "h100-bert-small.json.gz"


@pytest.fixture
def small_is_big(monkeypatch):
    """Every file big enough for the scan, the default decode asked for, and compiles behind recorded, not run."""
    monkeypatch.delenv("TRACETUI_DECODE", raising=False)
    monkeypatch.setattr(scanned, "NATIVE_MIN_BYTES", 0)
    started: list[bool] = []
    monkeypatch.setattr(native_warm, "compile_behind", lambda: started.append(True) or True)
    said_once.cache_clear()
    return started


def _load() -> tuple[object, dict]:
    scanned.COUNTS.clear()
    trace = load_trace(SAMPLE, use_cache=False)
    return trace, dict(scanned.COUNTS)


def test_by_default_msgspec_reads_until_numba_has_compiled_the_scan_then_the_scan_does(small_is_big):
    with pytest.warns(RuntimeWarning, match="the native decoder .numba. is compiling in the background"):
        first, counts = _load()
    assert counts == {} and small_is_big == [True]  # msgspec read it; the compile was started behind
    native_warm.mark_ready()  # what the compile behind writes when it is done (numba's cache holds the scan here)
    assert native_warm.ready()
    second, counts = _load()
    assert counts.get("scanned", 0) > 0 and set(counts) == {"scanned"}
    assert (second.n, second.names, second.x.ts.tolist()) == (first.n, first.names, first.x.ts.tolist())


def test_msgspec_asked_for_never_scans_nor_compiles(small_is_big, monkeypatch):
    native_warm.mark_ready()
    monkeypatch.setenv("TRACETUI_DECODE", "msgspec")
    assert not scanned.wanted(1 << 40) and small_is_big == []


def test_a_mark_for_other_code_or_another_numba_is_not_ready(small_is_big):
    native_warm.mark_ready()
    mark = cache_root() / native_warm.MARK
    assert mark.read_text().startswith("ready py")
    mark.write_text(mark.read_text().replace("scan.py:", "scan.py:1"))  # the source changed since
    assert not native_warm.ready() and not scanned.asked(1 << 40)


def test_a_mark_that_outlived_numbas_cache_reads_with_msgspec_and_compiles_behind(small_is_big, monkeypatch):
    native_warm.mark_ready()
    monkeypatch.setattr(scanned, "_compiles_first", lambda scan: True)  # numba's cache cleared, or another numba
    assert scanned.asked(1 << 40) and not scanned.wanted(1 << 40)  # no wait for a compile by default
    assert small_is_big == [True]


def test_a_compile_that_failed_is_not_started_again(monkeypatch):
    monkeypatch.setattr(native_warm, "_STARTED", [])

    def broken() -> None:
        raise AssertionError("numba's lowering")

    monkeypatch.setattr(scanned, "warm", broken)
    monkeypatch.setattr(native_compile.os, "nice", lambda n: 0)  # (this test process stays as it is)
    assert native_compile.compile_here() == 1
    assert (cache_root() / native_warm.MARK).read_text().startswith("failed py")
    assert not (cache_root() / native_warm.LOCK).exists()
    assert not native_warm.ready() and native_warm.compile_behind() is False


def test_no_compile_while_another_live_process_compiles(monkeypatch):
    monkeypatch.setattr(native_warm, "_STARTED", [])
    lock = cache_root() / native_warm.LOCK
    lock.write_text(f"{os.getppid()}\n")  # a live process (the one that ran this test)
    assert native_warm.compile_behind() is False and native_compile.compile_here() == 0
    assert not (cache_root() / native_warm.MARK).exists()
    lock.write_text("999999999\n")  # its process gone: the lock is stale
    assert not native_warm._locked(cache_root())


def test_the_compile_behind_runs_detached_and_marks_the_scan_ready(monkeypatch):
    """The real thing: compile_behind starts `python -m tui.model.load.native_compile` in its own session; it compiles
    (or loads numba's cache), writes the mark for this key and lets its lock go. Started once per process."""
    monkeypatch.setattr(native_warm, "_STARTED", [])
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    assert native_warm.compile_behind() is True
    assert native_warm.compile_behind() is False  # once per process
    mark, lock = cache_root() / native_warm.MARK, cache_root() / native_warm.LOCK
    deadline = time.monotonic() + 900  # a cold numba cache on a slow shared host: minutes
    while time.monotonic() < deadline and (not mark.exists() or lock.exists()):
        time.sleep(0.2)
    assert mark.read_text().strip() == f"ready {native_warm.key()}" and not lock.exists()
    assert native_warm.ready()


@pytest.mark.parametrize("flags", [[], ["--no-cache"]], ids=["cache", "no-cache"])
def test_a_big_trace_by_default_says_the_compile_on_the_command_line(tmp_path, flags):
    """The command line says the compile behind in one line on stderr, and reads the trace with msgspec; with
    --no-cache none starts (its mark would be written in the cache folder), and nothing is said."""
    code = (
        "import sys\n"
        "import tui.model.load.scanned as s, tui.model.load.native_warm as w\n"
        "s.NATIVE_MIN_BYTES = 0\n"
        "w.subprocess.Popen = lambda *a, **k: None  # (not run here: the test above runs it)\n"
        "from tui.cli import main\n"
        f"sys.exit(main(['summary', *{flags!r}, {str(SAMPLE)!r}]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRACETUI_DECODE"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == ([] if flags else [f"tracetui: {scanned.BEHIND_NOTE}"])
