"""Decode one trace file into columns: its bytes cut into chunks, decoded (the compiled scan in threads, or msgspec
in this process or in workers), and assembled into a TraceColumns. Imported by the loader only when a file is not
read back from the cache, so a cached open imports none of the decode."""

from __future__ import annotations

import gc
import os
from collections.abc import Callable
from concurrent.futures import BrokenExecutor
from pathlib import Path

import numpy as np

from ..errors import TraceError
from ..trace import LoadReport, TraceColumns
from ..tracks import build_tracks
from . import scanned
from .bounds import bound
from .folder import RANK_IN_NAME
from .locate import open_source
from .margins import narrow_gpu_annotations
from .parts import Part, Partial, decode_parallel, decode_range, drop_workers, merge_parts, worker_count
from .progress import COMPILING, Progress
from .source import ChunkReader, Source, split_chunks
from .stream import watcher
from .workers import stop_within
from .writer import torch_version

MAX_RANK = 1 << 15  # a rank is folded with an id into one int64 (trace.keyed): anything past this is no rank


def parse_file(path: Path, gunzip_to: Path | None, progress: Progress | None = None) -> TraceColumns:
    """Decode one file chunk by chunk into columns (the GC is paused: no cycles are made)."""
    gc.disable()
    try:
        return _parse(path, gunzip_to, progress)
    finally:
        gc.enable()


def _parse(path: Path, gunzip_to: Path | None, progress: Progress | None) -> TraceColumns:
    src = open_source(path, gunzip_to)
    gunzip_to = src.unzipped  # None where the disk could not take the unzipped bytes: they are in memory
    chunks = split_chunks(src)
    workers = worker_count(src.end - src.start)
    on_disk = gunzip_to if src.gz else path  # workers map the (unzipped) file themselves
    partial = _partial(path, src, gunzip_to)
    last = len(chunks) - 1 if src.truncated or src.gz_truncated else -1  # only a cut file's last event may be partial
    merged = None
    scan = scanned.wanted(src.end - src.start)  # the compiled scan, in threads of this process: no workers
    if scan:
        scan = scanned.prepare((lambda: progress(COMPILING)) if progress else None)
    if workers > 1 and len(chunks) >= 2 * workers and on_disk is not None and not scan:
        try:
            merged = decode_parallel(on_disk, chunks, workers, progress, partial, last)
        except (OSError, ValueError, BrokenExecutor) as exc:  # no worker processes here (sandbox, odd stdio)
            stop = stop_within(exc)
            if stop is not None:  # not a failure of the workers: Ctrl-C landed in its cleanup (a fresh-eyes run:
                raise stop from None  # it was lost, and the file decoded again in one process)
            merged = None  # decoded below, in this process
    if merged is None:
        drop_workers()  # any started ahead: this decode runs here alone
        step = (lambda done: progress(done / len(chunks))) if progress else None
        with ChunkReader(on_disk) if on_disk is not None else ChunkReader(buf=src.buf) as read:
            merged = decode_range(read, chunks, last, 0, step, partial, scan)
    merged.report.truncated = src.truncated or merged.report.dropped_tail
    merged.report.gz_truncated = src.gz_truncated
    merged.report.damaged = src.notes
    if src.oversized:
        merged.report.limits["event"] = src.oversized
    trace = _assemble(path, src, merged, gunzip_to)
    report = trace.report
    left_out = report.untimed or report.bad_numbers or report.limits
    if report.events == 0 or (left_out and trace.n + len(trace.inst) + len(trace.flow) == 0):
        raise TraceError(path, _nothing(src, report))  # nothing to show: say why, rather than a "CPU only" verdict
    return trace


def _nothing(src: Source, report: LoadReport) -> str:
    """Why a file gave no events: none there, cut before its first, or every one left out (and what for)."""
    if report.events == 0 and not report.limits:
        cut = " (the file is cut before its first event)" if src.truncated or src.gz_truncated else ""
        return f"no trace events in the file{cut}"
    return f"no trace events left to show: {report.warning()}"


def _partial(path: Path, src: Source, unzipped: Path | None) -> Partial | None:
    """What hands the events decoded so far to whoever asked for partial traces (see stream.py); None: nobody."""
    watching = watcher()
    if watching is None:
        return None

    def partial(parts_so_far: Callable[[], list[Part]], fraction: float) -> None:
        if watching.due():
            watching.hand(lambda: _so_far(merge_parts(parts_so_far(), keep=True)), fraction)

    def _so_far(merged: Part) -> TraceColumns | None:
        return _assemble(path, src, merged, unzipped) if merged.report.events else None

    return partial


def _assemble(path: Path, src: Source, part: Part, unzipped: Path | None) -> TraceColumns:
    """The TraceColumns of one decoded file (the only place a TraceColumns is made from decoded parts)."""
    top = src.top
    base = bound(part, top.baseTimeNanoseconds)
    for table in (part.x, part.inst, part.flow):
        table.ts += base
    narrow_gpu_annotations(part.x)  # back to the spans torch timed (Kineto's writer widens them)
    rank, rank_from = _rank(path, top.distributedInfo)
    tracks = build_tracks(part.tracks, part.x.track, part.x.cat, part.meta, rank)
    # absolute: the args are read again from it by whoever opens the cache entry, from any working folder
    source = os.path.abspath(unzipped if (src.gz and unzipped) else path)
    trace = TraceColumns(
        path=str(path),
        x=part.x,
        inst=part.inst,
        flow=part.flow,
        names=[str(n) for n in part.names],
        cat_names=[str(c) for c in part.cat_names],
        shapes=[s.decode("utf-8", "replace") for s in part.shapes],
        tracks=tracks,
        chunks=np.array([(s, e, f, 0) for s, e, f in part.rows], dtype=np.int64).reshape(-1, 4),
        sources=[source],
        devices=top.deviceProperties or top.computeProperties or [],
        ranks=[
            {**(top.distributedInfo or {}), "rank": rank, "rank_from": rank_from, "clock": _clock(top, part.x.ts)}
            | _writer(top)
        ],
        flags={k: v for k in ("record_shapes", "with_stack", "profile_memory") if (v := getattr(top, k))},
        report=part.report,
    )
    if src.gz and unzipped is None:
        trace.buffers[0] = src.buf
    return trace


def _writer(top) -> dict[str, str]:
    """{"torch": version} where the file names the torch that wrote it (writer.py), else {}."""
    version = torch_version(top)
    return {"torch": version} if version else {}


def _rank(path: Path, info: dict | None) -> tuple[int, str]:
    """The rank of a file, and where it was read: distributedInfo, the file name (rank-N, rankN, workerN), or none (0)."""
    if info and isinstance(info.get("rank"), int) and 0 <= info["rank"] < MAX_RANK:
        return info["rank"], "distributedInfo"
    m = RANK_IN_NAME.search(path.name)
    return (
        (int(m.group(1)), "file name")
        if m and len(m.group(1)) < 6 and int(m.group(1)) < MAX_RANK
        else (0, "file order")
    )


def _clock(top, ts) -> str:
    """How the file writes time: relative to baseTimeNanoseconds (2024-05 on), or absolute epoch microseconds."""
    if top.baseTimeNanoseconds:
        return "relative to baseTimeNanoseconds"
    return "epoch" if len(ts) and int(ts[len(ts) // 2]) > 10**17 else "relative, no base"
