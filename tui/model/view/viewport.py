"""The visible time window of the timeline: pure zoom, pan, fit and reset arithmetic.

The window is width cells of bucket ns each, starting at t0. Buckets are quantized (see
lanes.quantize) and t0 is a multiple of the bucket, so lane summaries can be cached and reused
across frames; zooming halves or doubles the bucket.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .lanes import quantize

MIN_BUCKET = 1
MAX_BUCKET = 1 << 50


@dataclass(frozen=True)
class Viewport:
    t0: int
    bucket: int
    width: int

    @property
    def t1(self) -> int:
        return self.t0 + self.bucket * self.width

    def time_at(self, col: float) -> int:
        return self.t0 + int(col * self.bucket)  # t0 kept out of the float: epoch nanoseconds are past its exact range

    def col_of(self, t: int) -> float:
        return (t - self.t0) / self.bucket

    def visible(self, start: int, end: int) -> bool:
        return end >= self.t0 and start <= self.t1


def fit(start: int, end: int, width: int, margin: float = 0.05) -> Viewport:
    """A window showing [start, end] with a small margin on both sides."""
    width = max(width, 1)
    span = max(end - start, 1)
    bucket = quantize(span * (1 + 2 * margin), width)
    center = (start + end) // 2
    return _align(center - bucket * width // 2, bucket, width)


def fit_whole(start: int, end: int, width: int, margin: float = 0.01) -> Viewport:
    """The whole of [start, end] with a margin of 1% of it on both sides, from its start (centered, a short trace's
    ruler began up to half a window before its first event: "-500us").

    The bucket is the fewest whole ns per cell that show it, not quantized: a quantized one left up to a fifth of the
    screen empty after the end, by an amount that changed with the width (a resize from 80 to 160 columns went from
    516us to 557us shown). One cell more than the span: t0 rounds down to a whole bucket.
    """
    width = max(width, 1)
    span = max(end - start, 1)
    pad = int(span * margin)
    bucket = min(max(-(-(span + 2 * pad) // max(width - 1, 1)), MIN_BUCKET), MAX_BUCKET)
    return _align(start - pad, bucket, width)


def zoom(v: Viewport, at: int, factor: int, col: float | None = None) -> Viewport:
    """Zoom in (factor < 0) or out (factor > 0) by powers of two, keeping time `at` at column col (None: the column it
    is at now) to the nearest half cell: t0 stays a whole number of buckets, the one nearest to where it would be.
    (Rounded down, each press moved `at` up to a cell right: a selection slid 4 cells in 9 presses at 80 columns.)"""
    bucket = v.bucket << factor if factor > 0 else max(v.bucket >> -factor, 1)
    bucket = min(max(bucket, MIN_BUCKET), MAX_BUCKET)
    return _placed(at, v.col_of(at) if col is None else col, bucket, v.width)


def _placed(at: int, col: float, bucket: int, width: int) -> Viewport:
    """The view of bucket ns cells with time at at column col, to the nearest half cell, t0 a whole number of buckets."""
    whole, part = divmod(at, bucket)  # in integers: epoch nanoseconds are past a float's exact range
    return Viewport((whole + round(part / bucket - col)) * bucket, bucket, max(width, 1))


def pan(v: Viewport, cells: int) -> Viewport:
    return replace(v, t0=v.t0 + cells * v.bucket)


def zoom_within(v: Viewport, whole: Viewport, at: int, factor: int, col: float) -> Viewport:
    """Zoom as zoom() does, within the trace that whole shows: out no further than whole, and never showing time
    outside it unless showing it whole (four presses of s showed 8.26ms of a 516us trace, most of it before 0).

    Zoom levels are whole's bucket halved (b >> n): out from a level goes to the level above rather than doubling,
    so w then s gives back the view even where a halving dropped an odd ns (b >> 1 << 1 is not b)."""
    if factor < 0:
        return inside(zoom(v, at, factor, col), whole)
    level = next((n for n in range(64) if whole.bucket >> n == v.bucket), None)
    if (level is not None and level <= factor) or (v.bucket << factor) * v.width >= whole.t1 - whole.t0:
        return whole
    bucket = whole.bucket >> (level - factor) if level is not None else v.bucket << factor
    return inside(_placed(at, col, bucket, v.width), whole)


def inside(v: Viewport, whole: Viewport) -> Viewport:
    """v moved by whole cells to lie within whole; whole itself where v is as wide or wider."""
    if v.t1 - v.t0 >= whole.t1 - whole.t0:
        return whole
    if v.t0 < whole.t0:
        return replace(v, t0=v.t0 + -(-(whole.t0 - v.t0) // v.bucket) * v.bucket)
    if v.t1 > whole.t1:
        return replace(v, t0=v.t0 - -(-(v.t1 - whole.t1) // v.bucket) * v.bucket)
    return v


def resize(v: Viewport, width: int) -> Viewport:
    """Keep the start and the zoom level, show more or fewer cells."""
    return replace(v, width=max(width, 1))


def span_view(start: int, end: int, width: int) -> Viewport:
    """The window of width cells nearest to showing [start, end], centered on it (a resize keeps the span).

    The bucket is the fewest whole ns per cell that show it, not quantized: the window of the width
    [start, end] was drawn at is [start, end] itself, so going back to a width gives back its view.
    """
    width = max(width, 1)
    bucket = min(max(-(-(end - start) // width), MIN_BUCKET), MAX_BUCKET)
    return _align((start + end) // 2 - bucket * width // 2, bucket, width)


JUMP_SHARE = 3  # a jumped-to event that has to be zoomed to spans a third of the view
MIN_JUMP_CELLS = 2  # narrower than this, a jumped-to event is zoomed in on


def frame(v: Viewport, start: int, end: int) -> Viewport:
    """The view after a jump to [start, end]: zoomed so it spans a third of the view, centered, when it would be
    narrower than two cells or wider than the view; else panned to its middle when not wholly in view; else v."""
    dur = end - start
    if dur > 0 and (dur < MIN_JUMP_CELLS * v.bucket or dur > v.t1 - v.t0):
        bucket = quantize(dur * JUMP_SHARE, v.width)
        return _align((start + end) // 2 - bucket * v.width // 2, bucket, v.width)
    if start >= v.t0 and end <= v.t1:
        return v
    return pan(v, int(v.col_of((start + end) // 2) - v.width // 2))


def _align(t0: int, bucket: int, width: int) -> Viewport:
    return Viewport((t0 // bucket) * bucket, bucket, max(width, 1))
