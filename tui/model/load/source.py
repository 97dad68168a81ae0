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
from .schema import PhaseOnly, TopLevel

CHUNK_BYTES = 4 << 20
GZIP_MAGIC = b"\x1f\x8b"
# The boundary between two events: a closing brace, a comma, the next opening brace.
EVENT_CUT = re.compile(rb"\}\s*,\s*(?=\{)")
_TOP = msgspec.json.Decoder(TopLevel)
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
_PHASE_ONLY = msgspec.json.Decoder(PhaseOnly)


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
    if _locate_fast(src, pos):
        return
    try:  # the exact way: the whole object decoded (it reads every byte, so only when the quick way failed)
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


def _locate_fast(src: Source, pos: int) -> bool:
    """Find the events array from its key and its last event, reading only the head and the tail.

    The array ends at the last ']' whose last element decodes as an event, where the keys before the
    array and the text after it decode as the rest of the top-level object. False when any of that
    fails (a damaged or odd file): the caller then decodes the whole object.
    """
    key = src.buf.find(b'"traceEvents"', pos)
    opened = _EVENTS_KEY.match(src.buf, key) if key >= 0 else None
    if opened is None:
        return False
    start = opened.end()
    end = _events_end(src, start)
    if end is None:
        return False
    text = bytes(src.buf[pos:key]) + b'"traceEvents":[]' + bytes(src.buf[end + 1 :])
    try:
        src.top = _TOP.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False
    src.top.traceEvents = msgspec.Raw()
    src.start, src.end = start, end
    return True


def _events_end(src: Source, start: int) -> int | None:
    """The ']' that closes the events array opened at start: the last one (within the last chunk's bytes)
    whose last element is an event, or that closes an empty array; None when none is."""
    size = len(src.buf)
    floor = max(start - 1, size - CHUNK_BYTES)
    pos = size
    for _ in range(64):
        pos = src.buf.rfind(b"]", floor, pos)
        if pos < 0:
            return None
        if _closes_events(src.buf, start, pos):
            return pos
    return None


def _closes_events(buf, start: int, close: int) -> bool:
    """Does the ']' at `close` end an array (opened just before `start`) whose last element is an event?"""
    lo = max(start, close - 4096)
    last = len(bytes(buf[lo:close]).rstrip())
    if last == 0:
        return lo == start  # an empty array (or a run of 4 KB of blanks: no)
    brace = lo + last - 1
    if bytes(buf[brace : brace + 1]) != b"}":
        return False
    first = _object_start(buf, brace, start)
    if first is None:
        return False
    before = bytes(buf[max(start - 1, first - 64) : first]).rstrip()[-1:]
    if before not in (b",", b"["):
        return False
    try:
        _PHASE_ONLY.decode(bytes(buf[first : brace + 1]))
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False
    return True


def _object_start(buf, close: int, floor: int, limit: int = 1 << 20) -> int | None:
    """The '{' that opens the object closing at `close` (scanning back over strings), or None past `limit`."""
    lo = max(floor, close - limit)
    text = bytes(buf[lo : close + 1])
    depth = 0
    k = len(text) - 1
    while k >= 0:
        ch = text[k]
        if ch == 0x22:  # a closing quote: skip back to the unescaped one that opens the string
            k = _string_start(text, k)
            if k < 0:
                return None
        elif ch in (0x7D, 0x5D):
            depth += 1
        elif ch in (0x7B, 0x5B):
            depth -= 1
            if depth == 0:
                return lo + k if ch == 0x7B else None
        k -= 1
    return None


def _string_start(text: bytes, close: int) -> int:
    """The position of the quote that opens the string whose closing quote is at `close` (-1: none)."""
    k = close - 1
    while True:
        k = text.rfind(b'"', 0, k + 1)
        if k < 0:
            return -1
        slashes = k - len(text[:k].rstrip(b"\\"))
        if slashes % 2 == 0:
            return k
        k -= 1


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
    """The ']' that closes the events array (see _events_end), the rest decoding as the top-level object
    (what it holds fills what the head did not say); else the file is cut (EOF)."""
    end = _events_end(src, src.start)
    if end is not None:
        try:
            tail = _TOP.decode(b'{"traceEvents":[]' + bytes(src.buf[end + 1 :]))
        except (msgspec.DecodeError, msgspec.ValidationError):
            tail = None
        if tail is not None:
            for name in tail.__struct_fields__:
                if getattr(src.top, name) is None:
                    setattr(src.top, name, getattr(tail, name))
            src.top.traceEvents = msgspec.Raw()
            return end
    src.truncated = True
    return len(src.buf)


class ChunkReader:
    """Reads chunks of a trace as '[' + their bytes + ']' (a JSON array), copied once.

    From a file it reads with pread, so nothing of the file stays mapped in the process (its pages are
    the page cache's, not the process's); from a buffer (an unzipped trace kept in memory) it copies.
    """

    def __init__(self, path: Path | None = None, buf: bytes | mmap.mmap | None = None) -> None:
        self.buf = buf
        self.fd = os.open(path, os.O_RDONLY) if path is not None else -1

    def __call__(self, start: int, end: int) -> bytearray:
        data = bytearray(end - start + 2)
        data[0], data[-1] = 0x5B, 0x5D
        if self.fd < 0:
            data[1:-1] = memoryview(self.buf)[start:end]  # type: ignore[arg-type]
            return data
        view, done = memoryview(data)[1:-1], 0
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


def split_events(buf: bytes | bytearray | mmap.mmap, start: int, end: int) -> list[tuple[int, int]]:
    """Cut a byte range into single events (used only where a chunk failed to decode)."""
    spans = []
    begin = start
    for m in EVENT_CUT.finditer(buf, start, end):
        spans.append((begin, m.start() + 1))
        begin = m.end()
    spans.append((begin, end))
    return spans
