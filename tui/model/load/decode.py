"""Decode chunks of the events array into typed events, falling back event by event."""

from __future__ import annotations

import gc
import json
import math
from dataclasses import dataclass, field
from typing import Any

import msgspec
import orjson

from ..limits import NESTING
from .args import repairs
from .bulk import BAD_INT
from .guard import cut_deep, too_deep
from .schema import (
    BY_PHASE,
    NO_TIME,
    RAW,
    AnyEvent,
    Counter,
    Duration,
    Event,
    FlowStart,
    Instant,
    LinkArgs,
    MemoryArgs,
    MetaArgs,
    Metadata,
    Unknown,
)
from .source import PHASE_KEY, object_end, whole_events

_EVENTS = msgspec.json.Decoder(list[AnyEvent])  # type: ignore[valid-type]
_ONE = msgspec.json.Decoder(AnyEvent)
_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, orjson.JSONDecodeError, ValueError, TypeError, RecursionError)


@dataclass
class Decoded:
    """Events of one chunk, with the byte span each re-decodable group came from."""

    events: list[Event]
    spans: list[tuple[int, int, int]] = field(default_factory=list)  # (start, end, first event)
    skipped: int = 0  # malformed events of about the size of the chunk's others
    garbled: int = 0  # bytes of stretches too long for one event that could not be read (several events lost)
    garbled_events: int = 0  # the events those stretches held at least (the "ph" keys left in them)
    repaired: int = 0
    unseparated: int = 0  # objects followed by another with no comma between (each read in turn)
    deep: int = 0  # events whose JSON nested deeper than the decoders go: read with those values as null
    dropped_tail: bool = False


def decode_chunk(data: bytearray | memoryview, start: int, is_last: bool) -> Decoded:
    """Decode one chunk ('[' + its bytes + ']', which start at `start` in the file): typed in one go,
    else orjson, else event by event. is_last: this chunk ends where a cut file ends (its last event may be
    partial, and is then dropped rather than counted as malformed)."""
    end = start + len(data) - 2
    try:
        return Decoded(_EVENTS.decode(data), [(start, end, 0)])
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        pass
    try:
        return Decoded(_lenient_list(data), [(start, end, 0)])
    except _ERRORS:
        return _decode_each(data, start, is_last)


def _lenient_list(data: bytes | bytearray | memoryview) -> list[Event]:
    """Decode with orjson (GC off) and coerce each dict, skipping none."""
    was = gc.isenabled()
    gc.disable()
    try:
        items = orjson.loads(data)
    finally:
        if was:
            gc.enable()
    events = [coerce(item) for item in items]
    if any(e is None for e in events):
        raise ValueError("uncoercible event")
    return events  # type: ignore[return-value]


def _decode_each(data: bytearray | memoryview, start: int, is_last: bool) -> Decoded:
    """Decode a damaged chunk one event at a time, repairing what can be repaired."""
    out = Decoded([])
    shift = start - 1  # data holds '[' before the chunk's first byte
    end = len(data) - 1
    failed: list[bytes] = []
    after_failed = False
    for s, e, read, glued in whole_events(data, 1, end, _read_one):
        out.unseparated += glued
        if read is None:
            raw = bytes(data[s:e]).strip().rstrip(b",")
            if is_last and e == end and object_end(data, s, end) is None:  # cut short, not malformed
                out.dropped_tail = True
            elif after_failed and not PHASE_KEY.search(raw):  # a piece of the one before (an unclosed string
                failed[-1] += raw  # put the cuts out of step): one malformed event, not one per piece
            else:
                failed.append(raw)
            after_failed = True
            continue
        after_failed = False
        event, how = read
        out.repaired += how == REPAIRED
        out.deep += how == CUT_DEEP
        out.spans.append((s + shift, e + shift, len(out.events)))
        out.events.append(event)
    _count_failed(out, failed, sum(e - s for s, e, _ in out.spans))
    return out


GARBLED_BYTES = 1024  # a failed stretch longer than this and than GARBLED_TIMES events is several events lost
GARBLED_TIMES = 4


def _count_failed(out: Decoded, failed: list[bytes], read_bytes: int) -> None:
    """Count the stretches that could not be read: one malformed event each, or, when one is far longer than the
    chunk's events (garbage written into or over several), its bytes and the events it held at least: the phase
    keys left in it (how many garbage replaced cannot be known; garbage written between events replaced none, and
    the events on either side read)."""
    per_event = read_bytes / len(out.events) if out.events else 0
    for raw in failed:
        if len(raw) > GARBLED_BYTES and (not per_event or len(raw) > GARBLED_TIMES * per_event):
            out.garbled += len(raw)
            out.garbled_events += len(PHASE_KEY.findall(raw))
        else:
            out.skipped += 1


REPAIRED, CUT_DEEP = "repaired", "cut deep"


def _read_one(raw: bytes) -> tuple[Event, str] | None:
    event, how = decode_one(raw)
    return None if event is None else (event, how)


def decode_one(raw: bytes) -> tuple[Event | None, str]:
    """Decode one event's text, trying the known repairs in turn; with how it was read ('' as written, REPAIRED,
    or CUT_DEEP: nested deeper than the decoders go, its values past limits.NESTING levels read as null)."""
    event, how, deep = _attempts(raw)
    if event is None and deep:
        cut, count = cut_deep(raw, NESTING)
        if count:
            event, _, _ = _attempts(cut)
            how = CUT_DEEP if event is not None else ""
    return event, how


def _attempts(raw: bytes) -> tuple[Event | None, str, bool]:
    """The first reading of the text (or a repair of it) that decodes; else whether a decoder found it too deep."""
    deep = False
    for attempt, text in enumerate(repairs(raw)):
        how = REPAIRED if attempt else ""
        try:
            return _ONE.decode(text), how, False
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
            deep |= too_deep(exc)
        try:
            return coerce(_lenient(text)), how, False
        except _ERRORS as exc:
            deep |= too_deep(exc)
    return None, "", deep


def _lenient(text: bytes) -> object:
    """orjson's reading, else the standard library's, which also reads NaN and Infinity (so an event holding one
    is skipped for it, with its field named, rather than as malformed)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return _surrogates_escaped(json.loads(text))


def _surrogates_escaped(value: object) -> object:
    """The standard library reads an escaped lone surrogate ("\\ud83d" with no pair, which orjson and msgspec
    refuse) into a str that no UTF-8 holds: the cache, the terminal and every hash of a name would fail on it. Such
    a string keeps its escape as text ("lone\\ud83dx"), as written; the rest is left as read."""
    if isinstance(value, str):
        return value if value.isascii() else value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_surrogates_escaped(k): _surrogates_escaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_surrogates_escaped(v) for v in value]
    return value


def _int(value: object) -> int | None:
    """An int from an int (of any size: past 64 bits it is left out later, and said), an integral float or a
    numeric string; bulk.BAD_INT for NaN or an infinity; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) else BAD_INT
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return None
    return None


def _num(value: object, default: float = 0) -> int | float:
    """A number from a number or numeric string (NaN and infinities kept, for the columns to leave out and say);
    `default` otherwise."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return default
    return default


def _key(value: object) -> int | str:
    """A pid/tid as int when integral (and within 64 bits), else as a string."""
    number = _int(value)
    if number is not None and -(2**63) <= number < 2**63:
        return number
    return "" if value is None else str(value)


def coerce(item: object) -> Event | None:
    """Build the typed event of any decoded JSON value, tolerating odd types (None: not an event).

    An object without "ph" is an event of no known phase (counted, not kept), as the typed
    decode of that one event reads it; a "ph" that is not a string makes it no event.
    """
    if not isinstance(item, dict):
        return None
    ph = item.get("ph", "")
    if not isinstance(ph, str):
        return None
    common: dict[str, Any] = {
        "name": str(item.get("name", "")),
        "pid": _key(item.get("pid")),
        "tid": _key(item.get("tid")),
        "ts": _num(item.get("ts"), NO_TIME),
    }
    cls = BY_PHASE.get(ph)
    if cls is None:
        return Unknown(phase=ph, **common)
    raw_args = item.get("args")
    args = raw_args if isinstance(raw_args, dict) else {}
    if cls is Duration:
        cat = str(item.get("cat", "") or "")
        return Duration(cat=cat, dur=_num(item.get("dur")), args=_link_args(args), **common)
    if issubclass(cls, Instant):
        return cls(args=_memory_args(args), **common)  # type: ignore[call-arg]
    if cls is Counter:
        return Counter(args=msgspec.Raw(orjson.dumps(raw_args)) if "args" in item else RAW, **common)
    if issubclass(cls, FlowStart):
        ident = item.get("id")
        ident = ident if isinstance(ident, (int, str)) and not isinstance(ident, bool) else None
        return cls(cat=str(item.get("cat", "") or ""), id=ident, **common)  # type: ignore[call-arg]
    if cls is Metadata:
        return Metadata(args=_meta_args(args), **common)
    return cls(**common)


def _or_none(value: int | None) -> int:
    return -1 if value is None else value


def _link_args(raw: dict) -> LinkArgs:
    dims = raw.get("Input Dims", raw.get("Input dims"))
    return LinkArgs(
        external_id=_or_none(_int(raw.get("External id"))),
        external_id_legacy=_or_none(_int(raw.get("external id"))),
        correlation=_or_none(_int(raw.get("correlation"))),
        python_id=_or_none(_int(raw.get("Python id"))),
        python_parent_id=_int(raw.get("Python parent id")),
        input_dims=msgspec.Raw(orjson.dumps(dims)) if dims is not None else RAW,
        nbytes=msgspec.Raw(orjson.dumps(raw["bytes"])) if "bytes" in raw else RAW,
    )


def _memory_args(raw: dict) -> MemoryArgs:
    return MemoryArgs(
        bytes=_or_zero(_int(raw.get("Bytes"))),
        device_type=_or_none(_int(raw.get("Device Type"))),
        device_id=_or_none(_int(raw.get("Device Id"))),
        total_allocated=_or_none(_int(raw.get("Total Allocated"))),
        total_reserved=_or_none(_int(raw.get("Total Reserved"))),
        addr=_or_none(_int(raw.get("Addr"))),
    )


def _meta_args(raw: dict) -> MetaArgs:
    name, labels = raw.get("name"), raw.get("labels")
    return MetaArgs(
        name=name if isinstance(name, str) else None,
        labels=labels if isinstance(labels, str) else None,
        sort_index=_int(raw.get("sort_index")),
    )


def _or_zero(value: int | None) -> int:
    return 0 if value is None else value
