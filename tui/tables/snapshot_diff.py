"""The tables of `tracetui diff A B` on two snapshots: per device the figures side by side, then what grew by frame."""

from __future__ import annotations

from typing import Any

from ..model.snapshot.diff import DeviceDiff, FrameChange, SnapshotDiff
from ..text.fmt import fmt_memory, truncate
from .base import KEEP, Column

NAME_WIDTH = 70
MATCH_RULE = "Frames match by function and file, not line: a line that moved between the runs is the same frame."


def signed(nbytes: int) -> str:
    return ("+" if nbytes > 0 else "-" if nbytes < 0 else "") + fmt_memory(abs(nbytes))


def _mark(r: FrameChange) -> str:
    return "  [only A]" if not r.b_count else "  [only B]" if not r.a_count else ""


CHANGE_COLUMNS: list[Column[FrameChange, None]] = [
    Column("Frame", lambda r, c, w: truncate(r.frame, w), priority=KEEP, name=True, min_width=24, tag=_mark),
    Column("Bytes A", lambda r, c, w: fmt_memory(r.a_bytes), priority=KEEP),
    Column("Bytes B", lambda r, c, w: fmt_memory(r.b_bytes), priority=KEEP),
    Column("Change", lambda r, c, w: signed(r.delta), priority=KEEP),
    Column("Count A", lambda r, c, w: f"{r.a_count:,}", priority=1),
    Column("Count B", lambda r, c, w: f"{r.b_count:,}", priority=1),
]
FIGURES = (  # label, how a device report gives it
    ("Reserved", lambda d: d.reserved_bytes),
    ("Allocated", lambda d: d.allocated_bytes),
    ("Requested", lambda d: d.requested_bytes),
    ("Peak requested", lambda d: d.peak.requested_bytes if d.peak else None),
    ("Reserved at peak", lambda d: d.peak.reserved_bytes if d.peak else None),
    ("Free in segments", lambda d: d.segments.free_bytes),
    ("Largest free", lambda d: d.segments.largest_free_bytes),
    ("Never freed", lambda d: d.never_freed_bytes),
)


def figure_rows(d: DeviceDiff) -> list[list[str]]:
    """The device's figures in A and B and the change."""
    rows = []
    for label, get in FIGURES:
        a = get(d.a) if d.a else None
        b = get(d.b) if d.b else None
        text = lambda v: "-" if v is None else fmt_memory(v)  # noqa: E731
        rows.append([label, text(a), text(b), signed(b - a) if a is not None and b is not None else ""])
    return rows


def _figures(d: DeviceDiff) -> dict[str, Any]:
    out = {}
    for label, get in FIGURES:
        key = label.lower().replace(" ", "_") + "_bytes"
        out[key] = {"a": get(d.a) if d.a else None, "b": get(d.b) if d.b else None}
    return out


def change_fields(r: FrameChange) -> dict[str, Any]:
    return {
        "frame": r.frame,
        "a_bytes": r.a_bytes,
        "b_bytes": r.b_bytes,
        "change_bytes": r.delta,
        "a_count": r.a_count,
        "b_count": r.b_count,
    }


def document(d: SnapshotDiff, limit: int) -> dict[str, Any]:
    """What `tracetui diff A B --format json` prints for two snapshots."""
    cut = (lambda rows: rows) if limit <= 0 else (lambda rows: rows[:limit])
    return {
        "a": d.a_path,
        "b": d.b_path,
        "matching": MATCH_RULE,
        "devices": [
            {
                "device": dev.name,
                "figures": _figures(dev),
                "at_peak": [change_fields(r) for r in cut(dev.at_peak)],
                "at_end": [change_fields(r) for r in cut(dev.at_end)],
            }
            for dev in d.devices
        ],
    }
