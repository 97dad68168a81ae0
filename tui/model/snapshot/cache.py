"""A snapshot's columns in the on-disk cache (model/load/cache.py's folder, keyed by path, size and mtime), so
opening it again reads numbers, not a pickle.

An entry is a folder: columns.npz (every numeric column, read without pickle: allow_pickle=False) and meta.json
(the frames' names and files, the texts, the allocator settings and annotations, the format version). It is
written to a temporary folder and renamed; an entry that does not read back whole is ignored and rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np

from ..load.cachedir import cache_root, ensure_root, file_key, own_tempdir, prune
from .columns import Blocks, History, Segments, Snapshot, Stacks

FORMAT = 1  # bump when the columns change
_HISTORY = ("action", "addr", "size", "stream", "time_ns", "stack", "device_free", "extra")
_SEGMENTS = ("device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream")
_SEGMENT_FLAGS = ("small", "expandable", "stack")
_BLOCKS = ("segment", "address", "size", "requested", "state", "stack")


def entry_of(path: str | Path) -> Path:
    """The cache entry of the file as it is now."""
    key = f"snapshot|{file_key(Path(path))}|{FORMAT}"
    return cache_root() / ("snap-" + hashlib.sha256(key.encode()).hexdigest()[:32])


def read(path: str | Path) -> Snapshot | None:
    """The cached columns of the file (None: none, or an entry that does not read back whole)."""
    try:
        entry = entry_of(path)
        meta = json.loads((entry / "meta.json").read_text())
        if meta.get("format") != FORMAT:
            return None
        with np.load(entry / "columns.npz", allow_pickle=False) as z:
            cols = {k: z[k] for k in z.files}
        return _from(str(path), meta, cols)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write(path: str | Path, snap: Snapshot) -> bool:
    """Store the columns (atomically: a temporary folder, then a rename); False when the cache cannot be written."""
    if not ensure_root():
        return False
    tmp: Path | None = None
    try:
        entry = entry_of(path)
        tmp = own_tempdir(".tmp-snap-", entry.parent)
        cols, meta = _to(snap)
        np.savez(tmp / "columns.npz", **cols)  # type: ignore[arg-type]  # numpy's stubs read **cols as allow_pickle
        (tmp / "meta.json").write_text(json.dumps(meta))
        if entry.exists():
            shutil.rmtree(entry, ignore_errors=True)
        os.replace(tmp, entry)
        prune(entry.parent)
        return True
    except (OSError, TypeError, ValueError):
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        return False


def _to(snap: Snapshot) -> tuple[dict[str, np.ndarray], dict]:
    s = snap.stacks
    cols: dict[str, np.ndarray] = {
        "stack_offsets": np.array(s.offsets, np.int64),
        "stack_frames": np.array(s.frame_ids, np.int64),
        "frame_lines": np.array(s.lines, np.int64),
        "pool": np.array(snap.segments.pool, np.int64).reshape(-1, 2),
    }
    for name in (*_SEGMENTS, *_SEGMENT_FLAGS):
        cols[f"seg_{name}"] = getattr(snap.segments, name)
    for name in _BLOCKS:
        cols[f"blk_{name}"] = getattr(snap.blocks, name)
    for d, h in snap.histories.items():
        for name in _HISTORY:
            cols[f"h{d}_{name}"] = getattr(h, name)
    meta = {
        "format": FORMAT,
        "names": s.names,
        "files": s.files,
        "texts": snap.texts,
        "settings": snap.settings,
        "annotations": snap.annotations,
        "timed": snap.timed,
        "skipped": snap.skipped,
        "devices": sorted(snap.histories),
    }
    return cols, meta


def _from(path: str, meta: dict, cols: dict[str, np.ndarray]) -> Snapshot:
    stacks = Stacks(
        names=list(meta["names"]),
        files=list(meta["files"]),
        lines=cols["frame_lines"].tolist(),
        offsets=cols["stack_offsets"].tolist(),
        frame_ids=cols["stack_frames"].tolist(),
    )
    segments = Segments(
        **{name: cols[f"seg_{name}"] for name in (*_SEGMENTS, *_SEGMENT_FLAGS)},
        pool=[(int(a), int(b)) for a, b in cols["pool"].tolist()],
    )
    blocks = Blocks(**{name: cols[f"blk_{name}"] for name in _BLOCKS})
    histories = {int(d): History(int(d), *(cols[f"h{d}_{name}"] for name in _HISTORY)) for d in meta["devices"]}
    return Snapshot(
        path=path,
        stacks=stacks,
        segments=segments,
        blocks=blocks,
        histories=histories,
        texts=list(meta["texts"]),
        settings=meta["settings"],
        annotations=meta["annotations"],
        timed=bool(meta["timed"]),
        skipped=int(meta["skipped"]),
    )
