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
        return int(self.t0 + col * self.bucket)

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


def zoom(v: Viewport, at: int, factor: int) -> Viewport:
    """Zoom in (factor < 0) or out (factor > 0) by powers of two, keeping time `at` in place."""
    bucket = v.bucket << factor if factor > 0 else max(v.bucket >> -factor, 1)
    bucket = min(max(bucket, MIN_BUCKET), MAX_BUCKET)
    col = v.col_of(at)
    return _align(int(at - col * bucket), bucket, v.width)


def pan(v: Viewport, cells: int) -> Viewport:
    return replace(v, t0=v.t0 + cells * v.bucket)


def resize(v: Viewport, width: int) -> Viewport:
    """Keep the start and the zoom level, show more or fewer cells."""
    return replace(v, width=max(width, 1))


def _align(t0: int, bucket: int, width: int) -> Viewport:
    return Viewport((t0 // bucket) * bucket, bucket, max(width, 1))
