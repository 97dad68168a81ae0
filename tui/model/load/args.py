"""Lazy args: re-decode an event's chunk only when someone looks at the event."""

from __future__ import annotations

import mmap
from functools import lru_cache

import msgspec
import orjson

from ..trace import Trace
from .decode import _repairs

_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])


def event_args(trace: Trace, i: int) -> dict:
    """All args of event i as plain JSON values ({} when it has none or cannot be read)."""
    chunk = int(trace.x.chunk[i])
    start, end, _first, src = (int(v) for v in trace.chunks[chunk])
    try:
        item = _decode(_bytes(trace, src, start, end), int(trace.x.pos[i]))
    except (OSError, ValueError, IndexError, msgspec.DecodeError):
        return {}
    args = item.get("args") if isinstance(item, dict) else None
    return args if isinstance(args, dict) else {}


def _bytes(trace: Trace, src: int, start: int, end: int) -> bytes:
    buf = trace.buffers.get(src)
    if buf is not None:
        return bytes(buf[start:end])
    with open(trace.sources[src], "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        return bytes(m[start:end])


@lru_cache(maxsize=64)
def _chunk_items(data: bytes) -> tuple[bytes, ...]:
    return tuple(bytes(r) for r in _RAW_LIST.decode(b"[" + data + b"]"))


def _decode(data: bytes, pos: int) -> object:
    try:
        return orjson.loads(_chunk_items(data)[pos])
    except (msgspec.DecodeError, orjson.JSONDecodeError):
        pass
    for text in _repairs(data.strip().rstrip(b",")):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            continue
    return {}
