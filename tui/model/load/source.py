"""Bytes of a trace file: mmap or gunzip, chunks of the events array, and reading them."""

from __future__ import annotations

import mmap
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import TraceError
from .flight import private_file
from .schema import TopLevel

CHUNK_BYTES = 4 << 20
GZIP_MAGIC = b"\x1f\x8b"
# The boundary between two events: a closing brace, a comma, the next opening brace.
EVENT_CUT = re.compile(rb"\}\s*,\s*(?=\{)")


@dataclass
class Source:
    """The decompressed bytes of one trace and where its events lie in them."""

    path: Path
    buf: bytes | mmap.mmap
    start: int = 0
    end: int = 0
    top: TopLevel = field(default_factory=TopLevel)
    truncated: bool = False
    gz: bool = False
    gz_truncated: bool = False
    notes: list[str] = field(default_factory=list)  # what salvaging its head lost (see locate.py)


def gunzip(path: Path, out: Path | None) -> tuple[bytes | mmap.mmap, bool]:
    """Decompress a gzip file (to `out` when given), salvaging a truncated stream."""
    dec = zlib.decompressobj(wbits=31)
    parts: list[bytes] = []
    partial, sink = None, None
    if out is not None:  # this writer's own file (process, thread, random part): renamed onto out when whole
        fd, name = private_file(out)
        partial, sink = Path(name), os.fdopen(fd, "wb")
    try:
        with open(path, "rb") as f:
            while block := f.read(1 << 22):
                try:
                    data = dec.decompress(block)
                except zlib.error as exc:
                    raise TraceError(path, f"corrupt gzip data ({exc})") from None
                sink.write(data) if sink else parts.append(data)
                if dec.eof:
                    break
        truncated = not dec.eof
    except BaseException:
        if partial:
            partial.unlink(missing_ok=True)
        raise
    finally:
        if sink:
            sink.close()
    if out is None or partial is None:
        return b"".join(parts), truncated
    os.replace(partial, out)
    return map_file(out), truncated


def map_file(path: Path) -> bytes | mmap.mmap:
    """Memory-map a file read-only (an empty file maps to b'')."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return b""
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


class ChunkReader:
    """Reads chunks of a trace as '[' + their bytes + ']' (a JSON array), copied once into one reused buffer.

    From a file it reads with pread, so nothing of the file stays mapped in the process (its pages are
    the page cache's, not the process's); from a buffer (an unzipped trace kept in memory) it copies.
    The view it returns holds until the next read: whatever must outlive the chunk is copied out of it
    (the decode keeps no msgspec.Raw past the chunk's columns).
    """

    def __init__(self, path: Path | None = None, buf: bytes | mmap.mmap | None = None) -> None:
        self.buf = buf
        self.fd = os.open(path, os.O_RDONLY) if path is not None else -1
        self.space = bytearray()  # grown to the largest chunk; reused, so its pages are touched once

    def __call__(self, start: int, end: int) -> memoryview:
        size = end - start + 2
        if len(self.space) < size:
            self.space = bytearray(size + (size >> 3))
        data = memoryview(self.space)[:size]
        data[0], data[-1] = 0x5B, 0x5D
        if self.fd < 0:
            data[1:-1] = memoryview(self.buf)[start:end]  # type: ignore[arg-type]
            return data
        view, done = data[1:-1], 0
        while done < len(view):
            got = os.preadv(self.fd, [view[done:]], start + done)
            if got <= 0:
                raise OSError(f"the file ended {end - start - done} bytes early (it changed while being read)")
            done += got
        return data

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> ChunkReader:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()


def split_chunks(src: Source, chunk_bytes: int | None = None) -> list[tuple[int, int]]:
    """Cut the events array into byte ranges of about chunk_bytes at event boundaries."""
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    cuts: list[tuple[int, int]] = []
    begin = src.start
    while begin < src.end:
        m = EVENT_CUT.search(src.buf, begin + chunk_bytes, src.end) if begin + chunk_bytes < src.end else None
        if m is None:
            cuts.append((begin, src.end))
            break
        cuts.append((begin, m.start() + 1))
        begin = m.end()
    return cuts


def split_events(buf: bytes | bytearray | memoryview | mmap.mmap, start: int, end: int) -> list[tuple[int, int]]:
    """Cut a byte range into single events (used only where a chunk failed to decode)."""
    spans = []
    begin = start
    for m in EVENT_CUT.finditer(buf, start, end):
        spans.append((begin, m.start() + 1))
        begin = m.end()
    spans.append((begin, end))
    return spans
