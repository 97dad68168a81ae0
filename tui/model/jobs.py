"""A job of many ranks read one rank at a time: each file converted and summarized on its own (a
process pool here, or an existing Dask cluster), then reduced to the job row. Only the per-rank
summaries are held together, never the ranks' events.

The per-rank work is `rank_summary`, a top-level function of a path: what a pool or a Dask worker
runs. A rank whose cache entry has its summary is read in this process (a few milliseconds).
"""

from __future__ import annotations

import os
from concurrent.futures import BrokenExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .analyses.diff import Diff, diff
from .analyses.ranks import Job, RankRow, job
from .analyses.results import Results
from .errors import TraceError
from .load import cache
from .load.folder import resolve_ranks
from .load.loader import load_trace, rank_files
from .load.pool import pool_size, spawn_pool
from .load.workers import quiet_spawns, running
from .store import Blob

CONNECT_TIMEOUT_S = 10


@dataclass
class RankResult:
    """What one rank's task hands back: its row, or the problem that left it out, and its load warning."""

    file: str
    row: RankRow | None = None
    problem: str = ""
    warning: str = ""


@dataclass
class JobReport:
    rows: list[RankRow]
    job: Job
    engine: str
    notes: list[str] = field(default_factory=list)


class SchedulerError(TraceError):
    """The Dask scheduler cannot be reached."""


ROW = Blob(RankRow)


def rank_summary(path: str, use_cache: bool = True) -> RankResult:
    """Load one rank file (through its cache entry) and summarize it; a bad file is a problem, not an error.

    A rank whose cache entry holds its row is answered from that row alone: its columns are not even mapped.
    """
    name = Path(path).name
    kept = cached_row(path) if use_cache else None
    if kept is not None:
        return kept
    try:
        results = Results(load_trace(path, use_cache))
        if not results.trace.n:
            return RankResult(name, problem=results.trace.report.warning() or "no events")
        row = results.rank_row
    except TraceError as exc:
        return RankResult(name, problem=exc.problem)
    row.file = name
    return RankResult(name, row, warning=results.trace.report.warning() or "")


def cached_row(path: str) -> RankResult | None:
    """The rank's row from its cache entry alone, with its load warning (None: not cached, or not sound)."""
    name = Results.rank_row.stored_name(Results)  # as Results keeps it: under the fingerprint of its code
    kept = cache.read_blob(Path(path), name)
    row = ROW.load(kept[0], name, 0) if kept else None
    if kept is None or row is None:
        return None
    row.file = Path(path).name
    return RankResult(row.file, row, warning=kept[1].warning() or "")


def run_job(
    folder: str | Path, use_cache: bool = True, engine: str = "local", scheduler: str = "", workers: int = 0
) -> JobReport:
    """Every rank of a folder summarized (by the local pool or the Dask cluster at scheduler), then the job."""
    files = [str(f) for f in rank_files(Path(folder))] if Path(folder).is_dir() else [str(folder)]
    if engine == "dask":
        results = _on_dask(files, use_cache, scheduler)
    else:
        results = _on_pool(files, use_cache, workers)
    return _reduce(Path(folder), results, engine)


def _on_pool(files: list[str], use_cache: bool, workers: int) -> list[RankResult]:
    """Ranks already cached are read here; the others go to a process pool, one rank per task."""
    done = {f: r for f in files if use_cache and (r := cached_row(f)) is not None}
    todo = [f for f in files if f not in done]
    n = pool_size([Path(f) for f in todo], workers)
    if n > 1:
        try:
            with running(spawn_pool(n)) as pool:
                with quiet_spawns():  # (map submits every job now: the workers spawn here)
                    summaries = pool.map(rank_summary, todo, [use_cache] * len(todo))
                done |= dict(zip(todo, summaries, strict=True))
        except (OSError, ValueError, BrokenExecutor):  # no worker processes here: one rank after another
            pass
    done |= {f: rank_summary(f, use_cache) for f in todo if f not in done}
    return [done[f] for f in files]


def _on_dask(files: list[str], use_cache: bool, scheduler: str) -> list[RankResult]:
    """Map the ranks over an existing Dask cluster; every worker must see the files at the same paths."""
    try:
        from dask.distributed import Client
    except ImportError as exc:
        raise TraceError(scheduler or "dask", "the dask engine needs the extra: pip install 'tracetui[dask]'") from exc
    if not scheduler:
        raise TraceError("dask", "--engine dask needs --scheduler ADDRESS (e.g. tcp://10.0.0.5:8786)")
    try:
        client = Client(scheduler, timeout=f"{CONNECT_TIMEOUT_S}s")
    except (OSError, TimeoutError) as exc:
        raise SchedulerError(scheduler, f"the Dask scheduler cannot be reached within {CONNECT_TIMEOUT_S} s") from exc
    with client:
        futures = client.map(rank_summary, [os.path.abspath(f) for f in files], use_cache=use_cache, pure=False)
        return list(client.gather(futures))


def _reduce(folder: Path, results: list[RankResult], engine: str) -> JobReport:
    """Ranks numbered (claims resolved), warnings gathered, the job row computed."""
    rows = [r.row for r in results if r.row is not None]
    notes = [f"{r.file} was left out ({r.problem})" for r in results if r.row is None]
    notes += [f"{r.file}: {r.warning}" for r in results if r.warning]
    if not rows:
        raise TraceError(folder, f"no rank file could be read ({'; '.join(notes) or 'no files'})")
    ranks, claims = resolve_ranks([(r.file, r.rank, r.rank_from) for r in rows])
    for row, rank in zip(rows, ranks, strict=True):
        row.rank = rank
    rows.sort(key=lambda r: r.rank)
    return JobReport(rows, job(rows, notes + claims), engine)


def compare_pair(merged: Results, rank: int | None = None) -> tuple[Diff, tuple[str, str]]:
    """A folder opened as one trace: a typical rank (A) against `rank`, or else the straggler, else the slowest
    rank (B), each loaded from its own file."""
    rows = sorted(merged.rank_rows, key=lambda r: r.step_us)
    picked = next((r for r in rows if r.rank == rank), None) or max(rows, key=lambda r: (r.straggler, r.step_us))
    others = [r for r in rows if r is not picked]
    typical = others[len(others) // 2]
    folder = Path(merged.trace.path)
    a, b = (Results(load_trace(folder / r.file, merged.trace.store is not None)) for r in (typical, picked))
    why = " (straggler)" if picked.straggler else (" (slowest)" if rank is None else "")
    return diff(a, b), (f"rank {typical.rank} (typical) · {typical.file}", f"rank {picked.rank}{why} · {picked.file}")
