"""On-disk cache keyed by path, size, mtime and a hash of the file's head and tail, never beside the trace: the
columns and derived data (in a folder of tracetui's own, see cachedir.py).

An entry holds the trace's columns (.npy, memory-mapped when read back), its header (meta.json,
with the dtype and length of every column) and, under derived/, what the analyses computed from
it (the nesting, links, finished tables), each under its name and the fingerprint of the code that
computed it (name@fingerprint: see model/code_id.py), so a value of other code is absent and
recomputed, and what it replaces is removed. An entry is written to a temporary folder and renamed,
and derived files are renamed into place from temporary names of their own (each writer's: no two
threads or processes share one), so a reader never sees a half-written file. One writer makes an
entry while the threads and processes that open the same trace wait for it (writing(): a lock file
beside the entry, see flight.py), then read what it wrote. Anything that does not check out (an older
format, a truncated or altered file, a changed trace) is ignored and rebuilt, never trusted.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..columns import Events, Flows, Instants, Table
from ..trace import LoadReport, TraceColumns
from ..tracks import Track
from .cachedir import FORMAT_VERSION, drop_gone_writers, entry_dir, lock_file, own_tempdir, prune
from .cachedir import ensure_root as ensure_root  # (the loader's)
from .flight import one_writer, private_file, remove_lock, writer_tag

TABLES: dict[str, type[Table]] = {"x": Events, "inst": Instants, "flow": Flows}

WAIT_FOR_WRITER_S = 300.0  # how long an opener waits for another writer of the same entry before writing its own


class EntryStore:
    """The derived/ folder of a cache entry, as the model's Store (see model/store.py)."""

    def __init__(self, entry: Path) -> None:
        self.dir = entry / "derived"
        self._swept = False  # the folder's leftovers of writers gone, removed before this store first writes

    def get_arrays(self, name: str) -> dict[str, np.ndarray] | None:
        try:
            manifest = json.loads((self.dir / f"{name}.json").read_text())
            arrays = {
                k: np.asarray(spec[2], spec[0])
                if len(spec) == 3
                else np.load(self.dir / f"{name}.{k}.npy", mmap_mode="r")
                for k, spec in manifest.items()
            }
        except (OSError, ValueError, TypeError, IndexError):
            return None
        if any(str(arrays[k].dtype) != spec[0] or list(arrays[k].shape) != spec[1] for k, spec in manifest.items()):
            return None  # altered since it was written
        return arrays

    def put_arrays(self, name: str, arrays: dict[str, np.ndarray]) -> None:
        """Arrays as .npy files (scalars in the manifest: a 0-d array does not map back as one)."""
        manifest: dict[str, list] = {}
        for key, arr in arrays.items():
            if arr.ndim == 0:
                manifest[key] = [str(arr.dtype), [], arr.item()]
                continue
            manifest[key] = [str(arr.dtype), list(arr.shape)]
            self._atomic(f"{name}.{key}.npy", lambda f, arr=arr: np.save(f, np.ascontiguousarray(arr)))
        self._atomic(f"{name}.json", lambda f: f.write(json.dumps(manifest).encode()))  # last: the entry is whole
        self._drop_others(name)

    def get_blob(self, name: str) -> bytes | None:
        try:
            return (self.dir / f"{name}.msgpack").read_bytes()
        except OSError:
            return None

    def put_blob(self, name: str, blob: bytes) -> None:
        self._atomic(f"{name}.msgpack", lambda f: f.write(blob))
        self._drop_others(name)

    def _drop_others(self, name: str) -> None:
        """Remove what other code kept under this value's name (name@another fingerprint): never read again."""
        base, at, _ = name.partition("@")
        if not at:
            return
        try:
            for f in self.dir.glob(f"{glob.escape(base)}@*"):
                if not f.name.startswith(f"{name}."):
                    f.unlink(missing_ok=True)
        except OSError:
            pass

    def _atomic(self, filename: str, write) -> None:
        """Write to a temporary file beside the target, then rename it into place; failures are not fatal."""
        try:
            self.dir.mkdir(exist_ok=True)
            if not self._swept:
                self._swept = True
                drop_gone_writers(self.dir)
            fd, tmp = private_file(self.dir / filename)
            with os.fdopen(fd, "wb") as f:
                write(f)
            os.replace(tmp, self.dir / filename)
        except OSError:
            if "tmp" in locals():
                Path(tmp).unlink(missing_ok=True)


@contextmanager
def writing(path: Path, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Be the one writer of the file's entry while the block runs: other threads and processes opening the same
    trace wait here (on_wait called once when they start to), then find the entry written (the block should read
    it again before making it)."""
    entry = entry_dir(path)
    lock = lock_file(entry)
    try:
        with one_writer(lock, WAIT_FOR_WRITER_S, on_wait):
            yield
    finally:
        if not entry.exists():  # nothing was written (the file could not be read): no lock file is left for it
            remove_lock(lock)


def read_blob(path: Path, name: str) -> tuple[EntryStore, LoadReport] | None:
    """The store and load report of the file's current entry, without mapping its columns (None: no entry)."""
    try:
        entry = entry_dir(path)
        meta = json.loads((entry / "meta.json").read_text())
        if meta.get("format") != FORMAT_VERSION or not (entry / "derived" / f"{name}.msgpack").is_file():
            return None
        report = LoadReport(**meta["report"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    report.from_cache = True
    return EntryStore(entry), report


def read(path: Path) -> TraceColumns | None:
    """The cached trace, or None when absent, stale, of another format or not as it was written."""
    entry = entry_dir(path)
    try:
        meta = json.loads((entry / "meta.json").read_text())
        if meta.get("format") != FORMAT_VERSION:
            return None
        cols = {part: _read_table(entry, part, table, meta["columns"][part]) for part, table in TABLES.items()}
        chunks = np.load(entry / "chunks.npy")
        if not all(os.path.isabs(source) and Path(source).exists() for source in meta["sources"]):
            return None  # (an older entry may name the file as its first load was given it: read the trace again)
        trace = _from_meta(str(path), meta, cols, chunks)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    trace.store = EntryStore(entry)
    return trace


def _read_table(entry: Path, part: str, table: type[Table], manifest: dict) -> Table:
    """A table's columns, memory-mapped; ValueError unless each has the dtype and length written down."""
    cols = {}
    for key, dtype in table.dtypes().items():
        arr = np.load(entry / f"{part}.{key}.npy", mmap_mode="r")
        want_dtype, want_len = manifest[key]
        if arr.dtype != np.dtype(dtype) or str(arr.dtype) != want_dtype or arr.shape != (want_len,):
            raise ValueError(f"{part}.{key} is not as written")
        cols[key] = arr
    return table(**cols)


def _from_meta(path: str, meta: dict, cols: dict, chunks: np.ndarray) -> TraceColumns:
    tracks = [Track(**{**t, "order": tuple(t["order"])}) for t in meta["tracks"]]
    report = LoadReport(**meta["report"])
    report.from_cache = True
    return TraceColumns(
        path=path,
        x=cols["x"],
        inst=cols["inst"],
        flow=cols["flow"],
        names=meta["names"],
        cat_names=meta["cat_names"],
        shapes=meta["shapes"],
        tracks=tracks,
        chunks=chunks,
        sources=meta["sources"],
        devices=meta["devices"],
        ranks=meta["ranks"],
        flags=meta["flags"],
        report=report,
    )


def write(path: Path, trace: TraceColumns) -> bool:
    """Write the entry (commit) and give the trace its store; False if it failed."""
    try:
        commit(path, trace)
    except OSError:
        return False
    trace.store = EntryStore(entry_dir(path))
    return True


def commit(path: Path, trace: TraceColumns) -> None:
    """Write the trace's columns as the file's entry, atomically (temp dir, then rename); OSError when it cannot
    (a full disk: what was half written is removed).

    Processes opening one trace together each write an entry; the first sound one in place stays (it is the
    same file's), so no process removes an entry that another is using or adding derived values to.
    """
    entry = entry_dir(path)
    tmp = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        if read(path) is None:
            tmp = own_tempdir(f".tmp-{writer_tag()}.", entry.parent)
            _write_entry(tmp, trace)
            _put_in_place(path, tmp, entry)
        prune(entry.parent)
    except OSError:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        raise


def _put_in_place(path: Path, tmp: Path, entry: Path) -> None:
    """Rename the written entry into place. An entry already there is kept when it reads back (another process
    wrote it meanwhile); else it is moved aside first, in one rename, and removed (a stale or broken entry)."""
    try:
        os.replace(tmp, entry)
        return
    except OSError:
        if read(path) is not None:
            shutil.rmtree(tmp, ignore_errors=True)
            return
    aside = own_tempdir(".tmp-old-", entry.parent)
    try:
        os.replace(entry, aside / "entry")
    except FileNotFoundError:
        pass
    shutil.rmtree(aside, ignore_errors=True)
    try:
        os.replace(tmp, entry)
    except OSError:
        if read(path) is None:
            raise
        shutil.rmtree(tmp, ignore_errors=True)


def _write_entry(tmp: Path, trace: TraceColumns) -> None:
    columns: dict[str, dict] = {}
    for part in TABLES:
        columns[part] = {}
        for key, arr in getattr(trace, part).columns().items():
            np.save(tmp / f"{part}.{key}.npy", np.ascontiguousarray(arr))
            columns[part][key] = [str(arr.dtype), len(arr)]
    np.save(tmp / "chunks.npy", trace.chunks)
    report = asdict(trace.report)
    report.pop("from_cache", None)
    meta = {
        "format": FORMAT_VERSION,
        "columns": columns,
        "names": trace.names,
        "cat_names": trace.cat_names,
        "shapes": trace.shapes,
        "tracks": [asdict(t) for t in trace.tracks],
        "sources": trace.sources,
        "devices": trace.devices,
        "ranks": trace.ranks,
        "flags": trace.flags,
        "report": report,
    }
    (tmp / "meta.json").write_text(json.dumps(meta))
