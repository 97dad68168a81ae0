"""Reading an allocator snapshot safely: a pickle of plain data only (nothing imported, nothing run), or its JSON.

torch writes a snapshot with `pickle.dump` of a dict (`torch.cuda.memory._dump_snapshot`), and its own
readers load it with `pickle.load`, which runs whatever the file asks for. Here a restricted unpickler
builds dicts, lists, tuples, strings, numbers, booleans and None, and refuses the first thing it would
have to import (a class, a function: `os.system` in a hostile file) with one line naming the file and
what it asked for; nothing of the file runs. A JSON dump of the same dict reads too, and either may be
gzipped. Progress is the share of the file's bytes read so far.
"""

from __future__ import annotations

import gzip
import io
import pickle
import re
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from ..errors import TraceError, no_such_file

Progress = Callable[[float], None]
HOW_TO_RECORD = (
    "record one with torch.cuda.memory._record_memory_history() before the run and "
    "torch.cuda.memory._dump_snapshot('snapshot.pickle') after it"
)
PICKLE_SUFFIXES = (".pickle", ".pkl", ".pickle.gz", ".pkl.gz")
_JSON_SNAPSHOT = re.compile(rb'^\s*\{\s*"(segments|device_traces|allocator_settings|external_annotations)"\s*:')
SNIFF_BYTES = 4096


class Refused(Exception):
    """The pickle asked to import something: a snapshot holds plain data only."""


class PlainUnpickler(pickle.Unpickler):
    """Builds containers and scalars only: every import the pickle asks for is refused before anything runs."""

    def find_class(self, module: str, name: str) -> Any:
        raise Refused(f"{module}.{name}")

    def persistent_load(self, pid: Any) -> Any:
        raise Refused("a persistent object")


class _Counting(io.RawIOBase):
    """A file read through, telling progress (the share of the file read) as the unpickler takes its frames."""

    def __init__(self, raw, total: int, progress: Progress | None) -> None:
        self.raw, self.total, self.progress = raw, max(total, 1), progress
        self.done = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        n = self.raw.readinto(b)
        self._advance()
        return n or 0

    def _advance(self) -> None:
        if self.progress is not None:
            underlying: Any = getattr(self.raw, "fileobj", None) or self.raw  # a gzip file: its compressed bytes
            self.progress(min(underlying.tell() / self.total, 1.0))


def is_gzip(head: bytes) -> bool:
    return head[:2] == b"\x1f\x8b"


def head_of(path: str | Path, n: int = SNIFF_BYTES) -> bytes:
    """The first n bytes of the file, unzipped when it is gzipped (b"" when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(n)
            if not is_gzip(raw):
                return raw
            f.seek(0)
            with gzip.GzipFile(fileobj=f) as g:
                return g.read(n)
    except (OSError, EOFError, zlib.error):  # unreadable, or a broken gzip stream: no snapshot's head
        return b""


def is_snapshot(path: str | Path) -> bool:
    """A file that is an allocator snapshot (a pickle, or JSON whose first key is a snapshot's), not a trace.

    A file named .pickle or .pkl counts whatever it holds, so a damaged one is read (and said to be damaged)
    as a snapshot rather than as a trace.
    """
    p = Path(path)
    if not p.is_file():
        return False
    if p.name.lower().endswith(PICKLE_SUFFIXES):
        return True
    head = head_of(p)
    return head[:1] == b"\x80" or bool(_JSON_SNAPSHOT.match(head))


def read_plain(path: str | Path, progress: Progress | None = None) -> dict:
    """The snapshot's dict, read without running anything; TraceError (one line naming the file) otherwise."""
    p = Path(path)
    try:
        size = p.stat().st_size
        with open(p, "rb") as f:
            head = f.read(2)
            f.seek(0)
            if is_gzip(head):
                with gzip.GzipFile(fileobj=f) as g:
                    return _checked(p, _decode(p, g, size, progress))
            return _checked(p, _decode(p, f, size, progress))
    except FileNotFoundError:
        raise TraceError(p, no_such_file(p)) from None
    except IsADirectoryError:
        raise TraceError(p, "a folder, not a snapshot file") from None
    except (gzip.BadGzipFile, EOFError) as exc:
        raise TraceError(p, f"a damaged gzip file ({exc})") from None
    except OSError as exc:
        raise TraceError(p, f"cannot be read ({exc.strerror or exc})") from None


def _decode(p: Path, f, size: int, progress: Progress | None) -> Any:
    head = f.peek(16)[:16] if hasattr(f, "peek") else b""
    if not head:
        raise TraceError(p, "an empty file, not a memory snapshot")
    if head[:1] in (b"{", b"[", b" ", b"\n", b"\r", b"\t"):
        return _json(p, f.read())
    reader = io.BufferedReader(_Counting(f, size, progress), buffer_size=1 << 20)
    try:
        return PlainUnpickler(reader).load()
    except Refused as exc:
        raise TraceError(
            p, f"refused: the pickle asks to import {exc} (a memory snapshot holds plain data only); nothing was run"
        ) from None
    except (EOFError, pickle.UnpicklingError) as exc:
        if isinstance(exc, EOFError) or "truncated" in str(exc):
            raise TraceError(p, f"truncated: the pickle ends after {size:,} bytes, before its end") from None
        raise TraceError(p, _damaged(head, exc)) from None
    except (ValueError, TypeError, AttributeError, IndexError, KeyError, MemoryError, RecursionError) as exc:
        raise TraceError(p, _damaged(head, exc)) from None


def _damaged(head: bytes, exc: Exception) -> str:
    """What to say of a file the unpickler could not read: a damaged pickle, or not a pickle at all."""
    if head[:1] == b"\x80":  # a pickle of protocol 2 or later (torch writes these)
        return f"a damaged pickle ({type(exc).__name__}: {exc})"
    return f"not a memory snapshot: neither a pickle nor JSON (it starts with {head[:8]!r})"


def _json(p: Path, data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        what = "truncated" if exc.pos >= len(data.rstrip()) - 1 else "not valid JSON"
        raise TraceError(p, f"{what}: {exc}") from None


def _checked(p: Path, doc: Any) -> dict:
    """The document when it has the shape of a snapshot (a dict with segments or device_traces)."""
    if not isinstance(doc, dict):
        raise TraceError(p, f"not a memory snapshot: it holds a {type(doc).__name__}, not a dict of segments")
    if not isinstance(doc.get("segments", []), list) or not isinstance(doc.get("device_traces", []), list):
        raise TraceError(p, "not a memory snapshot: its segments or device_traces are not lists")
    if "segments" not in doc and "device_traces" not in doc:
        keys = ", ".join(map(str, list(doc)[:5])) or "none"
        raise TraceError(p, f"not a memory snapshot: no segments or device_traces (its keys: {keys})")
    return doc
