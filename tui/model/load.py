"""Load a trace file or a folder of per-rank traces into a Trace, through the cache."""

from __future__ import annotations

import gc
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from . import cache
from .columns import Builder
from .decode import decode_chunk
from .errors import TraceError
from .source import Source, open_source, split_chunks
from .trace import LoadReport, Trace
from .tracks import build_tracks

Progress = Callable[[float], None]
TRACE_SUFFIXES = (".json", ".json.gz", ".gz")
_RANK_IN_NAME = re.compile(r"rank[-_]?(\d+)", re.IGNORECASE)


def load_trace(path: str | Path, use_cache: bool = True, progress: Progress | None = None) -> Trace:
    """Load a .json, .json.gz or a folder of traces (one rank per file)."""
    p = Path(path)
    if p.is_dir():
        return load_folder(p, use_cache, progress)
    if not p.exists():
        raise TraceError(p, "no such file")
    if not p.is_file():
        raise TraceError(p, "not a regular file")
    if use_cache:
        hit = cache.read(p)
        if hit is not None:
            return hit
    entry = cache.entry_dir(p) if use_cache and cache.ensure_root() else None
    trace = parse_file(p, entry.with_suffix(".src.json") if entry else None, progress)
    if entry is not None:
        cache.write(p, trace)
    return trace


def load_folder(folder: Path, use_cache: bool, progress: Progress | None) -> Trace:
    """Load every trace file in a folder and merge them, one process group per rank."""
    files = sorted(f for f in folder.iterdir() if f.is_file() and f.name.endswith(TRACE_SUFFIXES))
    if not files:
        raise TraceError(folder, "folder holds no .json or .json.gz traces")
    traces = []
    for k, f in enumerate(files):
        step = (lambda x, k=k: progress((k + x) / len(files))) if progress else None
        traces.append(load_trace(f, use_cache, step))
    from .merge import merge_ranks

    return merge_ranks(str(folder), traces)


def parse_file(path: Path, gunzip_to: Path | None, progress: Progress | None = None) -> Trace:
    """Decode one file chunk by chunk into columns (the GC is paused: no cycles are made)."""
    gc.disable()
    try:
        return _parse(path, gunzip_to, progress)
    finally:
        gc.enable()


def _parse(path: Path, gunzip_to: Path | None, progress: Progress | None) -> Trace:
    src = open_source(path, gunzip_to)
    builder, report = Builder(), LoadReport(truncated=src.truncated, gz_truncated=src.gz_truncated)
    rows: list[tuple[int, int, int]] = []
    chunks = split_chunks(src)
    for ci, (start, end) in enumerate(chunks):
        decoded = decode_chunk(src.buf, start, end, is_last=ci == len(chunks) - 1)
        ids, pos = _chunk_ids(decoded.spans, len(decoded.events), rows)
        text = bytes(src.buf[start:end]) if len(decoded.spans) == 1 else None
        builder.add(decoded.events, ids, pos, text)
        report.events += len(decoded.events)
        report.skipped += decoded.skipped
        report.repaired += decoded.repaired
        report.dropped_tail |= decoded.dropped_tail
        if progress:
            progress((ci + 1) / len(chunks))
    report.unknown_phases, report.inexact_chunks = builder.unknown, builder.inexact_chunks
    if report.dropped_tail:
        report.truncated = True
    return _assemble(path, src, builder, rows, report, gunzip_to)


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


def _assemble(
    path: Path, src: Source, builder: Builder, rows: list, report: LoadReport, unzipped: Path | None
) -> Trace:
    cols = builder.finish()
    top = src.top
    base = top.baseTimeNanoseconds or 0
    for part in ("x", "inst", "flow"):
        cols[part]["ts"] += base
    rank = _rank(path, top.distributedInfo)
    tracks = build_tracks(builder.tracks.values, cols["x"]["track"], cols["x"]["cat"], builder.meta, rank)
    source = str(unzipped) if (src.gz and unzipped) else str(path)
    trace = Trace(
        path=str(path),
        x=cols["x"],
        inst=cols["inst"],
        flow=cols["flow"],
        names=[str(n) for n in builder.names.values],
        cat_names=[str(c) for c in builder.cats.values],
        shapes=[s.decode("utf-8", "replace") for s in builder.shapes.values],
        tracks=tracks,
        chunks=np.array([(s, e, f, 0) for s, e, f in rows], dtype=np.int64).reshape(-1, 4),
        sources=[source],
        devices=top.deviceProperties or top.computeProperties or [],
        ranks=[{"rank": rank, **(top.distributedInfo or {})}],
        flags={k: v for k in ("record_shapes", "with_stack", "profile_memory") if (v := getattr(top, k))},
        report=report,
    )
    if src.gz and unzipped is None:
        trace.buffers[0] = src.buf
    return trace


def _rank(path: Path, info: dict | None) -> int:
    if info and isinstance(info.get("rank"), int):
        return info["rank"]
    m = _RANK_IN_NAME.search(path.name)
    return int(m.group(1)) if m else 0
