"""A cheap stand-in for code fingerprints on a re-open: the stamp of the package's source files as they are.

Computing a stored value's fingerprint (code_id.py) walks the code it depends on: 30-60 ms of a cached
command's start, spent to find a name the entry already holds. The stamp hashes the path, size and modification
time of every file of the package (a few hundred stats, about 2 ms): its source, and the data its code reads (the GPU
table, data/gpus.toml, is a module value of roofline/peaks.py that a fingerprint holds: with .py files alone, a
changed table left the roofline and explain's findings of a cached trace as the old table made them). A cache entry
keeps, under the stamp, the fingerprint each stored value was found under, so a re-open with the same files reads
the names back instead of walking the code. Any change to any file of the package makes a new stamp, and the walk
runs again.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the tui package


@functools.cache
def stamp() -> str:
    """16 hex digits naming the package's files as they are now (path, size, mtime)."""
    digest = hashlib.sha256(str(ROOT).encode())
    for path, size, mtime in sorted(_sources(str(ROOT))):
        digest.update(f"{path}\0{size}\0{mtime}\0".encode(errors="surrogatepass"))
    return digest.hexdigest()[:16]


def _sources(folder: str) -> list[tuple[str, int, int]]:
    """(path, size, mtime in ns) of every file under folder but Python's own caches (__pycache__: bytecode, and
    numba's compiled scan)."""
    found = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    found += _sources(entry.path)
            elif not entry.name.endswith((".pyc", ".pyo")):
                st = entry.stat()
                found.append((entry.path, st.st_size, st.st_mtime_ns))
    return found
