"""Explain rule for slow copies between host and device: a direction whose copies move data far under what the
bus carries, for long enough to matter, and the likely cause: many tiny copies, or pageable host memory."""

from __future__ import annotations

import numpy as np

from ...analysis import Analysis
from ...cats import Cat
from ..copies import Copies, CopyRow, copies
from ..device_work import direction
from ..roofline.links import DEFAULT_HOST, PCIE_GBPS, Link, host_link
from ..roofline.peaks import detect
from ..summary import Summary
from .findings import Figure, Finding, Quantity, Rule, us
from .roofline import table_of

HOST_KINDS = ("H2D", "D2H")
SLOW_GBPS = 5.0  # under this a host copy is slow: a PCIe 3 x16 link carries about 12 GB/s pinned, PCIe 5 about 50
# (the note says the share of the GPU's own host link: roofline/links.py)
MIN_SHARE = 0.01  # the direction's copies take at least this share of the window ...
MIN_US = 100.0  # ... and at least this long in all
MOSTLY = 0.5  # a cause is named when the copies it holds for take at least this share of the direction's time
MARKED = 200  # copies marked on the timeline (the slowest first); the count says how many in all


def slow_copies(a: Analysis, s: Summary) -> list[Finding]:
    """Per host direction (H2D, D2H) with bytes recorded: slow copies that take a real share of the window."""
    kept = getattr(a, "copies", None)  # Results keeps them (the summary's too); a bare Analysis does not
    found: Copies = kept if isinstance(kept, Copies) else copies(a.trace)
    out = []
    for r in found.rows:
        spent = r.ns / 1000
        if r.kind in HOST_KINDS and r.gbps is not None and r.gbps < SLOW_GBPS:
            if spent >= MIN_US and s.wall_us and spent >= MIN_SHARE * s.wall_us:
                out.append(_finding(a, r, spent / s.wall_us))
    return out


def _link(a: Analysis) -> Link:
    """The host link the copies crossed: the GPU's, from the GPU table (the roofline's device), else the default."""
    device = table_of(a).device or detect(a.trace.devices)
    return host_link(device) if device is not None else Link(DEFAULT_HOST, PCIE_GBPS["4.0"], default=True)


def _finding(a: Analysis, r: CopyRow, share: float) -> Finding:
    link = _link(a)
    figures: dict[str, Figure] = {
        "link": link.name,
        "link_gbps": Quantity(link.gbps, "GB/s"),
        "link_pct": Quantity((r.gbps or 0.0) / link.gbps, "fraction"),
        "link_source": "an assumed default: the GPU table gives no link for this GPU" if link.default else "the GPU's",
        "kind": r.kind,
        "count": r.count,
        "bytes": r.bytes,
        "gb": Quantity(r.bytes / 1e9, "GB"),
        "time": us(r.ns / 1000),
        "share": Quantity(share, "fraction"),
        "gbps": Quantity(r.gbps or 0.0, "GB/s"),
        "median_bytes": r.median_bytes,
        "small": r.small,
        "small_share": Quantity(r.small_ns / r.ns if r.ns else 0.0, "fraction"),
        "pageable": r.pageable,
        "pageable_share": Quantity(r.pageable_ns / r.ns if r.ns else 0.0, "fraction"),
        "slowest_gbps": Quantity(r.slowest_gbps, "GB/s"),
    }
    parts = ["slow-copies"]
    if r.small_ns >= MOSTLY * r.ns:
        parts.append("slow-copies-tiny")
    if r.pageable_ns >= MOSTLY * r.ns:
        parts.append("slow-copies-pageable")
    if len(parts) == 1:
        parts.append("slow-copies-waiting")
    title = f"Slow {r.kind} copies ({r.gbps or 0:.2f} GB/s)"
    return Finding("slow-copies", title, figures, _marked(a, r), parts, r.count)


def _marked(a: Analysis, r: CopyRow) -> list[int]:
    """The slowest copy first, then the direction's other copies, at most MARKED."""
    x, names = a.trace.x, a.trace.names
    ev = np.flatnonzero(x.cat == int(Cat.MEMCPY))
    mine = [i for i in ev.tolist() if direction(names[int(x.name[i])]) == r.kind and i != r.slowest]
    return ([r.slowest] if r.slowest >= 0 else []) + mine[: MARKED - 1]


COPY_RULES = [Rule("slow-copies", slow_copies)]
