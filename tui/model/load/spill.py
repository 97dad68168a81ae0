"""A decoded part's columns handed from a worker process to the parent in a file, never pickled.

The worker writes every column of its part, one after another, into one file and sends back only
where each lies; the parent reads each straight into its slice of the merged column (readinto: no
copy in between, nothing mapped) and removes the file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..columns import Table


@dataclass
class Spill:
    """Where a part's columns lie in its file: (table, column) -> (offset, dtype, length)."""

    path: str
    layout: dict[tuple[str, str], tuple[int, str, int]] = field(default_factory=dict)

    def length(self, table: str) -> int:
        return next((n for (t, _), (_, _, n) in self.layout.items() if t == table), 0)

    def fill(self, table: str, key: str, out: np.ndarray) -> None:
        """Read one column into `out` (its length and dtype as written)."""
        offset, dtype, n = self.layout[(table, key)]
        if n != len(out) or np.dtype(dtype) != out.dtype:
            raise ValueError(f"{table}.{key} was spilled as {n} {dtype}, not {len(out)} {out.dtype}")
        view, done = memoryview(out).cast("B"), 0  # type: ignore[arg-type]
        with open(self.path, "rb", buffering=0) as f:
            f.seek(offset)
            while done < len(view):
                got = f.readinto(view[done:])
                if not got:
                    raise OSError(f"{self.path} ended early")
                done += got

    def remove(self) -> None:
        """Remove the file (its folder is the decode's: other parts may still be written there)."""
        Path(self.path).unlink(missing_ok=True)


def spill(tables: dict[str, Table], folder: str) -> Spill:
    """Write the tables' columns into a new file in folder."""
    fd, path = tempfile.mkstemp(prefix="part-", suffix=".bin", dir=folder)
    out = Spill(path)
    offset = 0
    with os.fdopen(fd, "wb") as f:
        for name, table in tables.items():
            for key, arr in table.columns().items():
                data = np.ascontiguousarray(arr)
                f.write(memoryview(data).cast("B") if data.size else b"")  # type: ignore[arg-type]
                out.layout[(name, key)] = (offset, data.dtype.str, len(data))
                offset += data.nbytes
    return out


def scratch_folder(preferred: Path | None) -> str:
    """A new folder for spilled parts: in `preferred` (the cache directory) when it can be written and the load
    does not keep out of it (cachedir.kept_out), else a private one in the system's temporary directory, its process
    and thread in its name too. Made with the stops held: a stop that comes meanwhile removes it and is raised, so no
    empty folder is left behind (a fresh-eyes run: 1 of 20 SIGTERM at a 100 MB load's 0.22 s)."""
    from .workers import held_stops, raise_held

    with held_stops() as caught:
        folder = _new_scratch(preferred)
    if caught:
        shutil.rmtree(folder, ignore_errors=True)
        raise_held(caught)
    return folder


def _new_scratch(preferred: Path | None) -> str:
    from .flight import writer_tag

    if preferred is not None:
        try:
            from .cachedir import ensure_root, is_tagged, own_tempdir

            if ensure_root() and is_tagged(preferred):  # only in tracetui's own folder; its process in its name: a
                return str(own_tempdir(f".parts-{writer_tag()}.", preferred))  # kill's leftover goes once it is gone
        except OSError:
            pass
    return tempfile.mkdtemp(prefix=f"tracetui-parts-{writer_tag()}.")
