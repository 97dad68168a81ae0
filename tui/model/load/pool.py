"""Processes for many traces at once (the ranks of a job): how many fit, and the pool that runs them.

A pool has one process per core, but no more than the available memory holds: converting a trace
peaks at about RSS_PER_BYTE times its JSON, interpreter included (benchmarks/bench_ranks.py).
Processes are spawned, never forked (the app loads from a thread), and each decodes its trace in
its own process only, since the traces already run side by side.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

RSS_PER_BYTE = 3.0


def pool_size(files: list[Path], workers: int = 0) -> int:
    """Processes for these traces: `workers` if given, else one per core, as many as memory holds at once."""
    if not files:
        return 0
    if workers:
        return min(workers, len(files))
    need = RSS_PER_BYTE * max(json_bytes(f) for f in files)
    free = available_memory()
    fits = int(free // need) if free and need else len(files)
    return max(1, min(os.cpu_count() or 1, len(files), fits))


def json_bytes(path: Path) -> int:
    """A trace's JSON size: the file's, or for a .gz the size its trailer records (modulo 4 GiB)."""
    try:
        size = path.stat().st_size
        if path.name.endswith(".gz") and size >= 18:
            with open(path, "rb") as f:
                f.seek(-4, os.SEEK_END)
                return max(int.from_bytes(f.read(4), "little"), size)
        return size
    except OSError:
        return 0


def available_memory() -> int:
    """Bytes of memory available now (0 where the system does not say)."""
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


def one_process_decode() -> None:
    """In a pool process: traces run side by side, so each decodes in its own process only."""
    os.environ["TRACETUI_DECODE_PROCS"] = "1"


def spawn_pool(processes: int) -> ProcessPoolExecutor:
    """A pool of spawned processes, each decoding its trace alone (workers.py: Ctrl-C is the parent's, and a
    worker exits with its parent; submit from within quiet_spawns)."""
    from .workers import worker_pool

    return worker_pool(processes, one_process_decode)
