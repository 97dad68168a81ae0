"""Bytes of a trace file: mmap or gunzip, chunks of the events array, and reading them."""

from __future__ import annotations

import bisect
import mmap
import os
import re
import shutil
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TypeVar

import msgspec

from .. import limits
from ..errors import TraceError
from . import guard
from .flight import private_file
from .schema import TopLevel

CHUNK_BYTES = 4 << 20
GZIP_MAGIC = b"\x1f\x8b"
# The boundary between two events: a closing brace, a comma, the next opening brace.
EVENT_CUT = re.compile(rb"\}\s*,\s*(?=\{)")
PHASE_KEY = re.compile(rb'"ph"\s*:')  # an event's phase key: in a damaged stretch, the events it held


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
    empty: bool = False  # the events array holds only blanks
    oversized: int = 0  # events past limits.EVENT_BYTES, skipped unread (see split_chunks)
    unzipped: Path | None = None  # the file a gzip trace was unzipped to, to keep (None: in memory, or none asked)


IN_MEMORY_BYTES = 16 << 20  # a trace unzipped without a file to go to moves into a scratch file past this


def gunzip(path: Path, out: Path | None) -> tuple[bytes | mmap.mmap, bool]:
    """Decompress a gzip file (see inflate): its bytes and whether the stream was cut."""
    buf, truncated, _ = inflate(path, out)
    return buf, truncated


def inflate(path: Path, out: Path | None) -> tuple[bytes | mmap.mmap, bool, Path | None]:
    """Decompress a gzip file, block by block, to `out` (else in memory, moving to a scratch file once past
    IN_MEMORY_BYTES), salvaging a truncated stream; refused once it inflates past what the machine can hold
    (guard.inflate_limit), never after inflating it all. Where the disk cannot take it (too little free, or
    full while it is written) it goes on in memory, within the memory's limit. Returns the bytes, whether the
    stream was cut, and the file they are in (out; None: in memory or a scratch file, not to be kept)."""
    dec = zlib.decompressobj(wbits=31)
    sink = _Sink(path, out)
    try:
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                try:
                    while block and not dec.eof:  # at most 4 MB out per step: a bomb never inflates in one go
                        sink.write(dec.decompress(block, 4 << 20))
                        block = dec.unconsumed_tail
                except zlib.error as exc:
                    raise TraceError(path, f"corrupt gzip data ({exc})") from None
                if dec.eof:
                    break
        truncated = not dec.eof
        return sink.close(), truncated, sink.out
    except BaseException:
        sink.discard()
        raise


class _Sink:
    """Where inflated bytes go: memory, a scratch file once they are many, or the file asked for; each with its
    limit (a share of the memory available, or of the free disk where the file is). A file the disk cannot take
    (past its limit, or a write refused: a full disk) gives way to memory, and no scratch file is tried after."""

    def __init__(self, path: Path, out: Path | None) -> None:
        self.path, self.out, self.size = path, out, 0
        self.parts: list[bytes] = []
        self.file: BinaryIO | None = None
        self.partial: Path | None = None
        self.no_disk = False
        self.limit, self.why = guard.inflate_limit(out)
        if out is not None:  # this writer's own file (process, thread, random part): renamed onto out when whole
            try:
                fd, name = private_file(out)
            except OSError:
                self._to_memory()
            else:
                self._to_file(Path(name), os.fdopen(fd, "wb", buffering=0))

    def write(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.limit and self.file is not None:
            self._to_memory()  # the disk cannot take it: memory may
        if self.size > self.limit:
            raise TraceError(
                self.path,
                f"inflates past {limits.size_text(self.limit)}, the limit for a compressed trace here ({self.why})",
            )
        if self.file is not None:
            try:
                _write_all(self.file, data)
                return
            except OSError:  # a full disk (ENOSPC), a quota: what was written goes back to memory
                self._to_memory(len(data))
                if self.size > self.limit:
                    raise TraceError(self.path, f"inflates past {limits.size_text(self.limit)} ({self.why})") from None
        self.parts.append(data)
        if self.size > IN_MEMORY_BYTES and not self.no_disk:
            try:
                self.partial = scratch_name()  # discard() removes its folder from here on
                self._to_file(self.partial)
            except OSError:
                self._to_memory()

    def _to_file(self, partial: Path, file: BinaryIO | None = None) -> None:
        self.file = file or open(partial, "wb", buffering=0)  # noqa: SIM115 - closed in close() or discard()
        self.partial = partial
        for piece in self.parts:
            _write_all(self.file, piece)
        self.parts.clear()
        if self.out is None:
            self.limit, self.why = guard.inflate_limit(partial)

    def _to_memory(self, unwritten: int = 0) -> None:
        """Go on in memory: what the file holds is read back (the last `unwritten` bytes never reached it)."""
        self.limit, why = guard.inflate_limit(None)
        self.why = f"{why}: the disk could not take it"
        if self.file is not None and self.partial is not None:
            self.file.close()
            kept = self.size - unwritten
            self.parts = [self.partial.read_bytes()[:kept]] if 0 < kept <= self.limit else []  # (past: refused)
        self.discard()
        self.file = self.partial = self.out = None
        self.no_disk = True

    def close(self) -> bytes | mmap.mmap:
        if self.file is None:
            return b"".join(self.parts)
        self.file.close()
        assert self.partial is not None
        if self.out is not None:
            os.replace(self.partial, self.out)
            return map_file(self.out)
        try:
            return map_file(self.partial)
        finally:
            self.discard()  # a scratch file: the mapping keeps its pages until the trace goes

    def discard(self) -> None:
        if self.file is not None:
            self.file.close()
        if self.partial is not None:
            self.partial.unlink(missing_ok=True)
            if self.out is None:
                shutil.rmtree(self.partial.parent, ignore_errors=True)


def _write_all(file: BinaryIO, data: bytes) -> None:
    """Write every byte (an unbuffered file may take fewer than it is given)."""
    view, done = memoryview(data), 0
    while done < len(view):
        done += file.write(view[done:]) or 0


def scratch_name() -> Path:
    """A new scratch file for a trace unzipped without a cache entry, in a scratch folder (spill.py: the cache
    directory's, else the system's temporary one), which goes with the file."""
    from .cachedir import cache_root
    from .spill import scratch_folder

    return Path(scratch_folder(cache_root())) / "unzipped.json"


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
        self.space, data = self.into(start, end, self.space)
        return data

    def into(self, start: int, end: int, space: bytearray) -> tuple[bytearray, memoryview]:
        """Read a chunk into `space` (a new one where it is too small): (the space, the chunk's view of it). Threads
        may read side by side, each into its own space (pread takes no shared file offset)."""
        size = end - start + 2
        if len(space) < size:
            space = bytearray(size + (size >> 3))
        return space, self._fill(memoryview(space)[:size], start, end)

    def _fill(self, data: memoryview, start: int, end: int) -> memoryview:
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
    """Cut the events array into byte ranges of about chunk_bytes at event boundaries.

    An event that runs on past limits.EVENT_BYTES (no boundary within that many bytes) is skipped, never read:
    the chunk ends before it, the next starts after it, and src.oversized counts it.
    """
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    cuts: list[tuple[int, int]] = []
    begin = src.start
    while begin < src.end:
        if begin + chunk_bytes >= src.end:
            cuts.append((begin, src.end))
            break
        reach = min(src.end, begin + chunk_bytes + limits.EVENT_BYTES)
        m = event_end(src.buf, begin, begin + chunk_bytes, reach)
        if m is not None:
            cuts.append((begin, m.start() + 1))
            begin = m.end()
        elif reach == src.end:
            cuts.append((begin, src.end))
            break
        else:
            begin = _skip_oversized(src, begin, begin + chunk_bytes, cuts)
    return cuts


def event_end(buf, begin: int, probe: int, reach: int) -> re.Match | None:
    """The first boundary from probe (before reach) that ends a whole event, where begin starts one.

    A `}, {` also stands inside a value (an args array of objects, a string): cut there, two chunks would each
    hold half an event, and both would be read as damaged. The first candidate is taken when the event before it
    reads as a whole JSON object with a phase (the usual case: one small decode); else the objects are walked from
    begin by their brackets (_walked), and the first candidate that follows one is taken. Where the walk meets
    damage, the first candidate, as before: the chunk's salvage reads what it can.
    """
    m = EVENT_CUT.search(buf, probe, reach)
    if m is None or _closes_an_event(buf, begin, m.start()):
        return m
    return _walked(buf, begin, probe, reach) or m


_LOOK_BACK = (4 << 10, 64 << 10)  # how far back the quick check looks for the event's start
_TRIES = 64  # the boundaries before it tried as that start, nearest first (a `}, {` inside the event is one)


def _closes_an_event(buf, begin: int, close: int) -> bool:
    """Does the '}' at close end an event with a phase that starts at one of the last boundaries before it?"""
    for look in _LOOK_BACK:
        lo = max(begin, close - look)
        starts = [m.end() for m in EVENT_CUT.finditer(buf, lo, close)][-_TRIES:]
        if lo == begin:
            starts.insert(0, begin)
        if not starts:
            continue
        for start in reversed(starts):
            value = _decoded(buf, start, close + 1)
            if isinstance(value, dict) and "ph" in value:
                return True
        if lo == begin:
            return False
    return False


def _walked(buf, begin: int, probe: int, reach: int) -> re.Match | None:
    """The first boundary from probe that follows a whole object, walking the chunk's objects from begin by their
    brackets, strings minded (object_end): in time linear in the bytes walked, and past an event that is damaged
    inside but whose brackets balance (the salvage reads what it can of it), and past garbage between objects (to
    the next brace). None where the walk meets what is not an object (damage). It decoded the text since the last boundary at each candidate: past a
    damaged event none read, and each candidate decoded all the text since it, quadratic in the bytes to reach (a
    100,000-event file with a bad event every 2,000 and `}, {` in every event's args ran over 13 minutes)."""
    start = begin
    while True:
        close = object_end(buf, start, reach)
        if close is None:
            return None
        m = EVENT_CUT.match(buf, close - 1, reach)
        if m is None:  # garbage before the next object: walked past (the salvage says it)
            brace = _BRACE.search(buf, close, reach)
            if brace is None:
                return None
            start = brace.start()
        elif m.start() >= probe:
            return m
        else:
            start = m.end()


def _decoded(buf, start: int, end: int):
    """buf[start:end] as one JSON value (None: it is not one)."""
    try:
        return msgspec.json.decode(bytes(buf[start:end]))
    except (msgspec.DecodeError, RecursionError):
        return None


def _skip_oversized(src: Source, begin: int, probe: int, cuts: list[tuple[int, int]]) -> int:
    """An event from before `probe` runs on past the event size limit: keep the chunk's events before it, skip
    it (looked through in windows whose pages are handed back), and return where the next chunk begins."""
    before = next(iter(deque(EVENT_CUT.finditer(src.buf, begin, probe), maxlen=1)), None)  # the last boundary
    if before is not None:
        cuts.append((begin, before.start() + 1))
    src.oversized += 1
    at = probe + limits.EVENT_BYTES
    while at < src.end:
        hi = min(src.end, at + _SCAN_WINDOW)
        m = EVENT_CUT.search(src.buf, at, hi)
        if isinstance(src.buf, mmap.mmap):
            guard.drop_pages(src.buf, at, hi if m is None else m.start())
        if m is not None:
            return m.end()
        if hi == src.end:
            break
        at = hi - 64  # a boundary across windows (its blanks are few) is still found
    return src.end


_SCAN_WINDOW = 16 << 20


def split_events(buf: bytes | bytearray | memoryview | mmap.mmap, start: int, end: int) -> list[tuple[int, int]]:
    """Cut a byte range at every `}, {` (an event's end, or a boundary inside one: see whole_events)."""
    spans = []
    begin = start
    for m in EVENT_CUT.finditer(buf, start, end):
        spans.append((begin, m.start() + 1))
        begin = m.end()
    spans.append((begin, end))
    return spans


T = TypeVar("T")
JOIN_BYTES = 1 << 20  # an event cut at `}, {` inside it is joined back from this many bytes at most


def whole_events(
    buf: bytes | bytearray | memoryview | mmap.mmap, start: int, end: int, read: Callable[[bytes], T | None]
) -> Iterator[tuple[int, int, T | None, bool]]:
    """A damaged byte range as its events, each (start, end, what read made of its text, None where nothing, and
    whether another object followed it with no comma between).

    It is cut at every `}, {`. A piece whose braces balance is read alone (nearly all of them). Where
    that does not read, the JSON object the piece starts with is followed, strings minded (object_end):
    - it ends where a later piece ends: the event was cut inside (its args hold an array of objects, or a string
      with `}, {` in it: each piece was lost, and an object of the args could read as an event of its own), and
      that whole text is one event, read, or one that does not read;
    - it ends inside the piece and another object starts right after it: events written without a comma between
      them, each read in turn; or after something else (garbage, a stray bracket), which is what could not be
      read, and the next object is read from its own start (a `}, {` in its strings cut no piece of it then);
    - anything else is damage: the piece is what could not be read, and the next piece is tried alone."""
    spans = split_events(buf, start, end)
    ends: list[int] = []  # each piece's end, listed once one does not read
    k, s = 0, spans[0][0]
    while k < len(spans):
        e = spans[k][1]
        text = _piece(buf, s, e)
        balanced = _balanced(text)
        value = read(text) if balanced else None
        if value is not None:
            yield s, e, value, False
            k += 1
            s = spans[k][0] if k < len(spans) else e
            continue
        close = object_end(buf, s, min(end, s + JOIN_BYTES))
        ends = ends or [e for _, e in spans]
        at = len(spans) if close is None else bisect.bisect_left(ends, close, k)  # the piece the object ends in
        if close is not None and at < len(spans) and _last_byte(buf, *spans[at]) == close:  # ends with it
            whole = at > k or not balanced  # (else the text is the piece's, read already)
            yield s, spans[at][1], read(_piece(buf, s, close)) if whole else None, False
            k = at
        elif close is not None and at < len(spans) and (glued := _object_start(buf, close, spans[at][1])):
            yield s, close, read(_piece(buf, s, close)), True
            k, s = at, glued  # the next object, in the piece the first one ended in
            continue
        elif close is not None and at < len(spans) and (brace := _BRACE.search(buf, close, spans[at][1])):
            first = read(_piece(buf, s, close))  # then what stands before the next object: one stretch with it
            if first is not None:  # when it does not read (an unclosed string ended it elsewhere)
                yield s, close, first, False
            if first is None or _piece(buf, close, brace.start()).strip(b", \t\r\n"):
                yield (s if first is None else close), brace.start(), None, False
            k, s = at, brace.start()  # (a `}, {` inside its string was the piece's cut: read from its start)
            continue
        else:
            yield s, e, None if balanced else read(text), False
        k += 1
        s = spans[k][0] if k < len(spans) else e


def _piece(buf, s: int, e: int) -> bytes:
    return bytes(buf[s:e]).strip().rstrip(b",").strip()


def _last_byte(buf, s: int, e: int) -> int:
    """Just past the piece's last byte that is not blank."""
    while e > s and buf[e - 1] in _BLANK:
        e -= 1
    return e


def _object_start(buf, at: int, e: int) -> int | None:
    """Where an object starts after blanks from at, before e (None: something else is there, or nothing)."""
    while at < e and buf[at] in _BLANK:
        at += 1
    return at if at < e and buf[at] == ord("{") else None


def _balanced(text: bytes) -> bool:
    """As many { as } (strings not minded: a quick look that sends the others to object_end; a piece of an event
    cut inside leaves its own brace open)."""
    return text.count(b"{") == text.count(b"}")


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]]', re.DOTALL)  # a whole string, or a bracket
_OPEN = {ord("{"): ord("}"), ord("["): ord("]")}
_BRACE = re.compile(rb'\{(?=\s*")')  # where an object with a key starts: past garbage, the next event's
_BLANK = b" \t\r\n"


def object_end(buf, s: int, limit: int) -> int | None:
    """Just past the closing brace of the JSON object that starts at s (after blanks), strings minded; None where
    none starts there, a bracket does not match, or it does not close before limit (a text cut short)."""
    wanted: list[int] = []
    for m in _TOKEN.finditer(buf, s, limit):
        byte = buf[m.start()]
        if not wanted and (byte != ord("{") or bytes(buf[s : m.start()]).strip()):
            return None  # no object starts at s
        if byte in _OPEN:
            wanted.append(_OPEN[byte])
        elif byte != 0x22:
            if not wanted or wanted.pop() != byte:
                return None
            if not wanted:
                return m.end()
    return None
