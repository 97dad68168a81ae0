"""Find the events array in a trace's bytes: from its key and its last event, else the whole object, else by salvage.

The quick way reads only the head and the tail: the array opens after the "traceEvents" key and
closes at the last ']' whose last element is an event, the rest decoding as the top-level object.
When that fails, the whole object is decoded; when that fails too (a damaged file), the array is
found by hand, what can be read of a damaged head is kept (head.py), and a file cut inside its
events (no "traceEvents" key left) is read from its first whole event. What was lost goes in
Source's notes for the load report.
"""

from __future__ import annotations

import json
import mmap
import re
from pathlib import Path

import msgspec
import numpy as np

from ..errors import TraceError
from ..limits import NESTING
from .guard import cut_deep, last_nonblank
from .head import salvage_head
from .schema import PhaseOnly, TopLevel
from .source import EVENT_CUT, GZIP_MAGIC, PHASE_KEY, Source, inflate, map_file, object_end

PROBE_BYTES = 4 << 20  # how far back from the end the array's closing ']' is looked for
_TOP = msgspec.json.Decoder(TopLevel)
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
_PHASE_ONLY = msgspec.json.Decoder(PhaseOnly)
_UNREADABLE = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)  # RecursionError: nested too deep


def open_source(path: Path, gunzip_to: Path | None) -> Source:
    """Open a trace file (plain or gzip, by magic bytes) and find its events."""
    try:
        with open(path, "rb") as f:
            magic = f.read(2)
    except OSError as exc:
        raise TraceError(path, exc.strerror or str(exc)) from None
    gz_truncated, unzipped = False, None
    if magic == GZIP_MAGIC:
        buf, gz_truncated, unzipped = inflate(path, gunzip_to)
    else:
        buf = map_file(path)
    src = Source(path=path, buf=buf, gz=magic == GZIP_MAGIC, gz_truncated=gz_truncated, unzipped=unzipped)
    locate_events(src)
    if src.empty:  # an array of blanks only: nothing there to cut into chunks, however long it is
        src.end = src.start
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


NOT_JSON = "not a JSON trace (expected '{' or '[' at the start; a Perfetto .pftrace is not supported)"
NOT_GZIP = "not gzip (a .gz name, but no gzip header) and not a JSON trace either"


def cut_before_events(size: int) -> str:
    """A file that ends inside the JSON before its events (a copy or a write cut short)."""
    return f"cut short before its events: it ends after {size:,} bytes, inside the JSON before 'traceEvents'"


def not_json(path: Path, gz: bool) -> str:
    """What a file whose first bytes are no JSON is: named .gz without being gzip, or no JSON trace."""
    return NOT_GZIP if path.name.endswith(".gz") and not gz else NOT_JSON


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
        if _is_bare(src, pos):
            return
        raise TraceError(src.path, not_json(Path(src.path), src.gz))
    if _locate_fast(src, pos):
        return
    try:  # the exact way: the whole object decoded (it reads every byte, so only when the quick way failed)
        src.top = _TOP.decode(memoryview(src.buf)[pos:] if pos else src.buf)
    except _UNREADABLE:
        _locate_damaged(src, pos)
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
    except _UNREADABLE:
        return False
    src.top.traceEvents = msgspec.Raw()
    src.start, src.end = start, _elements_end(src.buf, start, end)
    return True


def _events_end(src: Source, start: int) -> int | None:
    """The ']' that closes the events array opened at start: the last one (within the last chunk's bytes)
    whose last element is an event, or that closes an empty array; None when none is. An empty array (of
    any number of blanks) ends the events where they start, so nothing reads its blanks again."""
    size = len(src.buf)
    floor = max(start - 1, size - PROBE_BYTES)
    pos = size
    for _ in range(64):
        pos = src.buf.rfind(b"]", floor, pos)
        if pos < 0:
            return None
        closes = _closes_events(src.buf, start, pos)
        if closes is not None:
            if not closes:
                src.empty = True
            return pos
    return None


def _closes_events(buf, start: int, close: int) -> bool | None:
    """Does the ']' at `close` end an array (opened just before `start`) whose last element is an event (True),
    or an empty one (False)? None when it does not."""
    brace = _last_element_end(buf, start, close)
    if brace < start:
        return False
    if bytes(buf[brace : brace + 1]) != b"}":
        return None
    first = _object_start(buf, brace, start)
    if first is None:
        return None
    before = bytes(buf[max(start - 1, first - 64) : first]).rstrip()[-1:]
    if before not in (b",", b"["):
        return None
    last = bytes(buf[first : brace + 1])
    return True if is_event_text(last) or PHASE_KEY.search(last) else None  # (an event, or a damaged one)


def _trailing_comma(buf, start: int, close: int) -> int:
    """Where a comma ends the array's elements, before its ']' at close (Chrome's trace viewer reads
    `[..., {...},]`, and so do we: the comma is not a cut); -1: none does."""
    end = last_nonblank(buf, start, close)
    return end if end >= start and bytes(buf[end : end + 1]) == b"," else -1


def _elements_end(buf, start: int, close: int) -> int:
    """Where the array's elements end: at its ']' (close), or at a trailing comma before it."""
    comma = _trailing_comma(buf, start, close)
    return close if comma < 0 else comma


def _last_element_end(buf, start: int, close: int) -> int:
    """The last byte of the array's last element (before start: none), over a trailing comma after it."""
    return last_nonblank(buf, start, _elements_end(buf, start, close))


def is_event_text(text: bytes) -> bool:
    """Is this JSON object an event (it has a "ph")? Also when it holds what the decoders refuse but an event may
    hold, to be skipped for it with a reason, or repaired as the decode repairs it: NaN or Infinity (the standard
    library reads them), nesting past what they walk (cut first), a raw control character in a string or bad
    UTF-8 (read as the decode's repair reads them: the last event of a whole file so written is no cut)."""
    try:
        _PHASE_ONLY.decode(text)
        return True
    except _UNREADABLE:
        pass
    if text.count(b"[") + text.count(b"{") > NESTING:
        text, _ = cut_deep(text, NESTING)
    try:
        item = json.loads(text.decode("utf-8", "replace"), strict=False)  # strict=False: control characters
    except (ValueError, RecursionError):
        return False
    return isinstance(item, dict) and isinstance(item.get("ph"), str)


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
        close = lo + len(tail) - 1
        src.empty = last_nonblank(src.buf, open_pos + 1, close) <= open_pos
        return close
    src.truncated = True
    return len(src.buf)


def _locate_damaged(src: Source, pos: int) -> None:
    """Find the events array by hand when the whole object does not decode."""
    key = src.buf.find(b'"traceEvents"', pos)
    if key < 0:
        _locate_bare(src, pos)
        return
    opened = _EVENTS_KEY.match(src.buf, key)
    if opened is None:
        raise TraceError(src.path, "'traceEvents' has no array")
    src.start = opened.end()
    head = bytes(src.buf[pos:key])
    try:
        src.top = _TOP.decode(head.rstrip().rstrip(b",") + b"}")
    except _UNREADABLE:
        salvaged = salvage_head(head)
        src.top = salvaged.top
        src.notes.append(salvaged.phrase())
    src.end = _damaged_end(src)


def _locate_bare(src: Source, pos: int) -> None:
    """A file cut inside its events (no "traceEvents" key left): read them from the first whole event."""
    if not _is_bare(src, pos):
        last = last_nonblank(src.buf, pos, len(src.buf))
        if last >= pos and src.buf[last : last + 1] != b"}":  # an object that never closes: the file was cut
            raise TraceError(src.path, cut_before_events(len(src.buf)))
        raise TraceError(src.path, "not a trace: no 'traceEvents' key, and the JSON does not decode")


def _is_bare(src: Source, pos: int) -> bool:
    """Is this the inside of an events array (a head cut off)? If so, locate its events from the first whole one."""
    first = pos if _is_event_at(src.buf, pos) else None
    if first is None:
        cut = EVENT_CUT.search(src.buf, pos, pos + PROBE_BYTES)
        first = cut.end() if cut and _is_event_at(src.buf, cut.end()) else None
    if first is None:
        return False
    src.start = first
    src.end = _damaged_end(src)
    partial = " (the partial event before it was dropped)" if first > pos else ""
    src.notes.append(
        f"the file's head is cut inside its events (no 'traceEvents' key): read from the first whole event{partial}"
    )
    return True


def _is_event_at(buf, start: int) -> bool:
    """Does an event object start at `start` (its first ~64 KB decoding on their own)?"""
    if bytes(buf[start : start + 1]) != b"{":
        return False
    end = object_end(buf, start, start + (1 << 16))
    return end is not None and is_event_text(bytes(buf[start:end]))


def _damaged_end(src: Source) -> int:
    """The ']' that closes the events array (see _events_end), the rest decoding as the top-level object (what it
    holds fills what the head did not say). Where the rest does not decode but holds no event, the file is cut after
    its events: they end at that ']', and the keys after it are read as far as they go (Kineto writes
    deviceProperties and baseTimeNanoseconds there). Else the file is cut inside its events (EOF)."""
    end = _events_end(src, src.start)
    if end is not None:
        rest = bytes(src.buf[end + 1 :])
        try:
            _fill_missing(src.top, _TOP.decode(b'{"traceEvents":[]' + rest))
            return end
        except _UNREADABLE:
            pass
        if not PHASE_KEY.search(rest):  # (a ']' inside a cut event's args is followed by the events after it)
            src.truncated = True
            after = salvage_head(rest)
            _fill_missing(src.top, after.top)
            if after.lost:
                src.notes.append(after.phrase("the file is cut after its events"))
            return _elements_end(src.buf, src.start, end)
    src.truncated = True
    return len(src.buf)


def _fill_missing(top: TopLevel, other: TopLevel) -> None:
    """The top-level keys the head did not give, from what other holds."""
    for name in other.__struct_fields__:
        if getattr(top, name) is None:
            setattr(top, name, getattr(other, name))
    top.traceEvents = msgspec.Raw()
