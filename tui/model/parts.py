"""Decode the chunks of a file in parts, on both cores when the file is big, and merge the parts.

Each part interns its own strings and tracks; merging re-interns them in part order, so the
result is the same as one pass over all chunks (tests check that).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .columns import Builder, Interner, Meta
from .decode import decode_chunk

PARALLEL_MIN_BYTES = 128 << 20  # below this, starting worker processes costs more than it saves
MAX_WORKERS = 8


@dataclass
class Part:
    """The columns of a run of chunks, with ids local to the part."""

    cols: dict[str, dict[str, np.ndarray]]
    names: list
    cats: list
    shapes: list
    tracks: list
    meta: Meta
    rows: list[tuple[int, int, int]]
    events: int = 0
    skipped: int = 0
    repaired: int = 0
    dropped_tail: bool = False
    inexact_chunks: int = 0
    unknown: dict[str, int] = field(default_factory=dict)


def decode_range(
    buf, chunks: list[tuple[int, int]], last: int, first_index: int = 0, progress: Callable[[int], None] | None = None
) -> Part:
    """Decode chunks (their global indices start at first_index; `last` is the file's last one)."""
    builder = Builder()
    rows: list[tuple[int, int, int]] = []
    part = Part({}, [], [], [], [], builder.meta, rows)
    for k, (start, end) in enumerate(chunks):
        decoded = decode_chunk(buf, start, end, is_last=first_index + k == last)
        ids, pos = _chunk_ids(decoded.spans, len(decoded.events), rows)
        text = bytes(buf[start:end]) if len(decoded.spans) == 1 else None
        builder.add(decoded.events, ids, pos, text)
        part.events += len(decoded.events)
        part.skipped += decoded.skipped
        part.repaired += decoded.repaired
        part.dropped_tail |= decoded.dropped_tail
        if progress:
            progress(k + 1)
    part.cols = builder.finish()
    part.names, part.cats, part.shapes = builder.names.values, builder.cats.values, builder.shapes.values
    part.tracks, part.unknown, part.inexact_chunks = builder.tracks.values, builder.unknown, builder.inexact_chunks
    return part


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
    """Start multiprocessing's resource tracker now, if these traces are big enough for workers.

    Call it before a UI replaces sys.stderr: the tracker is started with stderr's descriptor,
    and a captured stderr has none, which makes every later worker start fail.
    """
    from multiprocessing import resource_tracker

    size = sum(_size(Path(p)) for p in paths)
    if size >= PARALLEL_MIN_BYTES:
        resource_tracker.ensure_running()


def _size(path: Path) -> int:
    try:
        return sum(f.stat().st_size for f in path.iterdir()) if path.is_dir() else path.stat().st_size
    except OSError:
        return 0


def worker_count(size: int) -> int:
    """How many processes to decode `size` bytes of events with (1: none)."""
    if size < PARALLEL_MIN_BYTES:
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
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        for done, part in enumerate(pool.imap(_work, jobs), 1):
            parts.append(part)
            if progress:
                progress(done / len(jobs))
    return parts


def merge_parts(parts: list[Part]) -> tuple[Part, Interner]:
    """One Part with global ids, and the track interner (keys in first-seen order)."""
    names, cats, shapes, tracks = Interner(), Interner(), Interner(), Interner()
    merged = Part({}, [], [], [], [], Meta(), [])
    pieces: dict[str, dict[str, list]] = {"x": {}, "inst": {}, "flow": {}}
    for p in parts:
        name_map, track_map = remap(names, p.names), remap(tracks, p.tracks)
        cat_map, shape_map = remap(cats, p.cats), remap(shapes, p.shapes)
        x = dict(p.cols["x"])
        x["name"], x["track"], x["cat_str"] = (
            name_map[x["name"]],
            track_map[x["track"]],
            cat_map[x["cat_str"]].astype(np.int16),
        )
        x["shape"] = np.where(x["shape"] >= 0, shape_map[np.maximum(x["shape"], 0)], -1).astype(np.int32)
        x["chunk"] = x["chunk"] + len(merged.rows)
        inst, flow = dict(p.cols["inst"]), dict(p.cols["flow"])
        inst["name"], inst["track"], flow["track"] = (
            name_map[inst["name"]],
            track_map[inst["track"]],
            track_map[flow["track"]],
        )
        for kind, table in (("x", x), ("inst", inst), ("flow", flow)):
            for key, arr in table.items():
                pieces[kind].setdefault(key, []).append(arr)
        merged.rows += p.rows
        _merge_meta(merged.meta, p.meta)
        _add_counts(merged, p)
    merged.cols = {kind: {k: np.concatenate(v) for k, v in table.items()} for kind, table in pieces.items()}
    merged.names, merged.cats, merged.shapes = names.values, cats.values, shapes.values
    return merged, tracks


def remap(into: Interner, values: list) -> np.ndarray:
    """Intern values into a shared table; returns old id -> new id."""
    return np.asarray(into.many(values) or [0], dtype=np.int32)


def _merge_meta(into: Meta, more: Meta) -> None:
    for name in ("process_name", "process_labels", "process_sort", "thread_name", "thread_sort"):
        getattr(into, name).update(getattr(more, name))


def _add_counts(total: Part, p: Part) -> None:
    total.events += p.events
    total.skipped += p.skipped
    total.repaired += p.repaired
    total.dropped_tail |= p.dropped_tail
    total.inexact_chunks += p.inexact_chunks
    for ph, n in p.unknown.items():
        total.unknown[ph] = total.unknown.get(ph, 0) + n
