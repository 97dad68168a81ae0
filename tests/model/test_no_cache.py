"""--no-cache (load_trace(path, use_cache=False)) makes nothing in the cache folder, not even the folder: a load's
scratch (a gzipped trace unzipped, the decode's parts) goes to a private temporary folder that goes with the load,
and no compile of the native decoder starts behind it (cachedir.kept_out)."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES

from tui.model.errors import TraceError
from tui.model.load import cachedir, native_warm, parts, source, spill
from tui.model.load.loader import load_trace

BIG_GZ = SAMPLES / "a100-train-control.json.gz"  # 34 MB unzipped: past source.IN_MEMORY_BYTES, so a scratch file
SMALL_GZ = SAMPLES / "h100-bert-small.json.gz"


def _folders(tmp_path: Path, cache_made: bool = False) -> tuple[Path, Path]:
    """A cache folder (absent, or made empty) and a temporary folder for the scratch, each the test's own."""
    cache, scratch = tmp_path / "cache", tmp_path / "scratch"
    scratch.mkdir()
    if cache_made:
        cache.mkdir()
    return cache, scratch


def _left(folder: Path) -> list[str]:
    """What a folder holds, every file and folder in it (none where it is absent)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def _summary(trace: Path, cache: Path, scratch: Path, *flags: str, **env: str) -> subprocess.CompletedProcess:
    environ = os.environ | {"TRACETUI_CACHE_DIR": str(cache), "TMPDIR": str(scratch)} | env
    return subprocess.run(
        [sys.executable, "-m", "tui", "summary", str(trace), *flags],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def private(monkeypatch, tmp_path) -> tuple[Path, Path]:
    """This process's cache folder asked for where none is, and its temporary folder the test's own."""
    cache, scratch = _folders(tmp_path)
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(cache))
    monkeypatch.setattr(spill.tempfile, "tempdir", str(scratch))
    return cache, scratch


@pytest.mark.parametrize("cache_made", [False, True], ids=["absent", "empty"])
def test_a_gzipped_trace_without_the_cache_leaves_the_cache_folder_as_it_was(tmp_path, cache_made):
    """A first load of it made the folder, tagged, with its folders of locks and unzipped sources, and unzipped the
    trace in a `.parts-*` folder there."""
    cache, scratch = _folders(tmp_path, cache_made)
    without = _summary(BIG_GZ, cache, scratch, "--no-cache")
    assert without.returncode == 0, without.stderr
    assert (cache.exists(), _left(cache), _left(scratch)) == (cache_made, [], [])
    cached = _summary(BIG_GZ, cache, scratch)
    assert (cached.stdout, cached.stderr) == (without.stdout, without.stderr) and cached.stdout
    assert cachedir.TAG in _left(cache)  # (the folder asked for is the one the cache uses)


def test_a_plain_trace_decoded_in_parts_without_the_cache_leaves_no_folder(tmp_path):
    cache, scratch = _folders(tmp_path)
    plain = tmp_path / "trace.json"
    plain.write_bytes(gzip.decompress(BIG_GZ.read_bytes()))
    procs = str(min(2, os.cpu_count() or 1))  # (two processes where there are two cores: the parts are spilled)
    without = _summary(plain, cache, scratch, "--no-cache", TRACETUI_DECODE_PROCS=procs)
    assert without.returncode == 0, without.stderr
    assert (cache.exists(), _left(scratch)) == (False, [])
    cached = _summary(plain, cache, scratch, TRACETUI_DECODE_PROCS=procs)
    assert (cached.stdout, cached.stderr) == (without.stdout, without.stderr) and cached.stdout


def test_the_parts_spilled_without_the_cache_go_to_a_private_temporary_folder(
    private, force_workers, monkeypatch, tmp_path
):
    cache, scratch = private
    plain = tmp_path / "trace.json"
    plain.write_bytes(gzip.decompress(SMALL_GZ.read_bytes()))
    made: list[str] = []
    real = parts.scratch_folder
    monkeypatch.setattr(parts, "scratch_folder", lambda preferred: made.append(real(preferred)) or made[-1])  # (seen)
    trace = load_trace(plain, use_cache=False)
    assert force_workers == [2] and len(made) == 1
    assert Path(made[0]).parent == scratch and Path(made[0]).name.startswith(f"tracetui-parts-{os.getpid()}.")
    assert (cache.exists(), _left(scratch)) == (False, [])
    cached = load_trace(plain)
    assert (trace.n, trace.names, trace.x.ts.tolist()) == (cached.n, cached.names, cached.x.ts.tolist())


def test_a_gzipped_trace_that_fails_to_unzip_without_the_cache_leaves_nothing(private, monkeypatch, tmp_path):
    cache, scratch = private
    monkeypatch.setattr(source, "IN_MEMORY_BYTES", 64 << 10)  # into a scratch file early
    data = bytearray(SMALL_GZ.read_bytes())
    data[-8:-4] = bytes(b ^ 0xFF for b in data[-8:-4])  # its checksum, read when every byte is unzipped
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(data)
    with pytest.raises(TraceError, match="corrupt gzip data"):
        load_trace(bad, use_cache=False)
    assert (cache.exists(), _left(scratch)) == (False, [])


def test_a_stop_while_the_private_scratch_folder_is_made_leaves_none(private, monkeypatch):
    cache, scratch = private
    made = spill.tempfile.mkdtemp

    def made_then_stopped(**kwargs):
        folder = made(**kwargs)
        os.kill(os.getpid(), signal.SIGINT)
        return folder

    monkeypatch.setattr(spill.tempfile, "mkdtemp", made_then_stopped)
    with cachedir.kept_out(), pytest.raises(KeyboardInterrupt):
        spill.scratch_folder(cachedir.cache_root())
    assert (cache.exists(), _left(scratch)) == (False, [])


def test_no_compile_is_due_for_a_load_that_keeps_out_of_the_cache(private, monkeypatch):
    pytest.importorskip("numba", reason="a compile behind is due only where numba is installed")
    cache, _ = private
    monkeypatch.setattr(native_warm, "_STARTED", [])  # (conftest's: none started by this process yet)
    with cachedir.kept_out():
        assert native_warm.compile_due() is None
        native_warm.mark_ready()  # (what TRACETUI_DECODE=native writes once compiled: not here)
    assert not cache.exists()
    assert native_warm.compile_due() == cachedir.cache_root() == cache  # the cache used: due, and the folder made


def test_only_what_runs_in_the_block_keeps_out_of_the_cache(private):
    cache, _ = private
    beside: list[bool] = []
    with cachedir.kept_out():
        assert not cachedir.ensure_root()
        thread = threading.Thread(target=lambda: beside.append(cachedir.ensure_root()))  # a load beside it
        thread.start()
        thread.join()
    assert beside == [True] and cachedir.ensure_root() and cachedir.is_tagged(cache)
