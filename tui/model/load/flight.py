"""One at a time: callers of the same work share one run of it, one writer per cache entry holds its lock file,
and each writer writes under a temporary name of its own.

SingleFlight gives the callers that ask for a key while its work runs that run's outcome (its value, or its
exception), as Go's singleflight does: the front door opens a trace once for every thread that asked at the
same moment, and the MCP server loads a trace once for the calls that wait on it. one_writer() holds a cache
entry for one writer, across the threads of a process (a lock per key) and across processes (flock on a lock
file beside the entry): the others wait, then read what it wrote. A killed holder's flock goes with its
process. private_file() names a writer's temporary file by its process, its thread and a random part, so
no two writers ever write one file, and a rename puts only whole files in place. Where no lock can be had (a file system without flock, or a holder that outlasts the wait), the
writer goes on anyway: the cache's writes are renames of whole files and tolerate another writer.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")
POLL_S = (0.005, 0.2)  # the first and the longest pause between tries of a lock file another process holds


class SingleFlight(Generic[T]):
    """Callers of do(key, fn) while a call with that key runs wait for it and share its outcome; the next call
    after it ends runs fn again (nothing is kept). A run ended by a BaseException (an interrupt) is not shared:
    each waiter runs fn itself."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._running: dict[Hashable, Future[T]] = {}

    def do(self, key: Hashable, fn: Callable[[], T]) -> T:
        while True:
            with self._guard:
                running = self._running.get(key)
                if running is None:
                    mine: Future[T] = Future()
                    self._running[key] = mine
            if running is None:
                return self._lead(key, mine, fn)
            try:
                return running.result()
            except _Abandoned:
                continue

    def _lead(self, key: Hashable, mine: Future[T], fn: Callable[[], T]) -> T:
        try:
            value = fn()
        except Exception as exc:
            mine.set_exception(exc)
            raise
        except BaseException:
            mine.set_exception(_Abandoned())
            raise
        else:
            mine.set_result(value)
            return value
        finally:
            with self._guard:
                del self._running[key]


class _Abandoned(Exception):
    """The leading call was interrupted: its waiters run the work themselves."""


class _KeyedLocks:
    """A threading.Lock per key, dropped when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, list[int]]] = {}

    @contextmanager
    def hold(self, key: str, timeout: float, on_wait: Callable[[], None]) -> Iterator[bool]:
        with self._guard:
            lock, users = self._locks.setdefault(key, (threading.Lock(), [0]))
            users[0] += 1
        got = lock.acquire(blocking=False)
        if not got:
            on_wait()
            got = lock.acquire(timeout=max(timeout, 0))
        try:
            yield got
        finally:
            if got:
                lock.release()
            with self._guard:
                users[0] -= 1
                if not users[0]:
                    del self._locks[key]


_THREADS = _KeyedLocks()


@contextmanager
def one_writer(lock_file: Path, wait_s: float, on_wait: Callable[[], None] | None = None) -> Iterator[bool]:
    """Hold lock_file for one writer among this process's threads and other processes, waiting up to wait_s for
    the holder (on_wait called once, when the wait starts); yields whether it is held (False: the block runs
    unguarded)."""
    deadline = time.monotonic() + wait_s
    told = _once(on_wait)
    with _THREADS.hold(str(lock_file), wait_s, told) as in_process:
        fd = _flock(lock_file, deadline, told) if in_process else None
        try:
            yield in_process and fd is not None
        finally:
            if fd is not None:
                os.close(fd)  # closing the last descriptor of the open file releases its flock


def _once(fn: Callable[[], None] | None) -> Callable[[], None]:
    """fn, called at most once (nothing when None)."""
    called: list[bool] = []

    def once() -> None:
        if fn is not None and not called:
            called.append(True)
            fn()

    return once


def _flock(path: Path, deadline: float, on_wait: Callable[[], None]) -> int | None:
    """An open descriptor of path holding its flock (None: the file system has no flock, or the wait ran out).

    A lock file may be removed (see remove_lock) while a process waits on it: the lock it then gets is on a
    file no longer there, so it opens the one now in place and tries again."""
    try:
        import fcntl
    except ImportError:  # no flock on this platform: the threads of this process are still one at a time
        return None
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return None
        if not _wait_for(fd, fcntl, deadline, on_wait):
            os.close(fd)
            return None
        try:
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                os.utime(fd)  # when it was last used: how old lock files are told from live ones
                return fd
        except OSError:
            pass
        os.close(fd)


def _wait_for(fd: int, fcntl, deadline: float, on_wait: Callable[[], None]) -> bool:
    """Take the flock of fd, polling until the deadline (False: it ran out, or this file system has no flock)."""
    pause = POLL_S[0]
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            on_wait()
            if time.monotonic() >= deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, POLL_S[1])
        except OSError:
            return False


def remove_lock(path: Path) -> bool:
    """Remove a lock file unless a writer holds it (it is removed while held, so no writer can take it meanwhile)."""
    try:
        import fcntl

        fd = os.open(path, os.O_RDWR)
    except (ImportError, OSError):
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        path.unlink()
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def writer_tag() -> str:
    """This writer among all: its process and its thread (a temporary name adds a random part)."""
    return f"{os.getpid()}.{threading.get_ident()}"


_TAGGED = re.compile(r"\.(?:tmp|parts)-(\d+)\.\d+\.|.*\.(\d+)\.\d+\.[a-z0-9_]+\.part\Z")  # folders, private files


def writer_of(name: str) -> int | None:
    """The process named in a writer's temporary name (a cache folder `.tmp-TAG.`, a decode's `.parts-TAG.`, a
    private_file), or None."""
    found = _TAGGED.match(name)
    return None if found is None else int(found.group(1) or found.group(2))


def private_file(target: Path, suffix: str = ".part") -> tuple[int, str]:
    """A new file beside target for this writer alone (hidden; process, thread, random part): its descriptor and
    name. Rename it onto target once whole."""
    return tempfile.mkstemp(prefix=f".{target.name}.{writer_tag()}.", suffix=suffix, dir=target.parent)
