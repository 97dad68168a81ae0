"""The compiled scan made ready without a wait: the default decode (TRACETUI_DECODE unset) reads with the scan where
numba is installed and has compiled it, and compiles it behind the user's back where it has not.

numba compiles the scan (scan.py) and the nesting (nesting_compiled.py) the first time they run: 20 s to over a
minute of one core. TRACETUI_DECODE=native waits for that before its first load; the default never does. The first
trace big enough for the scan (scanned.NATIVE_MIN_BYTES) that finds numba installed and the scan not yet compiled
reads with msgspec, and starts native_compile.py as a process of its own (niced, in its own session, its output nowhere),
which compiles both into numba's cache and then writes MARK in tracetui's cache folder. Every load after that sees
MARK and reads with the scan, numba loading it from its cache in about 0.3 s. MARK names what it was made for (this
Python, numba's files, the two sources: `key()`); anything else there, or a compile that failed (MARK says so, and
no compile is started again for the same key), leaves the default on msgspec. One compile at a time (LOCK holds the
compiling process's id).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

MARK = ".tracetui-native"  # in the cache folder: "ready KEY" or "failed KEY"
LOCK = ".tracetui-native-compiling"  # the compiling process's id, while it compiles
LOCK_STALE_S = 30 * 60  # a lock this old is a compile that never finished (a killed machine): taken over
HERE = Path(__file__).resolve().parent
SOURCES = (HERE / "scan.py", HERE.parent / "nesting_compiled.py")  # what numba compiles (their stamps key MARK)
_STARTED: list[bool] = []  # a compile started by this process (once per process)


def numba_origin() -> str | None:
    """numba's __init__.py where numba is installed, found without importing it (0.1 ms); else None."""
    try:
        spec = importlib.util.find_spec("numba")
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None else None


def key() -> str | None:
    """What a compile is for: this Python, numba's files and the compiled sources as they are (sizes, mtimes); None
    where numba is not installed or a file cannot be read."""
    origin = numba_origin()
    if origin is None:
        return None
    parts = [f"py{sys.version_info[0]}.{sys.version_info[1]}"]
    try:
        for path in (Path(origin), *SOURCES):
            st = path.stat()
            parts.append(f"{path.name}:{st.st_size}:{st.st_mtime_ns}")
    except OSError:
        return None
    return "|".join(parts)


def writable_root() -> Path | None:
    """tracetui's cache folder, where MARK and LOCK live (None: there is none that can be written, or the load
    running here keeps out of it: cachedir.kept_out)."""
    from .cachedir import cache_root, ensure_root

    try:
        return cache_root() if ensure_root() else None
    except OSError:
        return None


def _said(root: Path) -> str:
    try:
        return (root / MARK).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def ready() -> bool:
    """Whether numba has compiled the scan for the code and numba here (MARK says so for this key); nothing made."""
    from .cachedir import cache_root

    k = key()
    return k is not None and _said(cache_root()) == f"ready {k}"


def compile_behind() -> bool:
    """Start the compile in a process of its own where one is due (compile_due); True: one was started (the caller
    says so)."""
    if compile_due() is None:
        return False
    _STARTED.append(True)
    try:
        subprocess.Popen(  # noqa: S603 - this Python, this module
            [sys.executable, "-m", f"{__package__}.native_compile"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a closed terminal (SIGHUP to the group) or Ctrl-C does not reach it
            close_fds=True,
        )
    except OSError:
        return False
    return True


def compile_due() -> Path | None:
    """The cache folder a compile started now would mark (MARK), where one is due: numba is installed, this process
    started none, none for this key failed or runs, and the cache folder may be written (not by a load that keeps out
    of it, --no-cache: writable_root); else None."""
    k = key()
    if k is None or _STARTED:
        return None
    folder = writable_root()
    if folder is None or _said(folder) in (f"ready {k}", f"failed {k}") or _locked(folder):
        return None
    return folder


def _locked(root: Path) -> bool:
    """Whether a live process holds LOCK (one younger than LOCK_STALE_S)."""
    try:
        text = (root / LOCK).read_text(encoding="ascii")
        age = time.time() - (root / LOCK).stat().st_mtime
        pid = int(text.strip())
        os.kill(pid, 0)
    except (OSError, ValueError):  # no lock, an unreadable one, or its process gone
        return False
    return age < LOCK_STALE_S


def take_lock(root: Path) -> bool:
    """Take LOCK for this process (a stale one taken over); False: another compiles now."""
    for _ in range(2):
        try:
            fd = os.open(root / LOCK, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            if _locked(root):
                return False
            (root / LOCK).unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(f"{os.getpid()}\n")
        return True
    return False


def mark_ready() -> None:
    """Say in MARK that numba has compiled the scan for this key (a TRACETUI_DECODE=native load compiled it, or
    loaded it from numba's cache); nothing where MARK says so already."""
    k = key()
    folder = writable_root() if k is not None else None
    if folder is not None and _said(folder) != f"ready {k}":
        try:
            write_mark(folder, f"ready {k}")
        except OSError:
            pass


def write_mark(root: Path, text: str) -> None:
    tmp = root / f"{MARK}.{os.getpid()}"
    tmp.write_text(text + "\n", encoding="utf-8")
    os.replace(tmp, root / MARK)
