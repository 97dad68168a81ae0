"""Bytes of a trace file: mmap or gunzip, then locate and split the events array."""

from __future__ import annotations

import mmap
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import numpy as np

from ..errors import TraceError
from .schema import TopLevel

CHUNK_BYTES = 4 << 20
GZIP_MAGIC = b"\x1f\x8b"
# The boundary between two events: a closing brace, a comma, the next opening brace.
EVENT_CUT = re.compile(rb"\}\s*,\s*(?=\{)")
_TOP = msgspec.json.Decoder(TopLevel)


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


def gunzip(path: Path, out: Path | None) -> tuple[bytes | mmap.mmap, bool]:
    """Decompress a gzip file (to `out` when given), salvaging a truncated stream."""
    dec = zlib.decompressobj(wbits=31)
    parts: list[bytes] = []
    partial = out.with_name(f".{out.name}.{os.getpid()}.part") if out else None  # renamed when whole
    sink = open(partial, "wb") if partial else None
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


def open_source(path: Path, gunzip_to: Path | None) -> Source:
    """Open a trace file (plain or gzip, by magic bytes) and find its events."""
    try:
        with open(path, "rb") as f:
            magic = f.read(2)
    except OSError as exc:
        raise TraceError(path, exc.strerror or str(exc)) from None
    gz_truncated = False
    if magic == GZIP_MAGIC:
        buf, gz_truncated = gunzip(path, gunzip_to)
    else:
        buf = map_file(path)
    src = Source(path=path, buf=buf, gz=magic == GZIP_MAGIC, gz_truncated=gz_truncated)
    locate_events(src)
    return src


def first_byte(buf: bytes | mmap.mmap) -> tuple[int, bytes]:
    """The offset and value of the first non-whitespace byte."""
    head = bytes(buf[:4096])
    bom = 3 if head.startswith(b"\xef\xbb\xbf") else 0  # a UTF-8 byte-order mark, as some editors save
    stripped = head[bom:].lstrip()
    if not stripped:
        return -1, b""
    pos = len(head) - len(stripped)
    return pos, stripped[:1]


def locate_events(src: Source) -> None:
    """Set src.start/end to the inside of the events array, salvaging damage."""
    pos, ch = first_byte(src.buf)
    if pos < 0:
        if src.gz_truncated:
            raise TraceError(src.path, "the gzip stream is cut before any JSON")
        raise TraceError(src.path, "empty trace (no JSON in the file)")
    if ch == b"[":
        src.start, src.end = pos + 1, _array_end(src, pos)
        return
    if ch != b"{":
        raise TraceError(
            src.path, "not a JSON trace (expected '{' or '[' at the start; a Perfetto .pftrace is not supported)"
        )
    try:
        src.top = _TOP.decode(memoryview(src.buf)[pos:] if pos else src.buf)
    except (msgspec.DecodeError, msgspec.ValidationError):
        _locate_damaged(src)
        return
    raw = src.top.traceEvents
    if len(memoryview(raw)) == 0:
        raise TraceError(src.path, "no 'traceEvents' array in the JSON object")
    offset = np.frombuffer(raw, np.uint8).ctypes.data - np.frombuffer(src.buf, np.uint8).ctypes.data
    src.top.traceEvents = msgspec.Raw()
    if bytes(src.buf[offset : offset + 1]) != b"[":
        raise TraceError(src.path, "'traceEvents' is not an array")
    src.start, src.end = offset + 1, offset + len(memoryview(raw)) - 1


def _array_end(src: Source, open_pos: int) -> int:
    """The end of a top-level array: the last ']' (or EOF when truncated)."""
    lo = max(open_pos + 1, len(src.buf) - 64)
    tail = bytes(src.buf[lo:]).rstrip()
    if tail.endswith(b"]"):
        return lo + len(tail) - 1
    src.truncated = True
    return len(src.buf)


def _locate_damaged(src: Source) -> None:
    """Find the events array by hand when the whole object does not decode."""
    key = src.buf.find(b'"traceEvents"')
    if key < 0:
        raise TraceError(src.path, "not a trace: no 'traceEvents' key, and the JSON does not decode")
    bracket = src.buf.find(b"[", key)
    if bracket < 0:
        raise TraceError(src.path, "'traceEvents' has no array")
    src.start = bracket + 1
    head = bytes(src.buf[:key]).rstrip().rstrip(b",") + b"}"
    try:
        src.top = _TOP.decode(head)
    except (msgspec.DecodeError, msgspec.ValidationError):
        pass
    src.end = _damaged_end(src)


def _damaged_end(src: Source) -> int:
    """Probe the last ']' candidates for one that closes the array; else EOF."""
    size = len(src.buf)
    pos = size
    floor = max(src.start, size - CHUNK_BYTES)
    for _ in range(64):
        pos = src.buf.rfind(b"]", floor, pos)
        if pos < 0:
            break
        try:
            src.top = _TOP.decode(b'{"traceEvents":[]' + bytes(src.buf[pos + 1 :]))
            src.top.traceEvents = msgspec.Raw()
            return pos
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
    src.truncated = True
    return size


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


def split_events(buf: bytes | mmap.mmap, start: int, end: int) -> list[tuple[int, int]]:
    """Cut a byte range into single events (used only where a chunk failed to decode)."""
    spans = []
    begin = start
    for m in EVENT_CUT.finditer(buf, start, end):
        spans.append((begin, m.start() + 1))
        begin = m.end()
    spans.append((begin, end))
    return spans
