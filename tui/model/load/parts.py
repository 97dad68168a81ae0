"""Decode the chunks of a file in parts: in this process, and in worker processes beside it when the file is big.

Each part interns its own strings and tracks; merging re-interns them in part order (once per distinct
value), so the result is the same as one pass over all chunks (tests check that). A worker hands its
columns back in a file (spill.py), never as pickled Python objects, and the parent reads them straight
into the merged columns. The parent decodes parts too, so no core waits while workers start.
"""

from __future__ import annotations

import functools
import gc
import os
import shutil
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .. import settings
from ..columns import Events, Flows, Instants
from ..threads import thread_count
from ..trace import LoadReport
from . import scanned
from .build import Builder
from .decode import decode_chunk
from .fold import Fold
from .part import TABLES, Part
from .source import ChunkReader
from .spill import scratch_folder, spill
from .workers import (
    held_stops,
    manager_of,
    quiet_spawns,
    raise_held,
    settle,
    start_tracker,
    wind_down,
    worker_pool,
)

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

Buffer = bytearray | memoryview

PARALLEL_MIN_BYTES = 88 << 20  # below this, starting worker processes costs more than it saves (measured: RESULTS.md)
MAX_WORKERS = 8
EVENT_BYTES = 160  # bytes of JSON per duration event, for the rows to reserve: Kineto's are 150-500 (grow.py)
JOB_CHUNKS = 4  # chunks per job handed to a process: small enough that the processes finish together


Job = tuple[list[tuple[int, int]], int, int]  # chunks, the file's last chunk (-1: not cut), the first chunk's index
# Called as partial(parts_so_far, fraction) after each chunk or job: see stream.py (it builds the parts only when due).
Partial = Callable[[Callable[[], list[Part]], float], None]


def decode_range(
    read: ChunkReader,
    chunks: list[tuple[int, int]],
    last: int,
    first_index: int = 0,
    progress: Callable[[int], None] | None = None,
    partial: Partial | None = None,
    scan: bool = False,
) -> Part:
    """Decode chunks (their global indices start at first_index; `last` is the file's last one when the file is
    cut, so its last event may be partial, else -1); scan: with the compiled scan (scanned.wanted), else msgspec."""
    builder = Builder()
    builder.x.reserve(sum(end - start for start, end in chunks) // EVENT_BYTES)
    rows: list[tuple[int, int, int]] = []
    report = LoadReport()
    if scan:
        source: Iterator[tuple[int, int, Buffer | None, scanned.Plan | None]] = _scanned_ahead(
            read, chunks, thread_count()
        )
    else:
        source = ((k, start, read(start, end), None) for k, (start, end) in enumerate(chunks))
    for k, start, data, plan in source:
        if plan is not None:
            ids, pos = _chunk_ids([(start, chunks[k][1], 0)], plan.count, rows)
            scanned.add(builder, plan, ids, pos)
            report.events += plan.count
        else:
            _add_decoded(builder, report, rows, data or read(*chunks[k]), start, first_index + k == last)
        del plan, data
        if progress:
            progress(k + 1)
        if partial and k + 1 < len(chunks):
            partial(lambda: [_part(builder, list(rows), replace(report), last=False)], (k + 1) / len(chunks))
    return _part(builder, rows, report)


class _Space(threading.local):
    """A scan thread's buffer for the chunk it reads, reused from chunk to chunk (a plan keeps nothing of it)."""

    space = bytearray()


_SPACE = _Space()


def _read_and_scan(read: ChunkReader, start: int, end: int) -> scanned.Plan | None:
    """In a scan thread: read a chunk (pread, beside the other threads) and scan it."""
    _SPACE.space, data = read.into(start, end, _SPACE.space)
    return scanned.read(data)


def _scanned_ahead(
    read: ChunkReader, chunks: list[tuple[int, int]], threads: int
) -> Iterator[tuple[int, int, Buffer | None, scanned.Plan | None]]:
    """Each chunk with its compiled scan (None: msgspec must read it, from the chunk's bytes read again here), in
    order; the threads read and scan up to 2 x threads chunks ahead (numba and pread release the GIL), so one
    process reads on every core, with no worker processes to start and no parts to merge. Only putting each scan
    into the builder is serial."""
    with ThreadPoolExecutor(threads, thread_name_prefix="tracetui-scan") as pool:
        pending: deque = deque()
        for k, (start, end) in enumerate(chunks):
            pending.append((k, start, pool.submit(_read_and_scan, read, start, end)))
            if len(pending) >= 2 * threads:
                k0, s0, done = pending.popleft()
                yield k0, s0, None, done.result()
        while pending:
            k0, s0, done = pending.popleft()
            yield k0, s0, None, done.result()


def _add_decoded(
    builder: Builder, report: LoadReport, rows: list[tuple[int, int, int]], data: Buffer, start: int, is_last: bool
) -> None:
    """Decode a chunk with msgspec (and its fallbacks) into the builder."""
    decoded = decode_chunk(data, start, is_last)
    ids, pos = _chunk_ids(decoded.spans, len(decoded.events), rows)
    text = (lambda data=data: bytes(data[1:-1])) if len(decoded.spans) == 1 else None
    builder.add(decoded.events, ids, pos, text)
    report.events += len(decoded.events)
    report.skipped += decoded.skipped
    report.garbled += decoded.garbled
    report.garbled_events += decoded.garbled_events
    report.repaired += decoded.repaired
    report.unseparated += decoded.unseparated
    report.dropped_tail |= decoded.dropped_tail
    if decoded.deep:
        report.limits = {**report.limits, "nesting": report.limits.get("nesting", 0) + decoded.deep}


def _part(builder: Builder, rows: list[tuple[int, int, int]], report: LoadReport, last: bool = True) -> Part:
    """The part the builder holds so far (last=False: it goes on adding chunks after, so the part copies them)."""
    report.inexact_chunks, report.unknown_phases = builder.inexact_chunks, dict(builder.unknown)
    report.bad_memory, report.bad_counters = builder.bad_memory, builder.bad_counters
    report.untimed, report.bad_numbers = builder.untimed, dict(builder.bad_numbers)
    report.limits = {k: report.limits.get(k, 0) + builder.limits.get(k, 0) for k in {**report.limits, **builder.limits}}
    x, inst, flow = builder.finish(last)
    b = builder
    return Part(x, inst, flow, b.names.values, b.cats.values, b.shapes.values, b.tracks.values, b.meta, rows, report)


def _chunk_ids(spans, count: int, rows: list) -> tuple[np.ndarray, np.ndarray]:
    """Per event: the chunk row that re-decodes its args, and its index in that chunk."""
    ids = np.empty(count, np.int32)
    pos = np.arange(count, dtype=np.int32)
    firsts = [first for _, _, first in spans] + [count]
    for k, (start, end, first) in enumerate(spans):
        ids[first : firsts[k + 1]] = len(rows)
        pos[first : firsts[k + 1]] -= first
        rows.append((start, end, first))
    return ids, pos


def prepare_workers(paths: list[str]) -> None:
    """Start multiprocessing's resource tracker now, if these traces are big enough for workers, or are
    folders of ranks (converted side by side).

    Call it before a UI replaces sys.stderr: the tracker is started with stderr's descriptor,
    and a captured stderr has none, which makes every later worker start fail.
    """
    size = sum(_size(Path(p)) for p in paths)
    if size >= PARALLEL_MIN_BYTES or any(Path(p).is_dir() for p in paths):
        start_tracker()


def _size(path: Path) -> int:
    try:
        return sum(f.stat().st_size for f in path.iterdir()) if path.is_dir() else path.stat().st_size
    except OSError:
        return 0


def worker_count(size: int) -> int:
    """How many processes to decode `size` bytes of events with, this one included (1: no workers).

    One per core up to MAX_WORKERS from PARALLEL_MIN_BYTES up; TRACETUI_DECODE_PROCS=N sets it whatever the size (1
    in a pool that converts ranks side by side; any N for benchmarks/bench_workers.py, which measures the threshold).
    """
    asked = settings.decode_procs()  # a process per core at most (99999 were started, until memory ran out)
    if asked:
        return asked
    if size < PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(os.cpu_count() or 1, MAX_WORKERS))


_SPARE: list[tuple[int, ProcessPoolExecutor]] = []  # worker processes started ahead of the load that takes them


def start_workers(path: str, use_cache: bool = True) -> None:
    """Start the worker processes a first load of this file will decode with, now: a worker's start (a fresh
    interpreter importing numpy and the decode, about 0.3 s) then overlaps what this process does before the decode
    (the command's imports, finding the events) rather than the decode's first jobs. Nothing for a small file, a
    folder, or a file whose cache entry is there; decode_parallel takes them, and drop_workers stops them if no load
    did (an error, a cache entry another process wrote meanwhile)."""
    from .pool import json_bytes

    try:
        size = json_bytes(Path(path)) if Path(path).is_file() else -1
    except OSError:
        return
    workers = worker_count(size) - 1 if size >= 0 else 0
    if workers < 1 or _SPARE or (not use_cache and path.endswith(".gz")):  # unzipped to memory: decoded here alone
        return
    if use_cache:
        from .cachedir import has_entry

        if has_entry(Path(path)):
            return
    if scanned.asked(size):  # the compiled scan reads on every core in threads: no processes (and nothing said
        # here: before a viewer takes the screen, a line on stderr is left there when it goes)
        return
    try:
        pool = worker_pool(workers)
    except (RuntimeError, OSError):  # no processes here (a sandbox): the load finds that out itself
        return
    _SPARE.append((workers, pool))  # first: a stop raised at the spawns' end (quiet_spawns) leaves it to drop_workers
    try:  # (a pool left to the exit unshut hangs it: Python's exit hooks close its queues before it stops)
        with quiet_spawns():
            for _ in range(workers):  # each job starts a process (spawned pools start them as work comes)
                pool.submit(_ready)
    except (BrokenExecutor, RuntimeError, OSError):
        drop_workers()


def _ready() -> None:
    """In a worker started ahead: nothing to do (unpickling this call imported the decode's modules)."""


def drop_workers(*, exiting: bool = False) -> None:
    """Stop the workers started ahead that no load took; exiting: the process ends next (see workers.settle)."""
    while _SPARE:
        pool = _SPARE.pop()[1]
        manager = manager_of(pool)
        pool.shutdown(wait=False, cancel_futures=True)
        if exiting:
            settle(manager)


def _spare_pool(processes: int) -> ProcessPoolExecutor | None:
    """The pool started ahead with this many processes, taken (None: none such)."""
    if _SPARE and _SPARE[-1][0] == processes:
        return _SPARE.pop()[1]
    drop_workers()  # started for another size: of no use
    return None


def _work(path: str, folder: str, job: Job) -> Part:
    """In a worker: decode a run of chunks of the file and spill the columns into a file in folder."""
    chunks, last, first = job
    gc.disable()  # the decode makes no cycles; collections would only walk what it makes
    with ChunkReader(Path(path)) as read:
        part = decode_range(read, chunks, last, first)
    part.spilled = spill({name: getattr(part, name) for name in TABLES}, folder)
    part.x, part.inst, part.flow = Events(), Instants(), Flows()
    return part


def decode_parallel(
    path: Path,
    chunks: list[tuple[int, int]],
    workers: int,
    progress: Callable[[float], None] | None,
    partial: Partial | None = None,
    last: int | None = None,
) -> Part:
    """Decode a file on disk in `workers` processes (this one and workers - 1 spawned) into one merged Part, each
    part folded into the final columns as soon as the parts before it are (fold.py), while later ones decode.

    Jobs of a few chunks are handed out as processes free up, this process taking one between its
    checks, so a worker that starts late (or never: a sandbox) only does less. Workers are spawned, not
    forked: the app loads from a thread, and forking a threaded process can deadlock. Each reads the
    file by path.
    """
    last = len(chunks) - 1 if last is None else last  # the chunk a cut file ends in (-1: the file is whole)
    jobs: list[Job] = [(chunks[k : k + JOB_CHUNKS], last, k) for k in range(0, len(chunks), JOB_CHUNKS)]
    from .cachedir import cache_root

    folder = scratch_folder(cache_root())  # the spilled parts' files: the fold removes each once it is read
    try:
        pool = _spare_pool(workers - 1) or worker_pool(workers - 1)
        try:
            with ChunkReader(path) as read:
                run = _Run(jobs, read, progress, partial, sum(end - start for start, end in chunks))
                run.schedule(pool, functools.partial(_work, str(path), folder), workers - 1)
        except BaseException:  # a cancelled load (or a failure here): the queued jobs are dropped, not run
            wind_down(pool)  # waits for the jobs running now only
            raise
        pool.shutdown(wait=False)  # every job is done: the idle workers exit on their own (waiting took 20 ms)
        return run.fold.result()
    finally:
        with held_stops() as caught:  # (a Ctrl-C inside rmtree left the folder, and came out as EBADF)
            shutil.rmtree(folder, ignore_errors=True)
        raise_held(caught)


class _Run:
    """The jobs of one parallel decode and the fold of the parts they became, in job order."""

    def __init__(
        self,
        jobs: list[Job],
        read: ChunkReader,
        progress: Callable[[float], None] | None,
        partial: Partial | None,
        total_bytes: int,
    ) -> None:
        self.jobs, self.read, self.progress, self.partial = jobs, read, progress, partial
        self.fold = Fold(total_bytes)
        self.done = 0

    def schedule(self, pool, remote: Callable[[Job], Part], workers: int) -> None:
        """Keep two jobs queued per worker and take the next one here, until every job is done. The first job is
        this process's: the run of parts folded so far (and the partial traces made of it) starts at once, not
        when a worker has started."""
        todo = list(range(len(self.jobs)))[::-1]  # popped from the end: file order
        mine = [todo.pop()]
        pending: dict[Future, int] = {}
        broken = False
        while todo or pending or mine:
            with quiet_spawns():  # (a submit may spawn a worker)
                while todo and not broken and len(pending) < 2 * workers:
                    try:
                        pending[pool.submit(remote, self.jobs[todo[-1]])] = todo[-1]
                        todo.pop()
                    except (BrokenExecutor, RuntimeError, OSError):  # no workers here: this process does it all
                        broken = True
            if mine or todo:
                self.here(mine.pop() if mine else todo.pop())
                ready = [f for f in pending if f.done()]
            else:
                ready = list(wait(list(pending), return_when=FIRST_COMPLETED).done)
            for f in ready:
                self.collect(f, pending.pop(f))

    def here(self, k: int) -> None:
        self.finish(k, decode_range(self.read, *self.jobs[k]))

    def collect(self, future: Future, k: int) -> None:
        try:
            part = future.result()
        except (BrokenExecutor, OSError):  # the worker could not start or died: this process does the job
            part = decode_range(self.read, *self.jobs[k])
        self.finish(k, part)

    def finish(self, k: int, part: Part) -> None:
        self.fold.offer(k, part)
        self.done += 1
        if self.progress:
            self.progress(self.done / len(self.jobs))
        if self.partial and self.done < len(self.jobs):
            self.partial(lambda: [self.fold.snapshot()], self.done / len(self.jobs))


def merge_parts(parts: list[Part], keep: bool = False) -> Part:
    """One Part with global ids (see fold.py): spilled parts' files are removed unless `keep`. One part decoded here
    is already that (unless kept: it is copied, as a partial trace's columns are changed in place when it becomes
    a Trace)."""
    if len(parts) == 1 and parts[0].spilled is None and not keep:
        return parts[0]
    fold = Fold(keep=keep)
    fold.add(parts)
    return fold.result()
