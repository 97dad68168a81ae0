"""Args the first pass does not decode, decoded in bulk by column the first time an analysis asks, then kept.

The first pass reads only what the first screen needs (link ids, shapes, allocator fields, names);
every other arg stays in the file, reachable through each event's chunk row and position. arg_column
reads one key for every duration event chunk by chunk (msgspec skips everything else), interns the
values, and keeps the column in the trace's cache entry, so a re-opened trace maps it. A chunk the
typed decode cannot read (a damaged one) is read event by event as the details panel reads it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import quote

import msgspec
import numpy as np

from ..limits import ARGS_BYTES, NESTING
from ..trace import TraceColumns
from .args import NOT_READ, event_args, json_text, json_value, unchanged
from .guard import deepest
from .source import ChunkReader

VERSION = 1  # of how a column is kept: part of its name in the store
_LOCK = threading.Lock()  # guards the tables of columns and locks each trace carries


@dataclass
class ArgColumn:
    """args[key] of every duration event: ids[i] indexes values (-1: the event has no such arg)."""

    key: str
    ids: np.ndarray
    values: list  # the distinct values, decoded from JSON

    def of(self, i: int) -> object:
        k = int(self.ids[i])
        return self.values[k] if k >= 0 else None


def arg_column(trace: TraceColumns, key: str) -> ArgColumn:
    """args[key] of every duration event, from the trace's store when kept there, else decoded now and kept.

    Once per trace and key, whichever threads ask: they wait for the one decoding it, while other keys and other
    traces are decoded side by side."""
    with _LOCK:  # not fields: a TraceColumns made from this one shares neither
        kept: dict[str, ArgColumn] = vars(trace).setdefault("_arg_columns", {})
        lock = vars(trace).setdefault("_arg_locks", {}).setdefault(key, threading.Lock())
    with lock:
        if key not in kept:
            kept[key] = _stored(trace, key) or _decoded(trace, key)
        return kept[key]


def _name(key: str) -> str:
    """The column's name in the store: the key quoted into a file name (a key may hold '/': "memory bandwidth (GB/s)")."""
    return f"args.{quote(key, safe=' ()')}@{VERSION}"


def _stored(trace: TraceColumns, key: str) -> ArgColumn | None:
    store = trace.store
    if store is None:
        return None
    arrays, blob = store.get_arrays(_name(key)), store.get_blob(_name(key))
    if arrays is None or blob is None or len(arrays.get("ids", ())) != trace.n:
        return None
    try:
        texts = msgspec.msgpack.decode(blob, type=list[bytes])
        values = [json_value(t) for t in texts]
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
        return None
    ids = arrays["ids"]
    if len(ids) and int(ids.max(initial=-1)) >= len(values):
        return None
    return ArgColumn(key, ids, values)


def _decoded(trace: TraceColumns, key: str) -> ArgColumn:
    """Read the key chunk by chunk; keep the column in the store (its texts as written, interned)."""
    texts: dict[bytes, int] = {}
    ids = np.full(trace.n, -1, np.int32)
    by_chunk = np.argsort(trace.x.chunk, kind="stable")
    bounds = np.searchsorted(trace.x.chunk[by_chunk], np.arange(len(trace.chunks) + 1))
    readers: dict[int, ChunkReader] = {}
    try:
        for c in np.flatnonzero(np.diff(bounds)).tolist():
            events = by_chunk[bounds[c] : bounds[c + 1]]
            ids[events] = _chunk_ids(trace, key, c, events, texts, readers)
    finally:
        for r in readers.values():
            r.close()
    column = ArgColumn(key, ids, [_value(t) for t in texts])
    if trace.store is not None:
        trace.store.put_arrays(_name(key), {"ids": ids})
        trace.store.put_blob(_name(key), msgspec.msgpack.encode(list(texts)))
    return column


def _chunk_ids(trace: TraceColumns, key: str, c: int, events: np.ndarray, texts: dict, readers: dict) -> np.ndarray:
    """The ids of key's values for the events of chunk row c (interned into texts)."""
    start, end, _first, src = (int(v) for v in trace.chunks[c])
    try:
        items = _decoder(key).decode(_reader(trace, src, readers)(start, end))
        raws = [items[p].args.value for p in trace.x.pos[events].tolist()]
        found = [_within(bytes(r)) if r else None for r in raws]
    except (msgspec.DecodeError, msgspec.ValidationError, IndexError, OSError, RecursionError):
        found = [_salvaged(trace, int(i), key) for i in events.tolist()]  # as the details panel reads a damaged chunk
    return np.array([-1 if t is None else texts.setdefault(t, len(texts)) for t in found], np.int32)


def _value(text: bytes) -> object:
    """An arg's text as the details panel reads it (args.json_value; None where nothing reads it)."""
    try:
        return json_value(text)
    except ValueError:
        return None


def _within(text: bytes) -> bytes | None:
    """An arg's text, or None past the limits (ARGS_BYTES, or nested deeper than NESTING counting the event's
    object and its args): an analysis reads such an arg as absent."""
    if len(text) > ARGS_BYTES:
        return None
    if text.count(b"[") + text.count(b"{") > NESTING - 2 and deepest(text) > NESTING - 2:
        return None
    return text


def _salvaged(trace: TraceColumns, i: int, key: str) -> bytes | None:
    args = event_args(trace, i)
    if key not in args or args.get(NOT_READ) is not None:
        return None
    try:
        return _within(json_text(args[key]))
    except (ValueError, RecursionError):  # past what the writers write: deeper than the limit anyway
        return None


def _reader(trace: TraceColumns, src: int, readers: dict) -> ChunkReader:
    if src not in readers:
        unchanged(trace, src)
        buf = trace.buffers.get(src)
        readers[src] = ChunkReader(buf=buf) if buf is not None else ChunkReader(Path(trace.sources[src]))
    return readers[src]


@cache
def _decoder(key: str) -> msgspec.json.Decoder:
    """A decoder of a chunk that reads args[key] of each event as raw JSON and skips the rest."""
    args = msgspec.defstruct(
        "KeyArgs", [("value", msgspec.Raw, msgspec.field(default=msgspec.Raw(), name=key))], gc=False
    )
    event = msgspec.defstruct("KeyEvent", [("args", args, msgspec.field(default_factory=args))], gc=False)
    return msgspec.json.Decoder(list[event])  # type: ignore[valid-type]
