"""The breakdown tables: the temporal breakdown per device or per stream, and the idle time per stream by cause."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..model.analyses.breakdown import CAUSES, CLASSES, KERNEL_GAP_NS, STREAM_WAKE_NS, Breakdown, StreamIdle
from ..model.analyses.breakdown.temporal import MASKS, name
from ..text.fmt import fmt_time
from .base import KEEP, Column, Field

NAME_WIDTH = 40
OVERLAPS = [m for m in range(MASKS) if m.bit_count() > 1]  # the combinations of two classes or more
BY = ("rank", "stream")
CAUSE_HEADS = {"host": "Host wait", "stream": "Other stream", "kernel": "Between kernels", "other": "Other"}
CAUSE_KEYS = {"host": "host_wait_us", "stream": "other_stream_us", "kernel": "between_kernels_us", "other": "other_us"}
TEMPORAL_NOTE = (
    "Each moment of the span counts once: under compute, communication (collectives) or copies (and sets) running "
    "alone, under Overlap when two or three ran at once, else under Idle; the parts add up to the span."
)
SPAN_NOTE = {
    "the whole trace": "The span of a device runs from its first activity's start to its last one's end.",
}
IDLE_NOTE = (
    f"Idle: the gaps between a stream's activities. Host wait: the call that launched the next one started after the "
    f"stream went idle. Between kernels: a gap under {KERNEL_GAP_NS / 1000:g}us with the next already queued. Other "
    f"stream: queued, and started within {STREAM_WAKE_NS / 1000:g}us of an activity on another stream of the device "
    "ending. Other: queued, and waiting on something the trace does not show (HTA's other is both)."
)

# The JSON rows as SQL tables (tui/sql/schema.py): what each key holds, and its type.
TEMPORAL_DOCS = {
    "rank": "the rank (0 for one file)",
    "device": "the device (GPU 0)",
    "span_us": "its window: its first activity's start to its last one's end",
    "compute_us": "compute kernels running with nothing else",
    "communication_us": "collectives running with nothing else",
    "copies_us": "copies and sets running with nothing else",
    "overlap_us": "two classes or more running at once (the next four columns)",
    "compute_communication_us": "compute and collectives at once",
    "compute_copies_us": "compute and copies at once",
    "communication_copies_us": "collectives and copies at once",
    "compute_communication_copies_us": "all three at once",
    "idle_us": "nothing running (the parts add up to span_us)",
    "busy_us": "span_us - idle_us",
    "compute_total_us": "compute running, overlaps included (HTA's compute time)",
    "non_compute_us": "busy with no compute running (HTA's non-compute time)",
    "start_us": "the window's start",
    "end_us": "its end",
}
STREAM_TEMPORAL_DOCS = {"stream": "the stream's lane (GPU 0 stream 7)"} | TEMPORAL_DOCS
STREAM_DOCS = STREAM_TEMPORAL_DOCS | {
    "activities": "its kernels, copies and sets in the window",
    "gaps_us": "its own idle time: the gaps between its activities (idle_us is the window's, as for a device)",
    "host_wait_us": "gaps before an activity whose launch call started after the stream went idle",
    "other_stream_us": "queued, and started within 10 us of an activity on another stream ending",
    "between_kernels_us": "gaps under 30 us with the next activity queued",
    "other_us": "queued, waiting on something the trace does not show",
}
SQL_TYPES = dict.fromkeys(STREAM_DOCS, "DOUBLE") | {"rank": "BIGINT", "device": "VARCHAR"}
SQL_TYPES |= {"stream": "VARCHAR", "activities": "BIGINT"}


def _us(ns: float) -> float:
    return ns / 1000.0


def device_name(r: Breakdown | StreamIdle) -> str:
    """The device as the viewer titles it: GPU 0."""
    return f"GPU {r.device}" if r.device.isdigit() else r.device


def lane(r: Breakdown | StreamIdle) -> str:
    """The row's name: its stream's lane, or its device."""
    return r.lane or device_name(r)


def _share(ns: int, whole: int) -> str:
    """ "12.345ms  16.4%" (the share of the whole); "-" for none."""
    return f"{fmt_time(_us(ns))} {ns / whole:6.1%}" if ns and whole else "-"


def temporal_columns(ranks: bool, by: str = "rank") -> list[Column[Breakdown, None]]:
    """Rank (a job), the device or stream, its span, each class alone, the overlap and idle time, with their shares."""
    part = lambda get: lambda r, c, w: _share(get(r), r.span_ns)  # noqa: E731
    cols: list[Column[Breakdown, None]] = [Column("Rank", lambda r, c, w: str(r.rank), priority=KEEP)] if ranks else []
    return cols + [
        Column("Device" if by == "rank" else "Stream", lambda r, c, w: lane(r), name=True, min_width=14),
        Column("Span", lambda r, c, w: fmt_time(_us(r.span_ns)), priority=KEEP),
        Column("Compute", part(lambda r: r.alone("compute")), priority=KEEP),
        Column("Communication", part(lambda r: r.alone("communication")), priority=1),
        Column("Copies", part(lambda r: r.alone("copies")), priority=1),
        Column("Overlap", part(lambda r: r.overlap_ns), priority=2),
        Column("Idle", part(lambda r: r.idle_ns), priority=KEEP),
    ]


def temporal_fields(by: str) -> list[Field[Breakdown]]:
    """JSON and CSV: times in us; overlaps by name; HTA's three figures (compute with its overlaps, non-compute)."""
    stream: list[Field[Breakdown]] = [Field("stream", lambda r: r.lane)] if by == "stream" else []
    return [
        Field("rank", lambda r: r.rank),
        Field("device", lambda r: device_name(r)),
        *stream,
        Field("span_us", lambda r: _us(r.span_ns)),
        *[Field(f"{c}_us", _alone(c)) for c in CLASSES],
        Field("overlap_us", lambda r: _us(r.overlap_ns)),
        *[Field(f"{name(m).replace('+', '_')}_us", _mask(m)) for m in OVERLAPS],
        Field("idle_us", lambda r: _us(r.idle_ns)),
        Field("busy_us", lambda r: _us(r.busy_ns)),
        Field("compute_total_us", lambda r: _us(r.total("compute"))),
        Field("non_compute_us", lambda r: _us(r.non_compute_ns)),
    ]


def _alone(cls: str) -> Callable[[Breakdown], float]:
    return lambda r: _us(r.alone(cls))


def _mask(mask: int) -> Callable[[Breakdown], float]:
    return lambda r: _us(r.by_mask[mask])


def temporal_json(r: Breakdown, by: str, origin: int) -> dict[str, Any]:
    """A row as JSON: its fields, and when its window starts and ends (us from the trace's start)."""
    return {f.key: f.value(r) for f in temporal_fields(by)} | {
        "start_us": _us(r.start_ns - origin),
        "end_us": _us(r.end_ns - origin),
    }


def temporal_footers(rows: list[Breakdown], window: str) -> list[str]:
    """What overlapped, HTA's figures for each device, and what the columns mean."""
    out = []
    for r in rows:
        if r.overlaps:
            named = ", ".join(f"{k} {fmt_time(_us(v))}" for k, v in r.overlaps.items())
            out.append(f"Overlap on {lane(r)}: {named}.")
    hta = [
        f"{lane(r)}: compute {fmt_time(_us(r.total('compute')))}, non-compute {fmt_time(_us(r.non_compute_ns))}, "
        f"idle {fmt_time(_us(r.idle_ns))}"
        for r in rows
        if not r.lane
    ]
    if hta:
        out.append("As HTA's get_temporal_breakdown reports it (compute with its overlaps): " + "; ".join(hta) + ".")
    return [
        *out,
        TEMPORAL_NOTE,
        SPAN_NOTE.get(window, f"The span: {window} on each rank, until its device work ended."),
    ]


def idle_columns(ranks: bool) -> list[Column[StreamIdle, None]]:
    part = lambda c: lambda r, ctx, w: _share(r.cause(c), r.idle_ns)  # noqa: E731
    cols: list[Column[StreamIdle, None]] = [Column("Rank", lambda r, c, w: str(r.rank), priority=KEEP)] if ranks else []
    return cols + [
        Column("Stream", lambda r, c, w: lane(r), name=True, min_width=14),
        Column("Activities", lambda r, c, w: f"{r.activities:,}", priority=2),
        Column("Idle", lambda r, c, w: _share(r.idle_ns, r.span_ns), priority=KEEP),
        *[Column(CAUSE_HEADS[c], part(c), priority=KEEP if c == "host" else 1) for c in CAUSES],
    ]


def _cause(cause: str) -> Callable[[StreamIdle], float]:
    return lambda r: _us(r.cause(cause))


IDLE_FIELDS: list[Field[StreamIdle]] = [
    Field("rank", lambda r: r.rank),
    Field("device", lambda r: device_name(r)),
    Field("stream", lambda r: r.lane),
    Field("activities", lambda r: r.activities),
    Field("span_us", lambda r: _us(r.span_ns)),
    Field("idle_us", lambda r: _us(r.idle_ns)),
    *[Field(CAUSE_KEYS[c], _cause(c)) for c in CAUSES],
]


def idle_json(r: StreamIdle) -> dict[str, Any]:
    """A stream's row as JSON: its fields, its gaps per cause, the streams it waited on (the most first)."""
    return (
        {f.key: f.value(r) for f in IDLE_FIELDS}
        | {"gaps": {CAUSE_KEYS[c].removesuffix("_us"): n for c, n in zip(CAUSES, r.gaps, strict=True)}}
        | {"waited_on": [{"stream": k, "us": _us(v)} for k, v in r.waited_on.items()]}
    )


def stream_json(t: Breakdown, i: StreamIdle, origin: int) -> dict[str, Any]:
    """A stream's row with --by stream: its temporal breakdown in its device's window, then its own idle time (the
    gaps between its activities, gaps_us) by cause."""
    causes = {CAUSE_KEYS[c]: _us(i.cause(c)) for c in CAUSES}
    return temporal_json(t, "stream", origin) | {"activities": i.activities, "gaps_us": _us(i.idle_ns)} | causes


def idle_footers(rows: list[StreamIdle]) -> list[str]:
    waits = [
        f"{r.lane} waited on {', '.join(f'{k} for {fmt_time(_us(v))}' for k, v in list(r.waited_on.items())[:3])}"
        for r in rows
        if r.waited_on
    ]
    return ([("; ".join(waits)) + "."] if waits else []) + [IDLE_NOTE]
