"""Value lanes of the timeline: step curves (memory allocated, reserved; counters such as GPU
utilization) summarized per terminal cell and drawn as block-character sparklines.

A Series is a step curve: its value holds from one sample to the next. A cell shows the highest
value the curve reaches inside it, so a short spike never disappears when zoomed out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..sets import distinct
from ..trace import TraceColumns

BLOCKS = " ▁▂▃▄▅▆▇█"


@dataclass(frozen=True, eq=False)
class Series:
    label: str
    kind: str  # "memory", "counter" or "queue" (a stream's launches not yet started)
    ts: np.ndarray  # ns, sorted
    values: np.ndarray  # float
    ops: np.ndarray | None = None  # per sample, the event that made it (memory: the allocating op)

    @property
    def low(self) -> float:
        if self.kind == "queue":
            return 0.0
        return float(self.values.min()) if len(self.values) else 0.0

    @property
    def high(self) -> float:
        """The lane's top: its most; a launch queue's at least QUEUE_TOP launches, so that one launch waiting now
        and then does not draw as a full queue."""
        most = float(self.values.max()) if len(self.values) else 0.0
        return max(most, QUEUE_TOP) if self.kind == "queue" else most


MEMORY_KINDS = ("allocated", "reserved")
QUEUE_TOP = 8  # launches: the least a launch queue's lane reaches to (█)


def memory_series(curves: list) -> list[Series]:
    """Two lanes per device (memory.Curve): bytes allocated, and reserved where the trace writes it."""
    out = []
    for c in curves:
        out.append(Series(f"{c.device} allocated", "memory", c.ts, c.allocated.astype(float), c.op))
        if len(c.reserved) and (c.reserved >= 0).all() and c.reserved.max() > 0:
            out.append(Series(f"{c.device} reserved", "memory", c.ts, c.reserved.astype(float), c.op))
    return out


def series_label(s: Series, room: int) -> str:
    """The lane's label within room columns; a memory lane always says whether it is allocated or reserved.

    `cuda:0 allocated`, then `cuda:0 alloc`, `cuda:0 A` (the device kept while it fits: two GPUs' lanes stay
    apart), then `allocated`, `alloc` or `A` (`reserved`, `resv`, `R`) as room shrinks; other labels are cut
    with an ellipsis.
    """
    room = max(room, 1)
    if len(s.label) <= room:
        return s.label
    if s.kind == "memory":
        device, _, what = s.label.rpartition(" ")
        short = {"allocated": ("alloc", "A"), "reserved": ("resv", "R")}.get(what, (what[:4], what[:1]))
        for text in (f"{device} {short[0]}", f"{device} {short[1]}", what, short[0], short[1]):
            if len(text) <= room:
                return text
        return short[1]
    if (
        s.kind == "queue" and " stream " in s.label
    ):  # the title says these are queues; the stream is what tells them apart
        stream = "stream " + s.label.split(" stream ", 1)[1].removesuffix(" queue")
        if len(stream) <= room:
            return stream
    return s.label[: room - 1] + "…"


def cell_values(s: Series, t0: int, bucket: int, width: int) -> np.ndarray:
    """Per cell, the highest value of the step curve inside it (NaN before the first sample)."""
    edges = t0 + bucket * np.arange(width + 1, dtype=np.int64)
    out = np.full(width, np.nan)
    if not len(s.ts):
        return out
    before = np.searchsorted(s.ts, edges[:-1], side="right") - 1  # the sample in force at each cell's start
    has = before >= 0
    out[has] = s.values[before[has]]
    lo = np.searchsorted(s.ts, edges[:-1], side="left")
    hi = np.searchsorted(s.ts, edges[1:], side="left")
    cells = np.flatnonzero(hi > lo)  # cells with samples inside: their runs of samples are contiguous
    if len(cells):
        runs = np.maximum.reduceat(s.values[: hi[cells[-1]]], lo[cells])
        out[cells] = np.fmax(out[cells], runs)
    return out


def sparkline(values: np.ndarray, low: float, high: float) -> str:
    """Block characters for per-cell values on a low..high scale: ▁ at low, █ at high, blank without a value. A flat
    lane reads by its value: ▁ at zero or below (a D2H bandwidth lane at zero throughout was a full bar), █ above."""
    span = high - low
    flat = np.full(len(values), 1.0 if high > 0 else 0.0)
    scaled = (np.nan_to_num(values, nan=low) - low) / span if span > 0 else flat
    levels = 1 + np.clip(np.round(7 * scaled), 0, 7).astype(int)
    levels[np.isnan(values)] = 0
    return "".join(BLOCKS[k] for k in levels.tolist())


def value_at(s: Series, t: int) -> tuple[float, int]:
    """The curve's value at time t, and the sample in force (-1: before the first)."""
    k = int(np.searchsorted(s.ts, t, side="right")) - 1
    return (float(s.values[k]), k) if k >= 0 else (float("nan"), -1)


def counter_series(trace: TraceColumns) -> list[Series]:
    """One series per counter name (ph C samples), in name order."""
    inst = trace.inst
    sel = np.flatnonzero(inst.counter) if len(inst.ts) else np.zeros(0, np.int64)
    out = []
    for name in distinct(inst.name[sel]).tolist():
        idx = sel[inst.name[sel] == name]
        idx = idx[np.argsort(inst.ts[idx], kind="stable")]
        out.append(Series(trace.names[name], "counter", inst.ts[idx], inst.value[idx]))
    return out


def queue_lanes(trace: TraceColumns, queues: list) -> list[Series]:
    """One lane per stream with launched work (critical.queue.QueueSeries): launches not yet started."""
    out = []
    for q in queues:
        name = trace.tracks[q.track].name
        out.append(Series(f"{name} queue", "queue", q.ts, q.length.astype(float)))
    return out
