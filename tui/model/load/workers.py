"""Worker processes (the decode's, the ranks'): spawned quietly, and gone with the process that made them.

A worker never handles Ctrl-C itself: the terminal sends SIGINT to the whole process group, and the parent's
KeyboardInterrupt already stops the load (the queued jobs are dropped, the running ones waited for). A worker that
took it too printed its own traceback ("Process SpawnProcess-1: ... KeyboardInterrupt") while it started or sat idle.
A worker is spawned with the stops (SIGINT, SIGTERM, SIGHUP) blocked, a mask that survives the exec (quiet_spawns); its
initializer ignores SIGINT, then unblocks them, so a Ctrl-C that reaches it before is dropped there and a kill then
takes effect. And a worker whose parent is gone (SIGKILL, the out-of-memory killer) exits, rather than keep the
command's output open.
"""

from __future__ import annotations

import functools
import os
import signal
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ast
    from concurrent.futures import ProcessPoolExecutor

PARENT_CHECK_S = 0.5  # how often a worker looks for its parent
STUCK_S = 2.0  # a worker gone this long while the pool's manager thread still runs: that thread is stuck (watch)
FREE_S = 5.0  # how long watch feeds a stuck manager thread before it gives up


def worker_pool(processes: int, setup: Callable[[], None] | None = None) -> ProcessPoolExecutor:
    """A pool of spawned worker processes, each running setup (a module's function) first; processes start as
    jobs are submitted (see quiet_spawns)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if main_runs_unguarded():
        _tell_unguarded()
        raise OSError("the main script is not guarded: a spawned worker would run it again")  # callers: one process
    context = multiprocessing.get_context("spawn")
    start_tracker()
    pool = ProcessPoolExecutor(processes, mp_context=context, initializer=_worker_start, initargs=(os.getpid(), setup))
    threading.Thread(target=watch, args=(pool,), daemon=True, name="pool-watch").start()
    return pool


def watch(pool: ProcessPoolExecutor) -> None:
    """Free the pool's manager thread when a worker died in the middle of sending its result (a closed terminal's
    SIGHUP to the whole group, the out-of-memory killer): that thread then waits for the rest of the message for
    ever, in `recv`, where it sees no worker end, and this process waits for it (shutdown, the exit: a hang, 1 of
    40 hang-ups of a 100 MB first load). Any other time the thread sees a worker end within milliseconds, marks the
    pool broken and ends; so a worker gone STUCK_S while the thread runs means it is stuck, and bytes written to
    the result pipe end the message it waits for: its unpickling fails, and it breaks the pool as it would have."""
    owner: weakref.ref = weakref.ref(pool)
    del pool  # nothing of the pool is held here between looks: its queues' semaphores go with it (a process
    # that ends with os._exit while they live leaves them to the resource tracker, which says they leaked)
    ran: weakref.ref | None = None
    gone_at = None
    while True:
        time.sleep(STUCK_S / 8)
        if ran is None:
            held = owner()
            manager = manager_of(held) if held is not None else None
            if manager is None and (held is None or getattr(held, "_shutdown_thread", False)):
                return  # no job was ever submitted
            ran = weakref.ref(manager) if manager is not None else None
            del held, manager
            continue
        manager = ran()
        if manager is None or not manager.is_alive():
            return
        if gone_at is None and any(_ended(p) for p in list(getattr(manager, "processes", {}).values())):
            gone_at = time.monotonic()
        if gone_at is not None and time.monotonic() - gone_at > STUCK_S:
            _feed(manager)
            return
        del manager


def _ended(process) -> bool:
    try:
        return process.exitcode is not None
    except ValueError:  # closed: ended
        return True


def _feed(manager: threading.Thread) -> None:
    """Write zeros to the result pipe until the manager thread ends (FREE_S at most); never blocks."""
    try:
        fd = manager.result_queue._writer.fileno()  # type: ignore[attr-defined]
        os.set_blocking(fd, False)
    except (OSError, ValueError):
        return
    zeros, until = bytes(1 << 16), time.monotonic() + FREE_S
    while manager.is_alive() and time.monotonic() < until:
        try:
            os.write(fd, zeros)
        except BlockingIOError:
            time.sleep(0.005)
        except OSError:
            return


def start_tracker() -> None:
    """Start multiprocessing's resource tracker (the pools' semaphores are its to remove if this process dies), deaf
    to SIGHUP. It ignores SIGINT and SIGTERM, not SIGHUP: a closed terminal (SIGHUP to the whole group) ended it
    with the command, which then started another and printed five "KeyError: '/mp-...'" tracebacks, or left the
    semaphores in /dev/shm. Spawned with SIGHUP blocked, it keeps that mask (its own start unblocks only the two);
    a SIGHUP to this thread meanwhile waits, not lost."""
    from multiprocessing import resource_tracker

    hup = getattr(signal, "SIGHUP", None)
    if hup is None or not hasattr(signal, "pthread_sigmask"):
        resource_tracker.ensure_running()
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {hup})
    try:
        resource_tracker.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


STOPS = [s for s in (signal.SIGINT, getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None]


@contextmanager
def held_stops() -> Iterator[list[int]]:
    """Within this block, the stops this (main) thread would raise (KeyboardInterrupt, our exits) are only recorded,
    in the list it gives; the caller raises them when it can. Python 3.11's Thread.join, interrupted while the
    thread runs, marks the thread ended (threading.py: _wait_for_tstate_lock releases the lock the running thread
    holds, "bpo-45274"): a second Ctrl-C in the join of a pool's manager thread let the exit go on without it, close
    the pool's queues, and then wait for a worker that would never get its stop, for ever (a fresh-eyes run: 1 of 8
    double Ctrl-C at a first load's start). Elsewhere than the main thread nothing is raised there anyway."""
    caught: list[int] = []
    held = {}
    if threading.current_thread() is threading.main_thread():
        for stop in STOPS:
            if callable(signal.getsignal(stop)):  # a Python handler (Ctrl-C's KeyboardInterrupt, the exits of ours)
                held[stop] = signal.signal(stop, lambda signum, frame: caught.append(signum))
    try:
        yield caught
    finally:
        for stop, handler in held.items():
            signal.signal(stop, handler)


def stop_within(exc: BaseException) -> BaseException | None:
    """A stop (KeyboardInterrupt, SystemExit) in exc's chain of contexts: raised inside cleanup code, it can come out
    as another error (shutil.rmtree, cut by Ctrl-C after closing a descriptor, closes it again: EBADF)."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, (KeyboardInterrupt, SystemExit)):
            return link
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return None


def raise_held(caught: list[int]) -> None:
    """Raise the first stop held_stops recorded, as its handler does."""
    for stop in caught[:1]:
        signal.raise_signal(stop)


@contextmanager
def quiet_spawns() -> Iterator[None]:
    """Spawn processes within this block. They start with the stops blocked (see the module's doc), and this
    thread's own handlers wait for the block's end (held_stops): a stop is raised again there, at once, not lost.
    Before, the block ignored SIGINT (so that a worker started ignoring it), and a Ctrl-C in it was lost: the command
    ran on to its end, exit 0 (3 of 50 aimed at a spawn); a SIGTERM's exit in the middle of a spawn left the child
    printing "EOFError: Ran out of input" (2 of 40)."""
    if not hasattr(signal, "pthread_sigmask"):  # (Windows: no masks, and workers there ignore SIGINT anyway)
        yield
        return
    with held_stops() as caught:
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # (a stop pending on this thread is handled below)
    raise_held(caught)


def wind_down(pool: ProcessPoolExecutor) -> None:
    """Drop a pool's queued jobs and wait for its running ones (a cache entry being written is finished whole). A
    stop during the wait (a second Ctrl-C) kills the workers, whose end the wait then sees, and is raised after it:
    the wait is never cut short (held_stops says why), and a worker waiting for a job that never came is not left
    behind either (`timeout -s INT` sends two)."""
    manager = manager_of(pool)
    processes = getattr(pool, "_processes", None) or {}  # (the manager's own dict: shutdown forgets it)
    with held_stops() as caught:
        pool.shutdown(wait=False, cancel_futures=True)
        killed_at = None
        while manager is not None and manager.is_alive():
            if caught and killed_at is None:
                for process in list(processes.values()):
                    process.kill()  # (SIGTERM waits in a worker still starting: quiet_spawns)
                killed_at = time.monotonic()
            if killed_at is not None and time.monotonic() - killed_at > STUCK_S + FREE_S:
                break  # (watch frees a stuck thread within that: past it, the stop is not held any longer)
            manager.join(0.05)
    raise_held(caught)


def manager_of(pool: ProcessPoolExecutor) -> threading.Thread | None:
    """The pool's manager thread (its shutdown forgets it: take it before)."""
    return getattr(pool, "_executor_manager_thread", None)


def settle(manager: threading.Thread | None, timeout_s: float = 10.0) -> None:
    """For a pool shut down or its workers stopped, just before this process may exit: wait for the pool's manager
    thread to see its workers gone and close its wake-up pipe. Python 3.11's exit hook (concurrent/futures/process.py,
    _python_exit) writes to that pipe without the pool's lock; when the thread closed it in between, the exit printed
    "OSError: [Errno 9] Bad file descriptor" with a traceback (3.12 locks it). The hook joins that thread anyway, so
    the wait costs nothing. A stop meanwhile is dropped (this process is ending already), never cuts it short."""
    if manager is None:
        return
    with held_stops():
        manager.join(timeout_s)


@contextmanager
def running(pool: ProcessPoolExecutor) -> Iterator[ProcessPoolExecutor]:
    """`with pool:`, wound down however the block is left (wind_down: a second Ctrl-C does not hang it)."""
    try:
        yield pool
    finally:
        wind_down(pool)


def main_runs_unguarded() -> bool:
    """Would a spawned worker run the main script's code that is running now? A worker is spawned (a fresh
    interpreter) and imports the main script again as __mp_main__ (multiprocessing/spawn.py: from its path, or its
    module, a package's __main__ excepted): code under `if __name__ == "__main__":` does not run there, the rest
    does. A script that loads a trace at its top level, unguarded, ran three times, each worker failing with a
    RuntimeError traceback. So: is the main thread in the main script's top level, outside such a guard?"""
    import sys

    main = sys.modules.get("__main__")
    if main is None or not _spawn_imports_main(main):
        return False
    frame = sys._current_frames().get(threading.main_thread().ident or -1)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals is vars(main):
            return not any(lo <= frame.f_lineno <= hi for lo, hi in _guarded_lines(frame.f_code.co_filename))
        frame = frame.f_back
    return False  # the script's top level has run (a thread, an atexit hook): nothing of it runs again


def _spawn_imports_main(main) -> bool:
    """Does a spawned process import this main module again (as multiprocessing's spawn decides)?"""
    from multiprocessing import spawn

    data = spawn.get_preparation_data("tracetui-worker")
    name = data.get("init_main_from_name")
    if name is not None:
        return name != "__main__" and not name.endswith(".__main__")
    path = data.get("init_main_from_path")
    return path is not None and os.path.splitext(os.path.basename(path))[0] != "ipython"


@functools.lru_cache(maxsize=8)
def _guarded_lines(filename: str) -> list[tuple[int, int]]:
    """The line spans of the script's top-level `if __name__ == "__main__":` blocks (none: it cannot be read)."""
    import ast

    try:
        with open(filename, "rb") as f:
            tree = ast.parse(f.read(), filename)
    except (OSError, SyntaxError, ValueError):
        return [(0, 1 << 30)]  # unreadable: taken as guarded, as before
    spans = []
    for node in tree.body:
        if isinstance(node, ast.If) and _is_main_test(node.test):
            spans.append((node.lineno, node.end_lineno or node.lineno))
    return spans


def _is_main_test(test: ast.expr) -> bool:
    import ast

    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, *test.comparators]
    return any(isinstance(n, ast.Name) and n.id == "__name__" for n in sides) and any(
        isinstance(n, ast.Constant) and n.value == "__main__" for n in sides
    )


_TOLD: list[bool] = []


def _tell_unguarded() -> None:
    """Say once why this script's loads run in one process."""
    import warnings

    if not _TOLD:
        _TOLD.append(True)
        warnings.warn(
            'tracetui: this script loads a trace outside `if __name__ == "__main__":`, so no worker processes '
            "are started (each would run the script again); traces are read in this process. Put the script's "
            "work under that guard to read on every core.",
            RuntimeWarning,
            stacklevel=2,
        )


def _worker_start(parent: int, setup: Callable[[], None] | None) -> None:
    """In a worker, first: Ctrl-C is the parent's to handle; exit when the parent is gone; then setup."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with, args=(parent,), daemon=True, name="tracetui-parent-watch").start()
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)  # spawned with them blocked (quiet_spawns)
    if setup is not None:
        setup()


def _exit_with(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(1)
