"""Load a trace file or a folder of per-rank traces into a TraceColumns, through the cache."""

from __future__ import annotations

from concurrent.futures import BrokenExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import TraceError, no_such_file
from . import behind, cache
from .cachedir import cache_root, entry_dir, has_entry, kept_out, unzipped_file
from .pool import pool_size, spawn_pool
from .progress import WAITING, Progress
from .workers import quiet_spawns, running

if TYPE_CHECKING:
    from ..trace import TraceColumns

TRACE_SUFFIXES = (".json", ".json.gz", ".gz")


def load_trace(path: str | Path, use_cache: bool = True, progress: Progress | None = None) -> TraceColumns:
    """Load a .json, .json.gz or a folder of traces (one rank per file); use_cache=False: no cache entry is read or
    written, and nothing is made in the cache folder (cachedir.kept_out)."""
    p = Path(path)
    if p.is_dir():
        return load_folder(p, use_cache, progress)
    if not p.exists():
        raise TraceError(p, no_such_file(p))
    if not p.is_file():
        raise TraceError(p, "not a regular file")
    if not use_cache:
        with kept_out():  # nothing made in the cache folder: scratch in a temporary folder, no compile behind
            return _parse_file(p, None, progress)
    hit = cache.read(p)
    if hit is not None:
        return hit
    if not cache.ensure_root():
        return _parsed(p, None, progress)
    with ExitStack() as lock:  # one writer per entry: the threads and processes opening it too wait here, then read it
        lock.enter_context(cache.writing(p, on_wait=(lambda: progress(WAITING)) if progress else None))
        hit = cache.read(p)
        return hit if hit is not None else _parsed(p, entry_dir(p), progress, lock)


def _parsed(p: Path, entry: Path | None, progress: Progress | None, lock: ExitStack | None = None) -> TraceColumns:
    """Parse the file and write its cache entry (a gzip file's unzipped bytes go into the cache too); entry None:
    the cache directory cannot be written, and the trace's report says so. A file that cannot be read leaves
    nothing behind, not the file it was unzipped to either. While a command writes behind (behind.py), the entry
    is written beside what follows, and the entry's lock is handed to that writer."""
    unzipped = unzipped_file(entry) if entry else None
    try:
        trace = _parse_file(p, unzipped, progress)
    except BaseException:  # an unreadable file, or an interrupt: no unzipped copy is left without its entry
        if unzipped is not None:
            unzipped.unlink(missing_ok=True)
        raise
    if unzipped is not None and trace.buffers:  # a gzip trace unzipped in memory: an entry could not read it back
        trace.report.cache_problem = (
            f"the cache directory {cache_root()} has no room for the unzipped trace; it was read in memory "
            "and nothing was cached"
        )
    elif lock is not None and behind.active():  # (a lock is held only for an entry that can be written)
        behind.write(p, trace, lock.pop_all())
    elif entry is None or not cache.write(p, trace):
        trace.report.cache_problem = f"the cache directory {cache_root()} cannot be written; nothing was cached"
    return trace


def rank_files(folder: Path) -> list[Path]:
    """The trace files of a folder of ranks, in name order (none: an error)."""
    files = sorted(f for f in folder.iterdir() if f.is_file() and f.name.endswith(TRACE_SUFFIXES))
    if not files:
        from .folder import no_traces

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
    from .folder import merge_ranks

    merged = merge_ranks(str(folder), traces)
    merged.report.notes = problems + merged.report.notes
    return merged


def warm_cache(files: list[Path], progress: Progress | None = None) -> int:
    """Convert the files not yet in the cache side by side in a pool (each writes its entry); how many it did.

    Nothing comes back from the pool but the entries on disk: a file that fails is left for the caller's
    own pass to report, and where no pool can start (a sandbox), the caller converts them one by one.
    """
    cold = [f for f in files if not has_entry(f)]
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


def _parse_file(path: Path, gunzip_to: Path | None, progress: Progress | None) -> TraceColumns:
    """parse.py's decode of one file, imported only here: a cached open imports none of the decode."""
    from .parse import parse_file

    return parse_file(path, gunzip_to, progress)
