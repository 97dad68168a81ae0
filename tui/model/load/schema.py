"""Typed msgspec schema for Kineto events: one Struct per phase, told apart by "ph" (a tagged union).

Each phase reads only the args its columns need (a duration its link ids and shapes, a [memory]
instant its allocator fields, a metadata event its names); every other key is skipped by msgspec
without making a Python object. A phase tracetui does not read still decodes (and is counted);
an event whose "ph" is not a Chrome trace phase at all fails the chunk's typed decode, which then
falls back to the lenient path (decode.py).
"""

from __future__ import annotations

from typing import Any, ClassVar, Union

import msgspec

RAW = msgspec.Raw()
NO_TIME = float("nan")  # the ts of an event that has none (or not a number): such an event is left out


class LinkArgs(msgspec.Struct, gc=False):
    """A duration's link ids and input shapes; every other key is skipped."""

    external_id: int = msgspec.field(default=-1, name="External id")
    external_id_legacy: int = msgspec.field(default=-1, name="external id")
    correlation: int = -1
    python_id: int = msgspec.field(default=-1, name="Python id")
    python_parent_id: int | None = msgspec.field(default=-1, name="Python parent id")  # None: written as null
    input_dims: msgspec.Raw = msgspec.field(default=RAW, name="Input Dims")
    input_dims_legacy: msgspec.Raw = msgspec.field(default=RAW, name="Input dims")
    nbytes: msgspec.Raw = msgspec.field(default=RAW, name="bytes")  # a copy's or a set's size, read as it is written


class MemoryArgs(msgspec.Struct, gc=False):
    """An instant's allocator fields ([memory] samples); -1 (0 for Bytes) where absent."""

    bytes: int = msgspec.field(default=0, name="Bytes")
    device_type: int = msgspec.field(default=-1, name="Device Type")
    device_id: int = msgspec.field(default=-1, name="Device Id")
    total_allocated: int = msgspec.field(default=-1, name="Total Allocated")
    total_reserved: int = msgspec.field(default=-1, name="Total Reserved")
    addr: int = msgspec.field(default=-1, name="Addr")


class MetaArgs(msgspec.Struct, gc=False):
    """A metadata event's process or thread name, labels or sort index."""

    name: str | None = None
    labels: str | None = None
    sort_index: int | None = None


class Event(msgspec.Struct, tag_field="ph", gc=False):
    """What every phase has; `code` tells the phases apart without a string compare per event."""

    code: ClassVar[int] = -1
    phase: ClassVar[str] = ""
    name: str = ""
    pid: int | str = ""
    tid: int | str = ""
    ts: int | float = NO_TIME


class Duration(Event, tag="X", gc=False):
    code: ClassVar[int] = 0
    phase: ClassVar[str] = "X"
    cat: str = ""
    dur: int | float = 0
    args: LinkArgs = msgspec.field(default_factory=LinkArgs)


class Instant(Event, tag="i", gc=False):
    code: ClassVar[int] = 1
    phase: ClassVar[str] = "i"
    args: MemoryArgs = msgspec.field(default_factory=MemoryArgs)


class GlobalInstant(Instant, tag="I", gc=False):
    code: ClassVar[int] = 2
    phase: ClassVar[str] = "I"


class Counter(Event, tag="C", gc=False):
    code: ClassVar[int] = 3
    phase: ClassVar[str] = "C"
    args: msgspec.Raw = RAW  # its numeric values: read when the counter rows are built


class FlowStart(Event, tag="s", gc=False):
    code: ClassVar[int] = 4
    phase: ClassVar[str] = "s"
    cat: str = ""
    id: int | str | None = None


class FlowEnd(FlowStart, tag="f", gc=False):
    code: ClassVar[int] = 5
    phase: ClassVar[str] = "f"


class FlowStep(FlowStart, tag="t", gc=False):
    code: ClassVar[int] = 6
    phase: ClassVar[str] = "t"


class Metadata(Event, tag="M", gc=False):
    code: ClassVar[int] = 7
    phase: ClassVar[str] = "M"
    args: MetaArgs = msgspec.field(default_factory=MetaArgs)


OTHER = 8  # the code of every phase tracetui does not read (counted by its "ph")
# The rest of the Chrome trace event phases: decoded (nothing but their names), counted, not kept.
OTHER_PHASES = ("B", "E", "b", "n", "e", "P", "O", "N", "D", "R", "c", "V", "v", "(", ")")


def _other(phase: str) -> type[Event]:
    return msgspec.defstruct(  # type: ignore[return-value]
        f"Phase_{ord(phase)}",
        [],
        bases=(Event,),
        tag=phase,
        gc=False,
        namespace={"code": OTHER, "phase": phase, "__annotations__": {"code": ClassVar[int], "phase": ClassVar[str]}},
    )


class Unknown(Event, gc=False):
    """An event whose "ph" is no known phase (or missing): made only by the lenient path, counted by its ph."""

    code: ClassVar[int] = OTHER
    phase: str = ""  # type: ignore[misc]  # per event here, not per class


KNOWN = (Duration, Instant, GlobalInstant, Counter, FlowStart, FlowEnd, FlowStep, Metadata)
BY_PHASE: dict[str, type[Event]] = {cls.phase: cls for cls in KNOWN} | {p: _other(p) for p in OTHER_PHASES}
AnyEvent = Union[tuple(BY_PHASE.values())]  # type: ignore[valid-type]  # noqa: UP007


class TopLevel(msgspec.Struct):
    """The top-level object of a Kineto trace, with the events left undecoded."""

    traceEvents: msgspec.Raw = RAW
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
    torch_version: Any = None  # written by tracetui profile (prof.add_metadata); read leniently (writer.py)
    metadata: Any = None  # a run's metadata some tools embed (TraceLens: system.torch_env_info.torch_version)


class PhaseOnly(msgspec.Struct):
    """An event's phase alone (is this object an event?)."""

    ph: str
