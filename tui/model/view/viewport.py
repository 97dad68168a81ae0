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
    """The whole of [start, end] from its start: the margin before it, the room the quantized bucket leaves over after
    its end (centered, a short trace's ruler would start up to half a window before its first event: "-500us")."""
    width = max(width, 1)
    span = max(end - start, 1)
    bucket = quantize(span * (1 + 2 * margin), width)
    return _align(start - int(span * margin), bucket, width)


def zoom(v: Viewport, at: int, factor: int, col: float | None = None) -> Viewport:
    """Zoom in (factor < 0) or out (factor > 0) by powers of two, keeping time `at` at column col (None: the column it
    is at now) to the nearest half cell: t0 stays a whole number of buckets, the one nearest to where it would be.
    (Rounded down, each press moved `at` up to a cell right: a selection slid 4 cells in 9 presses at 80 columns.)"""
    bucket = v.bucket << factor if factor > 0 else max(v.bucket >> -factor, 1)
    bucket = min(max(bucket, MIN_BUCKET), MAX_BUCKET)
    col = v.col_of(at) if col is None else col
    whole, part = divmod(at, bucket)  # in integers: epoch nanoseconds are past a float's exact range
    return Viewport((whole + round(part / bucket - col)) * bucket, bucket, max(v.width, 1))


def pan(v: Viewport, cells: int) -> Viewport:
    return replace(v, t0=v.t0 + cells * v.bucket)


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
