"""Load a trace file or a folder of per-rank traces into a TraceColumns, through the cache."""

from __future__ import annotations

import gc
import re
from collections.abc import Callable
from concurrent.futures import BrokenExecutor
from contextlib import ExitStack
from pathlib import Path

import numpy as np

from ..errors import TraceError
from ..trace import LoadReport, TraceColumns
from ..tracks import build_tracks
from . import behind, cache, scanned
from .bounds import bound
from .cachedir import unzipped_file
from .folder import merge_ranks, no_traces
from .locate import open_source
from .margins import narrow_gpu_annotations
from .parts import Part, Partial, decode_parallel, decode_range, drop_workers, merge_parts, worker_count
from .pool import pool_size, spawn_pool
from .source import ChunkReader, Source, split_chunks
from .stream import watcher
from .workers import quiet_spawns, running
from .writer import torch_version

Progress = Callable[[float], None]
WAITING = -1.0  # progress(WAITING): another process writes this file's cache entry, and this load waits to read it
COMPILING = -2.0  # progress(COMPILING): numba compiles the native decoder (TRACETUI_DECODE=native) before the decode
TRACE_SUFFIXES = (".json", ".json.gz", ".gz")
_RANK_IN_NAME = re.compile(r"(?:rank|worker)[-_]?(\d+)", re.IGNORECASE)
MAX_RANK = 1 << 15  # a rank is folded with an id into one int64 (trace.keyed): anything past this is no rank


def load_trace(path: str | Path, use_cache: bool = True, progress: Progress | None = None) -> TraceColumns:
    """Load a .json, .json.gz or a folder of traces (one rank per file)."""
    p = Path(path)
    if p.is_dir():
        return load_folder(p, use_cache, progress)
    if not p.exists():
        raise TraceError(p, "no such file")
    if not p.is_file():
        raise TraceError(p, "not a regular file")
    if not use_cache:
        return parse_file(p, None, progress)
    hit = cache.read(p)
    if hit is not None:
        return hit
    if not cache.ensure_root():
        return _parsed(p, None, progress)
    with ExitStack() as lock:  # one writer per entry: the threads and processes opening it too wait here, then read it
        lock.enter_context(cache.writing(p, on_wait=(lambda: progress(WAITING)) if progress else None))
        hit = cache.read(p)
        return hit if hit is not None else _parsed(p, cache.entry_dir(p), progress, lock)


def _parsed(p: Path, entry: Path | None, progress: Progress | None, lock: ExitStack | None = None) -> TraceColumns:
    """Parse the file and write its cache entry (a gzip file's unzipped bytes go into the cache too); entry None:
    the cache directory cannot be written, and the trace's report says so. A file that cannot be read leaves
    nothing behind, not the file it was unzipped to either. While a command writes behind (behind.py), the entry
    is written beside what follows, and the entry's lock is handed to that writer."""
    unzipped = unzipped_file(entry) if entry else None
    try:
        trace = parse_file(p, unzipped, progress)
    except BaseException:  # an unreadable file, or an interrupt: no unzipped copy is left without its entry
        if unzipped is not None:
            unzipped.unlink(missing_ok=True)
        raise
    if unzipped is not None and trace.buffers:  # a gzip trace unzipped in memory: an entry could not read it back
        trace.report.cache_problem = (
            f"the cache directory {cache.cache_root()} has no room for the unzipped trace; it was read in memory "
            "and nothing was cached"
        )
    elif lock is not None and behind.active():  # (a lock is held only for an entry that can be written)
        behind.write(p, trace, lock.pop_all())
    elif entry is None or not cache.write(p, trace):
        trace.report.cache_problem = f"the cache directory {cache.cache_root()} cannot be written; nothing was cached"
    return trace


def rank_files(folder: Path) -> list[Path]:
    """The trace files of a folder of ranks, in name order (none: an error)."""
    files = sorted(f for f in folder.iterdir() if f.is_file() and f.name.endswith(TRACE_SUFFIXES))
    if not files:
        raise TraceError(folder, no_traces(folder))
    return files


def load_folder(folder: Path, use_cache: bool, progress: Progress | None) -> TraceColumns:
    """Load every trace file in a folder and merge them, one process group per rank.

    With the cache, the ranks not yet in it are first converted side by side in a process pool
    (each writes its cache entry); then every rank is read back from the cache here.
    """
    files = rank_files(folder)
    warmed = warm_cache(files, progress) if use_cache else 0
    share = 0.9 * warmed / len(files)  # of the progress bar, spent converting in the pool
    traces, problems = [], []
    for k, f in enumerate(files):
        step = (
            (lambda x, k=k: progress(x if x < 0 else share + (1 - share) * (k + x) / len(files))) if progress else None
        )
        try:
            traces.append(load_trace(f, use_cache, step))
        except TraceError as exc:  # one bad rank: the others are still a job
            problems.append(f"{f.name} was left out ({exc.problem})")
    if not traces:
        raise TraceError(folder, f"no rank file could be read ({'; '.join(problems)})")
    merged = merge_ranks(str(folder), traces)
    merged.report.notes = problems + merged.report.notes
    return merged


def warm_cache(files: list[Path], progress: Progress | None = None) -> int:
    """Convert the files not yet in the cache side by side in a pool (each writes its entry); how many it did.

    Nothing comes back from the pool but the entries on disk: a file that fails is left for the caller's
    own pass to report, and where no pool can start (a sandbox), the caller converts them one by one.
    """
    cold = [f for f in files if not cache.has_entry(f)]
    processes = pool_size(cold)
    if len(cold) < 2 or processes < 2 or not cache.ensure_root():
        return 0
    try:
        with running(spawn_pool(processes)) as pool:
            with quiet_spawns():  # (map submits every job now: the workers spawn here)
                converted = pool.map(cache_one, map(str, cold))
            for done, _ in enumerate(converted, 1):
                if progress:
                    progress(0.9 * done / len(files))
    except (OSError, ValueError, BrokenExecutor):  # no processes here (a sandbox, a captured stderr)
        return 0
    return len(cold)


def cache_one(path: str) -> None:
    """In a pool process: convert one file into its cache entry (its problems are reported by the caller)."""
    try:
        load_trace(path, use_cache=True)
    except TraceError:
        pass


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
        except (OSError, ValueError, BrokenExecutor):  # no worker processes here (sandbox, odd stdio): one process
            merged = None
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
    source = str(unzipped) if (src.gz and unzipped) else str(path)
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
    m = _RANK_IN_NAME.search(path.name)
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
