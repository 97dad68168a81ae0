"""Typed msgspec schema for Kineto events and the closed category enum."""

from __future__ import annotations

import msgspec


class Args(msgspec.Struct, gc=False):
    """The link and metadata fields of an event's args; every other key is skipped."""

    external_id: int = msgspec.field(default=-1, name="External id")
    external_id_legacy: int = msgspec.field(default=-1, name="external id")
    correlation: int = -1
    python_id: int = msgspec.field(default=-1, name="Python id")
    python_parent_id: int | None = msgspec.field(default=None, name="Python parent id")
    input_dims: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Input Dims")
    input_dims_legacy: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Input dims")
    bytes: int = msgspec.field(default=0, name="Bytes")
    device_type: int = msgspec.field(default=-1, name="Device Type")
    device_id: int = msgspec.field(default=-1, name="Device Id")
    total_allocated: int = msgspec.field(default=-1, name="Total Allocated")
    total_reserved: int = msgspec.field(default=-1, name="Total Reserved")
    addr: int = msgspec.field(default=-1, name="Addr")
    name: str | None = None
    labels: str | None = None
    sort_index: int | None = None


class Event(msgspec.Struct, gc=False):
    """One trace event, as much of it as the columns need."""

    ph: str = ""
    name: str = ""
    cat: str = ""
    pid: int | str = ""
    tid: int | str = ""
    ts: int | float = 0
    dur: int | float = 0
    id: int | str | None = None
    args: Args = msgspec.field(default_factory=Args)


class TopLevel(msgspec.Struct):
    """The top-level object of a Kineto trace, with the events left undecoded."""

    traceEvents: msgspec.Raw = msgspec.Raw()
    deviceProperties: list[dict] | None = None
    computeProperties: list[dict] | None = None
    distributedInfo: dict | None = None
    baseTimeNanoseconds: int | None = None
    displayTimeUnit: str | None = None
    schemaVersion: int | None = None
    traceName: str | None = None
    record_shapes: int | None = None
    with_stack: int | None = None
    profile_memory: int | None = None
