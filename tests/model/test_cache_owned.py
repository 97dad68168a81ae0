"""The cache removes only what it made: a cache folder that holds the user's files, at every budget."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from conftest import SAMPLES

from tui.cli import main
from tui.model.load import cachedir
from tui.model.load.cachedir import entry_dir
from tui.model.snapshot.cache import entry_of

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "snapshots" / "leak.pickle"
DAYS_AGO = time.time() - 3 * 24 * 3600
HEX = "0123456789abcdef" * 2


def _users_folder(root: Path, folders: int = 30) -> dict[str, bytes]:
    """A folder as a home or ~/.cache is: files named as the cache's own once were, big folders of other tools,
    hash-named folders and files, all days old. Returns every file's path (relative) and content."""
    files = {
        "app.lock": b"pid 1",
        "settings.src.json": b'{"theme": "dark"}',
        ".tmp-build/obj.o": b"\x7fELF",
        ".notes.part": b"half a note",
        ".parts-abcdefgh/keep.txt": b"mine",
        ".tmp-1.2.abcdefgh/keep.txt": b"mine too",
        f"{HEX}/model.bin": b"weights",
        f"{HEX}.lock": b"",
        f"{HEX}.src.json": b"{}",
        f".{HEX}.src.json.1.2.abcdefgh.part": b"x",
        "huggingface/hub/model.safetensors": os.urandom(200_000),
        "pip/http/wheel": os.urandom(100_000),
        "torch/kernels/cache.bin": os.urandom(50_000),
        "projects/thesis.tex": b"\\documentclass{article}",
        "photos/cat.jpg": os.urandom(30_000),
    }
    files |= {f"folder{k:04d}/f.txt": str(k).encode() for k in range(folders)}
    for name, data in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    for p in [*root.rglob("*"), root]:
        os.utime(p, (DAYS_AGO, DAYS_AGO), follow_symlinks=False)
    return files


def _unchanged(root: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        assert (root / name).read_bytes() == data, f"{name} was removed or changed"


def _run_many(tmp_path: Path, capsys, n: int = 3) -> list[Path]:
    """Open n traces (each a cache entry, the older ones pruned) and a snapshot."""
    paths = []
    for k in range(n):
        p = tmp_path / "traces" / f"t{k}.json.gz"
        p.parent.mkdir(exist_ok=True)
        shutil.copy(SAMPLES / "h100-bert-small.json.gz", p)
        os.utime(p, (k + 1, k + 1))
        assert main(["summary", str(p)]) == 0
        paths.append(p)
    assert main(["memory", str(SNAPSHOT)]) == 0
    capsys.readouterr()
    return paths


@pytest.mark.parametrize("budget_gb", [None, "0.001", "0"])
def test_a_folder_of_the_users_files_loses_nothing_at_any_budget(tmp_path, monkeypatch, capsys, budget_gb):
    home = tmp_path / "home"
    files = _users_folder(home)
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(home))
    if budget_gb is not None:
        monkeypatch.setenv("TRACETUI_CACHE_MAX_GB", budget_gb)
    monkeypatch.setattr(cachedir, "KEEP_ENTRIES", 1)
    monkeypatch.setattr(cachedir, "LEFTOVER_AGE_S", 0.0)  # every leftover is old enough to go
    _run_many(tmp_path, capsys)
    _unchanged(home, files)
    root = cachedir.cache_root()
    assert root == home / "tracetui" and cachedir.is_tagged(root)
    assert entry_of(SNAPSHOT).is_dir()  # the newest entry always stays
    assert sorted(p.name for p in home.iterdir()) == sorted({n.split("/")[0] for n in files} | {"tracetui"})
    assert entry_of(SNAPSHOT).parent == root


def test_the_default_budget_with_many_user_folders(tmp_path, monkeypatch, capsys):
    """1,030 folders of the user's (more than the entries kept) beside the cache: none counts as an entry."""
    home = tmp_path / "home"
    files = _users_folder(home, folders=1030)
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(home))
    _run_many(tmp_path, capsys, n=2)
    _unchanged(home, files)


def test_a_folder_taken_when_empty_keeps_what_the_user_puts_in_it_later(tmp_path, monkeypatch, capsys):
    """An empty folder becomes the cache itself; files the user adds later, even by the cache's own names, are
    never counted or removed: only tagged entries and tracetui's strict temporary names are."""
    home = tmp_path / "empty"
    home.mkdir()
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(home))
    monkeypatch.setenv("TRACETUI_CACHE_MAX_GB", "0")
    monkeypatch.setattr(cachedir, "LEFTOVER_AGE_S", 0.0)
    _run_many(tmp_path, capsys, n=1)
    assert cachedir.cache_root() == home and cachedir.is_tagged(home)
    files = _users_folder(home)
    paths = _run_many(tmp_path, capsys, n=3)
    _unchanged(home, files)
    entries = [p.name for p in home.iterdir() if cachedir.ENTRY.match(p.name) and cachedir.is_tagged(p)]
    assert entries == [entry_of(SNAPSHOT).name] and not entry_dir(paths[-1]).exists()  # budget 0: the newest


def test_a_subfolder_named_tracetui_that_is_not_its_own_is_not_used(tmp_path, monkeypatch, capsys):
    """A clone of the project in a folder named as the cache's subfolder: nothing cached, nothing touched."""
    home = tmp_path / "src"
    files = _users_folder(home, folders=2)
    clone = {"tracetui/README.md": b"# tracetui", "tracetui/.git/HEAD": b"ref: refs/heads/main"}
    for name, data in clone.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_bytes(data)
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(home))
    monkeypatch.setenv("TRACETUI_CACHE_MAX_GB", "0")
    trace = tmp_path / "t.json.gz"
    shutil.copy(SAMPLES / "h100-bert-small.json.gz", trace)
    assert main(["summary", str(trace)]) == 0
    _unchanged(home, files | clone)
    assert sorted(p.name for p in (home / "tracetui").rglob("*")) == [".git", "HEAD", "README.md"]


def test_a_link_to_a_folder_of_other_files_is_used_through_a_subfolder(tmp_path, monkeypatch, capsys):
    etc = tmp_path / "etc"
    files = _users_folder(etc, folders=2)
    link = tmp_path / "cache-link"
    link.symlink_to(etc)
    monkeypatch.setenv("TRACETUI_CACHE_DIR", str(link))
    monkeypatch.setenv("TRACETUI_CACHE_MAX_GB", "0")
    monkeypatch.setattr(cachedir, "LEFTOVER_AGE_S", 0.0)
    _run_many(tmp_path, capsys, n=2)
    _unchanged(etc, files)
    assert cachedir.cache_root() == link / "tracetui" and cachedir.is_tagged(etc / "tracetui")


def test_the_cache_key_sees_content_replaced_under_the_same_size_and_mtime(tmp_path):
    from tui.model import load_trace

    a = tmp_path / "a.json.gz"
    shutil.copy(SAMPLES / "h100-bert-small.json.gz", a)
    first = load_trace(a)
    st = a.stat()
    data = bytearray(a.read_bytes())
    other = (SAMPLES / "v100-2021-small.json.gz").read_bytes()
    data[: len(other)] = other  # another trace in the same bytes: same size, then the same mtime
    a.write_bytes(bytes(data))
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert a.stat().st_size == st.st_size and a.stat().st_mtime_ns == st.st_mtime_ns
    again = load_trace(a)
    assert not again.report.from_cache and again.n != first.n
