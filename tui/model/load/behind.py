"""A first load's cache entry written behind its analyses, while a command runs (written_behind()).

Writing the entry is time nothing in the command waits for: the 1 GB tile's columns took 0.2-0.8 s to write and
its nesting 0.3-0.5 s more (2 cores, benchmarks/RESULTS.md, issue 39), each in the way of the analyses after it.
Inside written_behind(), a load that makes an entry hands the trace's columns to one writer thread and returns;
the trace's store (Behind) queues what the analyses keep, behind the columns, and answers from that queue until
it is on disk. The entry's lock (cache.writing) is held until the columns are in place, so another thread or
process opening the trace still waits and then reads them. On leaving written_behind() every write is finished,
so a command that returns has its entry whole; a killed one leaves only a temporary folder, as before.

The command line's choice (it owns its process), never the model's: a library user's loads write as they go.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from ..trace import TraceColumns


class _Writer:
    """One thread that writes, in the order asked, for every trace of this process; started on first use."""

    def __init__(self) -> None:
        self.jobs: queue.Queue[Callable[[], None]] = queue.Queue()
        self.active = 0  # written_behind() blocks running
        self.problems: list[str] = []
        self.guard = threading.Lock()
        self.thread: threading.Thread | None = None

    def submit(self, job: Callable[[], None]) -> None:
        with self.guard:
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._work, name="tracetui-cache-writer", daemon=True)
                self.thread.start()
        self.jobs.put(job)

    def _work(self) -> None:
        while True:
            job = self.jobs.get()
            try:
                job()
            except Exception as exc:  # a failure the store does not catch: the entry goes without that value
                self.problems.append(f"a cache write failed ({type(exc).__name__}: {exc})")
            finally:
                self.jobs.task_done()


_WRITER = _Writer()


def active() -> bool:
    """Is a command writing its entries behind (inside written_behind())?"""
    return _WRITER.active > 0


@contextmanager
def written_behind() -> Iterator[list[str]]:
    """Write first loads' entries behind their analyses while the block runs; on leaving, wait until every write
    is done. Yields a list that then holds what could not be written (one line each)."""
    with _WRITER.guard:
        _WRITER.active += 1
    problems: list[str] = []
    try:
        yield problems
    finally:
        with _WRITER.guard:
            _WRITER.active -= 1
        _WRITER.jobs.join()
        with _WRITER.guard:
            problems += _WRITER.problems
            _WRITER.problems.clear()


def problems() -> list[str]:
    """What could not be written so far (read, not taken: leaving written_behind() still reports it), for a viewer
    to say while it runs."""
    with _WRITER.guard:
        return list(_WRITER.problems)


def write(path: Path, trace: TraceColumns, lock: ExitStack) -> None:
    """Write the trace's entry behind: its store at once (Behind), its columns by the writer, which then closes
    lock (the entry's writing lock, held until the columns are in place)."""
    from . import cache
    from .cachedir import cache_root, entry_dir

    store = Behind(entry_dir(path))
    trace.store = store

    def columns() -> None:
        try:
            cache.commit(path, trace)
        except OSError as exc:
            store.failed = True
            why = exc.strerror or str(exc) or type(exc).__name__
            _WRITER.problems.append(f"{path}: its cache entry could not be written in {cache_root()} ({why})")
        finally:
            lock.close()

    _WRITER.submit(columns)


class Behind:
    """The store of a trace whose entry is written behind: what is kept goes to the writer, behind the columns,
    and is read back from the queue until it is on disk (then from the entry, as EntryStore reads it)."""

    def __init__(self, entry: Path) -> None:
        from .cache import EntryStore

        self.entry = EntryStore(entry)
        self.failed = False  # the columns could not be written: nothing is kept
        self._pending: dict[str, tuple[str, Any]] = {}
        self._guard = threading.Lock()

    def get_arrays(self, name: str) -> dict[str, np.ndarray] | None:
        kept = self._queued(name, "arrays")
        return kept if kept is not None else self.entry.get_arrays(name)

    def put_arrays(self, name: str, arrays: dict[str, np.ndarray]) -> None:
        self._queue(name, "arrays", arrays)

    def get_blob(self, name: str) -> bytes | None:
        kept = self._queued(name, "blob")
        return kept if kept is not None else self.entry.get_blob(name)

    def put_blob(self, name: str, blob: bytes) -> None:
        self._queue(name, "blob", blob)

    def _queued(self, name: str, kind: str) -> Any:
        with self._guard:
            item = self._pending.get(name)
        return item[1] if item is not None and item[0] == kind else None

    def _queue(self, name: str, kind: str, value: Any) -> None:
        item = (kind, value)
        with self._guard:
            self._pending[name] = item

        def put() -> None:
            try:
                if not self.failed:
                    getattr(self.entry, f"put_{kind}")(name, value)
            finally:
                with self._guard:
                    if self._pending.get(name) is item:
                        del self._pending[name]

        _WRITER.submit(put)
