"""The copies per direction, as the summary shows them: one line of text, and a JSON row per direction."""

from __future__ import annotations

from typing import Any

from ..model.analyses.copies import Copies, CopyRow
from ..text.fmt import fmt_memory, fmt_time
from .base import Field

LABEL = "Copies by direction"


def _host(r: CopyRow) -> str:
    """ "45 pageable, 35 pinned": the host memory the names say, where they say it."""
    parts = [f"{r.pageable:,} pageable" if r.pageable else "", f"{r.pinned:,} pinned" if r.pinned else ""]
    return ", ".join(p for p in parts if p)


def part(r: CopyRow) -> str:
    """ "H2D ×80: 241.79 MiB in 21.155ms, 12.0 GB/s (45 pageable, 35 pinned; 50 under 64 KiB)" """
    size = f"{size_text(r.bytes)} in " if r.bytes >= 0 else ""
    rate = f", {rate_text(r.gbps)} GB/s" if r.gbps is not None else ""
    notes = [n for n in (_host(r), f"{r.small:,} under 64 KiB" if r.small else "") if n]
    return f"{r.kind} ×{r.count:,}: {size}{fmt_time(r.ns / 1000)}{rate}" + (f" ({'; '.join(notes)})" if notes else "")


def size_text(nbytes: int) -> str:
    """Bytes as every report writes them (fmt_memory: KiB, MiB, GiB); the rate beside them stays decimal GB/s."""
    return fmt_memory(nbytes)


def rate_text(gbps: float) -> str:
    """Three significant figures at most, never 0.0 for a rate that is not zero: 1,047, 41.9, 0.16, 0.0036, <0.001."""
    if gbps >= 100:
        return f"{gbps:,.0f}"
    return f"{gbps:.3g}" if gbps >= 0.001 or gbps == 0 else "<0.001"


def line(c: Copies) -> str:
    """Every direction's part, the copies first and the sets last ("" without copies or sets)."""
    return "; ".join(part(r) for r in c.rows)


def _or_none(n: int) -> int | None:
    return n if n >= 0 else None


B = "BIGINT"
FIELDS: list[Field[CopyRow]] = [
    Field("kind", lambda r: r.kind, "H2D, D2H, D2D, P2P, copy (direction not named) or set", "VARCHAR"),
    Field("count", lambda r: r.count, "how many", B),
    Field("us", lambda r: r.ns / 1000, "their device time"),
    Field("bytes", lambda r: _or_none(r.bytes), "the bytes they moved (NULL: a copy records none)", B),
    Field("gbps", lambda r: r.gbps, "bytes over device time, GB/s"),
    Field("pageable", lambda r: r.pageable, "copies the name says are from or to pageable host memory", B),
    Field("pinned", lambda r: r.pinned, "... pinned host memory", B),
    Field("small", lambda r: r.small, "copies under 64 KiB", B),
    Field("median_bytes", lambda r: _or_none(r.median_bytes), "the median copy's bytes", B),
]


def fields(c: Copies) -> list[dict[str, Any]]:
    """Per direction: kind, count, time, bytes (None: not recorded), GB/s, pageable, pinned and small copies."""
    return [{f.key: f.value(r) for f in FIELDS} for r in c.rows]
