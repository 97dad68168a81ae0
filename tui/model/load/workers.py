"""Worker processes (the decode's, the ranks'): spawned quietly, and gone with the process that made them.

A worker never handles Ctrl-C itself: the terminal sends SIGINT to the whole process group, and the parent's
KeyboardInterrupt already stops the load (the queued jobs are dropped, the running ones waited for). A worker that
took it too printed its own traceback ("Process SpawnProcess-1: ... KeyboardInterrupt") while it started or sat idle.
A worker spawned from the main thread starts with SIGINT ignored (an ignored signal stays ignored across exec, and
Python then installs no handler of its own); any worker ignores it from its initializer on. And a worker whose parent
is gone (SIGKILL, the out-of-memory killer) exits, rather than keep the command's output open.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

PARENT_CHECK_S = 0.5  # how often a worker looks for its parent


def worker_pool(processes: int, setup: Callable[[], None] | None = None) -> ProcessPoolExecutor:
    """A pool of spawned worker processes, each running setup (a module's function) first; processes start as
    jobs are submitted (see quiet_spawns)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(processes, mp_context=context, initializer=_worker_start, initargs=(os.getpid(), setup))


@contextmanager
def quiet_spawns() -> Iterator[None]:
    """Within this block, processes spawned from the main thread start with SIGINT ignored (see the module's doc);
    elsewhere (a thread cannot change signal handlers) a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def wind_down(pool: ProcessPoolExecutor) -> None:
    """Drop a pool's queued jobs and wait for its running ones (a cache entry being written is finished whole). A
    second Ctrl-C during the wait stops the workers at once: a wait so interrupted left them waiting for a job that
    never came, and this process waiting for them at its exit, for ever (`timeout -s INT` sends two)."""
    try:
        pool.shutdown(wait=True, cancel_futures=True)
    except BaseException:
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            process.terminate()
        raise


@contextmanager
def running(pool: ProcessPoolExecutor) -> Iterator[ProcessPoolExecutor]:
    """`with pool:`, wound down however the block is left (wind_down: a second Ctrl-C does not hang it)."""
    try:
        yield pool
    finally:
        wind_down(pool)


def _worker_start(parent: int, setup: Callable[[], None] | None) -> None:
    """In a worker, first: Ctrl-C is the parent's to handle; exit when the parent is gone; then setup."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with, args=(parent,), daemon=True, name="tracetui-parent-watch").start()
    if setup is not None:
        setup()


def _exit_with(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(1)
