"""`tracetui memory SNAPSHOT`: per device the figures and what they mean, then by frame, streams, leaks, OOMs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..model.snapshot.report import SnapshotReport
from ..tables import snapshot as S
from ..tables.base import Column, Field
from .formats import table, terminal_width, titled, to_csv, to_json, wrap_prose, written_doc

TOP = 15  # frame rows per table in text and markdown (JSON has them all)


@written_doc
def snapshot_document(r: SnapshotReport) -> dict:
    """What `tracetui memory SNAPSHOT --format json` prints, as data."""
    return {"snapshot": r.path, "history": r.has_history, "devices": [S.device_fields(d) for d in r.devices]}


def render_snapshot(r: SnapshotReport, fmt: str) -> str:
    if fmt == "json":
        return to_json(snapshot_document(r))
    if fmt == "csv":
        rows = [S.csv_row(d) for d in r.devices]
        keys = list(rows[0]) if rows else list(S.CSV_KEYS)
        fields: list[Field[dict]] = [Field(k, _getter(k)) for k in keys]
        return to_csv(fields, rows)
    width = terminal_width()
    head = "\n".join(wrap_prose([S.head_line(r)], width))
    out = [head, table(fmt, S.DEVICE_COLUMNS, r.devices, None, S.NAME_WIDTH, S.footers(r), width)]
    for d in r.devices:
        out.append("\n".join(wrap_prose(S.device_reading(d), width)))
        at = f"at the peak ({S.when(d.peak.time_ns, d.timed)})" if d.peak else "now"
        sections: list[tuple[str, Sequence[Column], Sequence[Any]]] = [
            (f"{d.name}: alive {at}, by the frame that allocated them", S.FRAME_COLUMNS, d.by_frame),
            (
                f"{d.name}: allocated in the history and never freed (leak candidates), by frame",
                S.KEPT_COLUMNS,
                d.never_freed,
            ),
            (
                f"{d.name}: segments by stream",
                S.STREAM_COLUMNS,
                d.segments.streams if len(d.segments.streams) > 1 else [],
            ),
            (f"{d.name}: out of memory", S.OOM_COLUMNS, d.ooms),
        ]
        for title, columns, items in sections:
            if items:
                shown = items[:TOP]
                more = [f"{len(items) - TOP:,} more rows (--format json has them all)."] if len(items) > TOP else []
                out.append(titled(fmt, title, table(fmt, columns, shown, d, S.NAME_WIDTH, more, width)))
    return "\n\n".join(out)


def _getter(key: str):
    return lambda row: row[key]


@written_doc
def join_document(path: str, joined: list) -> dict:
    """The `snapshot` part of `memory TRACE --snapshot SNAPSHOT --format json`."""
    return {"path": path, "devices": [S.join_fields(j, rows) for j, rows in joined]}


def render_join(path: str, joined: list, fmt: str) -> str:
    """The trace's allocations by the snapshot's frames (text, markdown, or CSV of the rows)."""
    if fmt == "csv":
        fields: list[Field] = [Field(k, _getter(k)) for k in ("device", "frame", "op", "bytes", "count")]
        rows = [{"device": j.device, **vars(r)} for j, rs in joined for r in rs]
        return to_csv(fields, rows)
    width = terminal_width()
    if not joined:
        return f"Joined with {path}: the trace has no CUDA allocation samples to match."
    out = [f"Joined with {path}:"]
    for j, rows in joined:
        out.append("\n".join(wrap_prose([S.join_line(j)], width)))
        if rows:
            title = f"{j.device}: the trace's allocations by the frame the snapshot recorded and the op the trace saw"
            shown = rows[:TOP]
            more = [f"{len(rows) - TOP:,} more rows (--format json has them all)."] if len(rows) > TOP else []
            out.append(titled(fmt, title, table(fmt, S.JOIN_COLUMNS, shown, None, S.NAME_WIDTH, more, width)))
    return "\n\n".join(out)
