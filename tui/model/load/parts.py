"""Decode the chunks of a file in parts, in worker processes when the file is big, and merge the parts.

Each part interns its own strings and tracks; merging re-interns them in part order, so the
result is the same as one pass over all chunks (tests check that).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..columns import Events, Flows, Instants
from ..trace import LoadReport
from ..tracks import Meta
from .build import Builder, Interner
from .decode import decode_chunk
from .merge import merge, remap

PARALLEL_MIN_BYTES = 128 << 20  # below this, starting worker processes costs more than it saves
MAX_WORKERS = 8


@dataclass
class Part:
    """The columns of a run of chunks, with string, track and chunk-row ids local to the part."""

    x: Events
    inst: Instants
    flow: Flows
    names: list
    cat_names: list
    shapes: list
    tracks: list  # (pid, tid) keys
    meta: Meta
    rows: list[tuple[int, int, int]]  # chunk rows: (start, end, first event)
    report: LoadReport = field(default_factory=LoadReport)


def decode_range(
    buf, chunks: list[tuple[int, int]], last: int, first_index: int = 0, progress: Callable[[int], None] | None = None
) -> Part:
    """Decode chunks (their global indices start at first_index; `last` is the file's last one)."""
    builder = Builder()
    rows: list[tuple[int, int, int]] = []
    report = LoadReport()
    for k, (start, end) in enumerate(chunks):
        decoded = decode_chunk(buf, start, end, is_last=first_index + k == last)
        ids, pos = _chunk_ids(decoded.spans, len(decoded.events), rows)
        text = (lambda start=start, end=end: bytes(buf[start:end])) if len(decoded.spans) == 1 else None
        builder.add(decoded.events, ids, pos, text)
        report.events += len(decoded.events)
        report.skipped += decoded.skipped
        report.repaired += decoded.repaired
        report.dropped_tail |= decoded.dropped_tail
        if progress:
            progress(k + 1)
    report.inexact_chunks, report.unknown_phases = builder.inexact_chunks, builder.unknown
    report.bad_memory, report.bad_counters = builder.bad_memory, builder.bad_counters
    x, inst, flow = builder.finish()
    return Part(
        x,
        inst,
        flow,
        builder.names.values,
        builder.cats.values,
        builder.shapes.values,
        builder.tracks.values,
        builder.meta,
        rows,
        report,
    )


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
    from multiprocessing import resource_tracker

    size = sum(_size(Path(p)) for p in paths)
    if size >= PARALLEL_MIN_BYTES or any(Path(p).is_dir() for p in paths):
        resource_tracker.ensure_running()


def _size(path: Path) -> int:
    try:
        return sum(f.stat().st_size for f in path.iterdir()) if path.is_dir() else path.stat().st_size
    except OSError:
        return 0


def worker_count(size: int) -> int:
    """How many processes to decode `size` bytes of events with (1: none)."""
    if size < PARALLEL_MIN_BYTES or os.environ.get("TRACETUI_DECODE_PROCS") == "1":
        return 1
    return max(1, min(os.cpu_count() or 1, MAX_WORKERS))


def _work(job: tuple[str, list[tuple[int, int]], int, int]) -> Part:
    """In a worker: map the file itself and decode a run of chunks."""
    from .source import map_file

    path, chunks, last, first = job
    return decode_range(map_file(Path(path)), chunks, last, first)


def decode_parallel(
    path: Path, chunks: list[tuple[int, int]], workers: int, progress: Callable[[float], None] | None
) -> list[Part]:
    """Decode contiguous runs of chunks of a file on disk in worker processes, in file order.

    Workers are spawned, not forked: the app loads from a thread, and forking a threaded
    process can deadlock. Each worker maps the file by path, so nothing big is pickled in.
    """
    size = -(-len(chunks) // (workers * 4))
    jobs = [(str(path), chunks[k : k + size], len(chunks) - 1, k) for k in range(0, len(chunks), size)]
    parts = []
    # An executor, not a Pool: a worker that cannot start (a __main__ read from stdin, a sandbox)
    # breaks the executor with an error instead of being restarted forever.
    import multiprocessing  # here: a cached or small trace never pays for importing the pool
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        for done, part in enumerate(pool.map(_work, jobs), 1):
            parts.append(part)
            if progress:
                progress(done / len(jobs))
    return parts


def merge_parts(parts: list[Part]) -> Part:
    """One Part with global ids: strings and (pid, tid) keys re-interned in part order."""
    keys = Interner()
    merged = merge(parts, [remap(keys, p.tracks) for p in parts], [len(p.rows) for p in parts])
    meta, report = Meta(), LoadReport()
    for p in parts:
        meta.update(p.meta)
        report.add(p.report)
    rows = [row for p in parts for row in p.rows]
    return Part(
        merged.x,
        merged.inst,
        merged.flow,
        merged.names,
        merged.cat_names,
        merged.shapes,
        keys.values,
        meta,
        rows,
        report,
    )
