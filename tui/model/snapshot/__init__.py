"""Allocator snapshots (torch.cuda.memory._dump_snapshot): read safely, as columns, and what they say.

read (no code of the file runs) -> columns (interned stacks, one row per trace entry) -> history (the
allocations and the curves) -> state (segments and blocks at a moment) -> report, diff, join, and the
viewer's stacked timeline (timeline.py). No Textual, no torch, no pickle.load of anything but plain data.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import TYPE_CHECKING

from .read import Progress, is_snapshot, read_plain

if TYPE_CHECKING:
    from .columns import Snapshot

__all__ = ["is_snapshot", "open_snapshot"]
READ_SHARE = 0.7  # of a load's progress: reading the file; the rest is building the columns


def open_snapshot(path: str | Path, progress: Progress | None = None, cache: bool = True) -> Snapshot:
    """A snapshot read into columns; TraceError (one line naming the file) when it cannot be.

    With cache, the columns come from the on-disk cache when the file was read before (path, size and mtime
    unchanged), and are stored there after a first read. The cycle collector is paused while reading: the
    millions of dicts a big snapshot unpickles into make no cycles, and collections walking them took 60% of
    the read (benchmarks/bench_snapshot.py)."""
    from . import cache as stored
    from .columns import build

    if cache and os.path.isfile(path) and (found := stored.read(path)) is not None:
        if progress:
            progress(1.0)
        return found

    was = gc.isenabled()
    gc.disable()
    try:
        read = (lambda f: progress(READ_SHARE * f)) if progress else None
        doc = read_plain(path, read)
        built = (lambda f: progress(READ_SHARE + (1 - READ_SHARE) * f)) if progress else None
        snap = build(str(path), doc, built)
    finally:
        if was:
            gc.enable()
    if cache:
        stored.write(path, snap)
    if progress:
        progress(1.0)
    return snap
