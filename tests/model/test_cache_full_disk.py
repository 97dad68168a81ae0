"""A .json.gz whose cache is on a full disk is read in memory (within the memory's limit), as with --no-cache.

On a small tmpfs where the test may mount one (root, or a user namespace), else skipped with the reason."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import SAMPLES

from tui.cli import main
from tui.model.load import guard

BERT = SAMPLES / "h100-bert-small.json.gz"  # 71 KB, 1.1 MB unzipped


@pytest.fixture
def small_disk(tmp_path):
    """A 5 MB tmpfs, unmounted after."""
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=5m", "tmpfs", str(disk)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"no tmpfs can be mounted here ({done.stderr.strip() or 'mount failed'})")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _fill(disk: Path, leave: int) -> None:
    """Fill the disk but `leave` bytes."""
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    (disk / "filler").write_bytes(b"\0" * max(free - leave, 0))


def _summary(capsys, *more: str) -> tuple[dict, str]:
    assert main(["summary", str(BERT), "--format", "json", *more]) == 0
    out, err = capsys.readouterr()
    return json.loads(out), err


@pytest.mark.parametrize("leave", [0, 300_000])
def test_a_full_disk_reads_the_gzip_in_memory(small_disk, monkeypatch, capsys, leave):
    """No room at all (the cache folder cannot even be made), or too little for the unzipped trace (half the
    free disk is its limit there): the trace reads in memory and says nothing was cached."""
    want, _ = _summary(capsys, "--no-cache")
    _fill(small_disk, leave)
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(small_disk / "cache"))
    got, err = _summary(capsys)
    assert got == want
    assert "nothing was cached" in err and err.count("\n") == 1
    assert not list(small_disk.rglob("*.json"))  # no half-unzipped file left


def test_a_disk_that_fills_while_the_trace_is_unzipped_goes_on_in_memory(small_disk, monkeypatch, capsys):
    """The disk's limit let it start (as if another process freed room, then took it): the write that fails
    with ENOSPC hands what was written back to memory, and the read goes on."""
    want, _ = _summary(capsys, "--no-cache")
    _fill(small_disk, 400_000)
    real = guard.inflate_limit
    monkeypatch.setattr(guard, "inflate_limit", lambda to: (1 << 40, "test") if to is not None else real(None))
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(small_disk / "cache"))
    got, err = _summary(capsys)
    assert got == want and "nothing was cached" in err
    assert not list(small_disk.rglob("*.part")) and not list(small_disk.rglob("*.json"))


def test_past_the_memorys_limit_too_it_is_refused_in_one_line(small_disk, monkeypatch, capsys):
    _fill(small_disk, 300_000)
    monkeypatch.setattr(guard, "memory_available", lambda: 2_000_000)  # a quarter: 500 KB, less than 1.1 MB
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(small_disk / "cache"))
    assert main(["summary", str(BERT)]) == 2
    err = capsys.readouterr().err
    assert "inflates past 488.3 KiB" in err and "the disk could not take it" in err and err.count("\n") == 1
