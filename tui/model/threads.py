"""Independent passes side by side in threads: numpy's sorts, searches and ufuncs release the GIL.

Used where a result is made of passes that read the same columns and write nothing shared (a summary's
device side and its CPU side, an ops table's memory sums and its time sums). TRACETUI_THREADS=N sets how
many threads (1: one pass after the other, in order, in the calling thread); the results never depend on it.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from . import settings


def thread_count() -> int:
    """Threads for side-by-side passes: TRACETUI_THREADS, else one per core up to settings.MAX_THREADS."""
    return settings.threads()


def side_by_side(*jobs: Callable[[], Any]) -> list[Any]:
    """Each job's result, in order; the first runs in this thread, the others in as many more as allowed.

    An exception from any job is raised here (after every job has finished, so none outlives the call), except
    that the process ending (Ctrl-C, or a kill the command line turns into SystemExit) waits for none: the jobs not
    started are dropped, and the command line exits without waiting for those running (cli/commands.py).
    """
    threads = min(thread_count(), len(jobs))
    if threads <= 1:
        return [job() for job in jobs]
    pool = ThreadPoolExecutor(threads - 1, thread_name_prefix="tracetui-pass")
    try:
        rest = [pool.submit(job) for job in jobs[1:]]
        failure: BaseException | None = None
        try:
            first = jobs[0]()
        except Exception as exc:  # noqa: BLE001 - raised below, once every job has finished
            failure = exc
        done = [f.exception() for f in rest]  # wait for all of them, whatever happened here
    except (KeyboardInterrupt, SystemExit):
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    for failed in (failure, *done):
        if failed is not None:
            raise failed
    return [first, *(f.result() for f in rest)]
