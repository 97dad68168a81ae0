"""On-disk columnar cache keyed by path, size and mtime, never beside the trace."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..columns import Events, Flows, Instants, Table
from ..trace import LoadReport, Trace
from ..tracks import Track

TABLES: dict[str, type[Table]] = {"x": Events, "inst": Instants, "flow": Flows}

FORMAT_VERSION = 5
KEEP_ENTRIES = 32  # the most recently written traces kept; older entries are pruned


def cache_root() -> Path:
    """TRACETUI_CACHE_DIR, else the user's cache directory."""
    env = os.environ.get("TRACETUI_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("tracetui"))


def ensure_root() -> bool:
    """Create the cache directory; False when it cannot be written."""
    root = cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(root, os.W_OK)


def entry_dir(path: Path) -> Path:
    """The cache entry for a file as it is now (its path, size and mtime)."""
    st = path.stat()
    key = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{FORMAT_VERSION}"
    return cache_root() / hashlib.sha256(key.encode()).hexdigest()[:32]


def read(path: Path) -> Trace | None:
    """The cached trace, or None when absent, stale or corrupt."""
    entry = entry_dir(path)
    try:
        meta = json.loads((entry / "meta.json").read_text())
        cols = {
            part: table(**{k: np.load(entry / f"{part}.{k}.npy", mmap_mode="r") for k in table.dtypes()})
            for part, table in TABLES.items()
        }
        chunks = np.load(entry / "chunks.npy")
        for source in meta["sources"]:
            if not Path(source).exists():
                return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return _from_meta(str(path), meta, cols, chunks)


def _from_meta(path: str, meta: dict, cols: dict, chunks: np.ndarray) -> Trace:
    tracks = [Track(**{**t, "order": tuple(t["order"])}) for t in meta["tracks"]]
    report = LoadReport(**meta["report"])
    report.from_cache = True
    return Trace(
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


def write(path: Path, trace: Trace) -> None:
    """Write the entry atomically (temp dir, then rename); failures are not fatal."""
    entry = entry_dir(path)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=entry.parent))
        _write_entry(tmp, trace)
        if entry.exists():
            shutil.rmtree(entry, ignore_errors=True)
        os.replace(tmp, entry)
        prune(entry.parent)
    except OSError:
        shutil.rmtree(locals().get("tmp", entry.parent / ".none"), ignore_errors=True)


def prune(root: Path, keep: int | None = None) -> None:
    """Remove all but the `keep` (default KEEP_ENTRIES) newest entries and their unzipped sources."""
    keep = KEEP_ENTRIES if keep is None else keep
    entries = sorted(
        (p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for old in entries[keep:]:
        shutil.rmtree(old, ignore_errors=True)
        old.with_suffix(".src.json").unlink(missing_ok=True)


def _write_entry(tmp: Path, trace: Trace) -> None:
    for part in TABLES:
        for key, arr in getattr(trace, part).columns().items():
            np.save(tmp / f"{part}.{key}.npy", np.ascontiguousarray(arr))
    np.save(tmp / "chunks.npy", trace.chunks)
    report = asdict(trace.report)
    report.pop("from_cache", None)
    meta = {
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
