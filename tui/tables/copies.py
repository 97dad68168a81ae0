"""The copies per direction, as the summary shows them: one line of text, and a JSON row per direction."""

from __future__ import annotations

from typing import Any

from ..model.analyses.copies import Copies, CopyRow
from ..text.fmt import fmt_memory, fmt_time

LABEL = "Copies by direction"


def _host(r: CopyRow) -> str:
    """ "45 pageable, 35 pinned": the host memory the names say, where they say it."""
    parts = [f"{r.pageable:,} pageable" if r.pageable else "", f"{r.pinned:,} pinned" if r.pinned else ""]
    return ", ".join(p for p in parts if p)


def part(r: CopyRow) -> str:
    """ "H2D ×80: 241.79 MiB in 21.155ms, 12.0 GB/s (45 pageable, 35 pinned; 50 under 64 KB)" """
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


def fields(c: Copies) -> list[dict[str, Any]]:
    """Per direction: kind, count, time, bytes (None: not recorded), GB/s, pageable, pinned and small copies."""
    return [
        {
            "kind": r.kind,
            "count": r.count,
            "us": r.ns / 1000,
            "bytes": r.bytes if r.bytes >= 0 else None,
            "gbps": r.gbps,
            "pageable": r.pageable,
            "pinned": r.pinned,
            "small": r.small,
            "median_bytes": r.median_bytes if r.median_bytes >= 0 else None,
        }
        for r in c.rows
    ]
