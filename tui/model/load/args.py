"""Lazy args: re-decode an event's chunk only when someone looks at the event, within the limits (model/limits.py).

An event's text past ARGS_BYTES is not decoded (its args read as one note saying so), and values nested past
NESTING levels read as a note: whatever reads args (the details panel, the analyses, the API) gets plain,
shallow JSON values.
"""

from __future__ import annotations

import json
import mmap
import re
from functools import lru_cache

import msgspec
import orjson

from ..errors import TraceError
from ..limits import ARGS_BYTES, NESTING, size_text
from ..trace import TraceColumns
from .guard import cut_deep

_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_BAD_ESCAPE = re.compile(rb'\\(?!["\\/bfnrtu])')
_CONTROL = re.compile(rb"[\x00-\x1f]")
NOT_READ = "(args not read)"  # the one key of the args of an event past ARGS_BYTES
_DEEP = f'"(nested deeper than {NESTING} levels: not read)"'.encode()


def event_args(trace: TraceColumns, i: int) -> dict:
    """All args of event i as plain JSON values ({} when it has none or cannot be read)."""
    chunk = int(trace.x.chunk[i])
    start, end, _first, src = (int(v) for v in trace.chunks[chunk])
    try:
        item = _decode(_bytes(trace, src, start, end), int(trace.x.pos[i]))
    except (OSError, ValueError, IndexError):
        return {}
    return args_of(item)


def args_of(item: object) -> dict:
    """The args of a decoded event ({} for anything else)."""
    args = item.get("args") if isinstance(item, dict) else None
    return args if isinstance(args, dict) else {}


def chunk_events(trace: TraceColumns, chunk: int) -> tuple[bytes, ...]:
    """The texts of the events of one chunk row, in order (() when the chunk does not split as a whole: a damaged
    one, whose events event_args reads one by one). Not kept: for a reader of many chunks once each."""
    start, end, _first, src = (int(v) for v in trace.chunks[chunk])
    try:
        return _split(_bytes(trace, src, start, end))
    except (OSError, ValueError):
        return ()


def read_event(raw: bytes) -> object:
    """One event's text as JSON values, within the limits (None when it does not decode)."""
    if len(raw) > ARGS_BYTES:
        return {"args": {NOT_READ: f"{size_text(len(raw))}, past the {ARGS_BYTES >> 20} MiB limit of an event's args"}}
    if raw.count(b"[") + raw.count(b"{") > NESTING:  # deep enough to need a look
        raw, _ = cut_deep(raw, NESTING, _DEEP)
    try:
        return json_value(raw, repair=False)
    except ValueError:  # (bad UTF-8 among them: the repairs fix it)
        return None


def json_value(raw: bytes, repair: bool = True) -> object:
    """JSON text as values: orjson's reading, else the standard library's, which reads what orjson refuses (NaN
    and Infinity, which Python's json writes, as their names, so values stay JSON; lone surrogates), else (repair)
    with bad UTF-8 replaced. ValueError when none reads it."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(raw, parse_constant=str)
    except RecursionError as exc:
        raise ValueError("nested too deep") from exc
    except UnicodeDecodeError:
        if not repair:
            raise
    return json.loads(raw.decode("utf-8", "replace"), parse_constant=str)


def json_text(value: object) -> bytes:
    """A value as JSON text (orjson's, else the standard library's, which escapes a lone surrogate)."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return json.dumps(value, allow_nan=False).encode()


def _bytes(trace: TraceColumns, src: int, start: int, end: int) -> bytes:
    buf = trace.buffers.get(src)
    if buf is not None:
        return bytes(buf[start:end])
    unchanged(trace, src)
    with open(trace.sources[src], "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        return bytes(m[start:end])


def unchanged(trace: TraceColumns, src: int) -> None:
    """TraceError unless the source is as it was when the trace was made: its args are read by offset, and a
    file rewritten since holds other bytes there (they read as no args at all, an empty roofline)."""
    if trace.changed_source(src):
        raise TraceError(
            trace.sources[src], "changed since the trace was loaded: its events' args cannot be read; load it again"
        )


def _split(data: bytes) -> tuple[bytes, ...]:
    """A chunk's events, each as its text."""
    try:
        return tuple(bytes(r) for r in _RAW_LIST.decode(b"[" + data + b"]"))
    except RecursionError as exc:  # nested past what the decoder walks: the same split, the deep values cut
        cut, count = cut_deep(b"[" + data + b"]", NESTING + 1, _DEEP)
        if not count:
            raise ValueError("the chunk does not split into events") from exc
        return tuple(bytes(r) for r in _RAW_LIST.decode(cut))


_chunk_items = lru_cache(maxsize=64)(_split)  # the details panel moves among a few chunks


def _decode(data: bytes, pos: int) -> object:
    """Event pos of a chunk's text, repaired where it must be (bad UTF-8, control characters, stray backslashes);
    a chunk that does not split into events is one event (the salvage's)."""
    try:
        raw = _chunk_items(data)[pos]
    except (msgspec.DecodeError, ValueError, IndexError):
        raw = data.strip().rstrip(b",")
    for text in repairs(raw):
        item = read_event(text)
        if item is not None:
            return item
    return {}


def repairs(raw: bytes):
    """The raw text, then with bad UTF-8, control characters and stray backslashes fixed."""
    yield raw
    fixed = raw.decode("utf-8", "replace").encode()
    fixed = _CONTROL.sub(b" ", fixed)
    yield fixed
    yield _BAD_ESCAPE.sub(b"/", fixed)
