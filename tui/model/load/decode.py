"""Decode chunks of the events array into events, falling back event by event."""

from __future__ import annotations

import gc
import math
import mmap
import re
from dataclasses import dataclass, field

import msgspec
import orjson

from .schema import Args, Event
from .source import split_events

_EVENTS = msgspec.json.Decoder(list[Event])
_ONE = msgspec.json.Decoder(Event)
_BAD_ESCAPE = re.compile(rb'\\(?!["\\/bfnrtu])')
_CONTROL = re.compile(rb"[\x00-\x1f]")
_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, orjson.JSONDecodeError, ValueError, TypeError)


@dataclass
class Decoded:
    """Events of one chunk, with the byte span each re-decodable group came from."""

    events: list[Event]
    spans: list[tuple[int, int, int]] = field(default_factory=list)  # (start, end, first event)
    skipped: int = 0
    repaired: int = 0
    dropped_tail: bool = False


def decode_chunk(buf: bytes | mmap.mmap, start: int, end: int, is_last: bool) -> Decoded:
    """Decode one chunk: typed in one go, else orjson, else event by event."""
    data = bytearray(end - start + 2)  # "[" + the chunk + "]", copied once
    data[0], data[-1] = 0x5B, 0x5D
    data[1:-1] = memoryview(buf)[start:end]
    try:
        events = _EVENTS.decode(data)
        return Decoded(events, [(start, end, 0)])
    except (msgspec.DecodeError, msgspec.ValidationError):
        pass
    try:
        events = _lenient_list(data)
        return Decoded(events, [(start, end, 0)])
    except _ERRORS:
        return _decode_each(buf, start, end, is_last)


def _lenient_list(data: bytes | bytearray) -> list[Event]:
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


def _decode_each(buf: bytes | mmap.mmap, start: int, end: int, is_last: bool) -> Decoded:
    """Decode a damaged chunk one event at a time, repairing what can be repaired."""
    out = Decoded([])
    spans = split_events(buf, start, end)
    for i, (s, e) in enumerate(spans):
        raw = bytes(buf[s:e]).strip().rstrip(b",")
        event, repaired = decode_one(raw)
        if event is None:
            if is_last and i == len(spans) - 1:
                out.dropped_tail = True
            else:
                out.skipped += 1
            continue
        out.repaired += repaired
        out.spans.append((s, e, len(out.events)))
        out.events.append(event)
    return out


def decode_one(raw: bytes) -> tuple[Event | None, bool]:
    """Decode one event's text, trying the known repairs in turn."""
    for attempt, text in enumerate(_repairs(raw)):
        try:
            return _ONE.decode(text), attempt > 0
        except (msgspec.DecodeError, msgspec.ValidationError):
            pass
        try:
            return coerce(orjson.loads(text)), attempt > 0
        except _ERRORS:
            continue
    return None, False


def _repairs(raw: bytes):
    """The raw text, then with bad UTF-8, control characters and stray backslashes fixed."""
    yield raw
    fixed = raw.decode("utf-8", "replace").encode()
    fixed = _CONTROL.sub(b" ", fixed)
    yield fixed
    yield _BAD_ESCAPE.sub(b"/", fixed)


def _int(value: object) -> int | None:
    """An int from an int, an integral float or a numeric string; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**63 else None
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return None
    return None


def _num(value: object) -> int | float:
    """A finite number from a number or numeric string; 0 otherwise."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value if math.isfinite(value) else 0
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return 0
        return number if math.isfinite(number) else 0
    return 0


def _key(value: object) -> int | str:
    """A pid/tid as int when integral, else as a string."""
    number = _int(value)
    return number if number is not None else ("" if value is None else str(value))


def coerce(item: object) -> Event | None:
    """Build an Event from any decoded JSON value, tolerating odd types."""
    if not isinstance(item, dict) or not isinstance(item.get("ph"), str):
        return None
    raw_args = item.get("args")
    args = _coerce_args(raw_args) if isinstance(raw_args, dict) else Args()
    ident = item.get("id")
    return Event(
        ph=item["ph"],
        name=str(item.get("name", "")),
        cat=str(item.get("cat", "") or ""),
        pid=_key(item.get("pid")),
        tid=_key(item.get("tid")),
        ts=_num(item.get("ts")),
        dur=_num(item.get("dur")),
        id=ident if isinstance(ident, (int, str)) and not isinstance(ident, bool) else None,
        args=args,
    )


def _or_none(value: int | None) -> int:
    return -1 if value is None else value


def _coerce_args(raw: dict) -> Args:
    dims = raw.get("Input Dims", raw.get("Input dims"))
    name, labels = raw.get("name"), raw.get("labels")
    return Args(
        external_id=_or_none(_int(raw.get("External id"))),
        external_id_legacy=_or_none(_int(raw.get("external id"))),
        correlation=_or_none(_int(raw.get("correlation"))),
        python_id=_or_none(_int(raw.get("Python id"))),
        python_parent_id=_int(raw.get("Python parent id")),
        input_dims=msgspec.Raw(orjson.dumps(dims)) if dims is not None else msgspec.Raw(),
        name=name if isinstance(name, str) else None,
        labels=labels if isinstance(labels, str) else None,
        sort_index=_int(raw.get("sort_index")),
        bytes=_or_zero(_int(raw.get("Bytes"))),
        device_type=_or_none(_int(raw.get("Device Type"))),
        device_id=_or_none(_int(raw.get("Device Id"))),
        total_allocated=_or_none(_int(raw.get("Total Allocated"))),
        total_reserved=_or_none(_int(raw.get("Total Reserved"))),
        addr=_or_none(_int(raw.get("Addr"))),
    )


def _or_zero(value: int | None) -> int:
    return 0 if value is None else value
