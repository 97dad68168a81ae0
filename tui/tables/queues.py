"""The launch queue table (`kernels --queues`): per stream, its queue's length over time and its launches' delays."""

from __future__ import annotations

from ..model.analyses.critical.queue import FULL_LEVEL, FULL_MIN
from ..model.analyses.queues import LATE_START_NS, SLOW_CALL_NS, QueueRow
from ..text.fmt import fmt_time
from .base import KEEP, Column, Field

NAME_WIDTH = 40
VERDICTS = {"empty": "always empty", "full": "always full"}
NOTE = (
    "Queue: the activities launched onto the stream and not yet started. Mean, p50 and p95 weigh each length by how "
    "long it held, over the stream's span (its first launch to its last start); Mean/sample is HTA's: one sample "
    f"after each launch and each start. Full: time at {FULL_LEVEL:.0%} of the maximum or more, where the maximum "
    f"reaches {FULL_MIN} (CUDA's queue holds about 1,024). Delay: a launch call's start to its activity's start. "
    f"Slow calls: launch calls over {SLOW_CALL_NS / 1000:g}us; late starts: activities starting over "
    f"{LATE_START_NS / 1000:g}us after their call ended (HTA's outlier cut-offs). Always empty: the CPU cannot keep "
    "the stream fed; always full: the CPU waits on it."
)


def _us(ns: float) -> float:
    return ns / 1000.0


def columns(ranks: bool) -> list[Column[QueueRow, None]]:
    cols: list[Column[QueueRow, None]] = [Column("Rank", lambda r, c, w: str(r.rank), priority=KEEP)] if ranks else []
    return cols + [
        Column("Stream", lambda r, c, w: r.lane, name=True, min_width=14),
        Column("Launches", lambda r, c, w: f"{r.launches:,}", priority=KEEP),
        Column("Mean", lambda r, c, w: f"{r.mean:.2f}", priority=KEEP),
        Column("Mean/sample", lambda r, c, w: f"{r.mean_per_sample:.2f}", priority=3),
        Column("p50", lambda r, c, w: str(r.p50), priority=2),
        Column("p95", lambda r, c, w: str(r.p95), priority=1),
        Column("Max", lambda r, c, w: str(r.max), priority=KEEP),
        Column("Full", lambda r, c, w: fmt_time(_us(r.full_ns)) if r.full_ns else "-", priority=2),
        Column("Delay p50", lambda r, c, w: fmt_time(_us(r.delay_p50_ns)), priority=1),
        Column("Delay p95", lambda r, c, w: fmt_time(_us(r.delay_p95_ns)), priority=2),
        Column("Slow calls", lambda r, c, w: f"{r.slow_calls:,}", priority=3),
        Column("Late starts", lambda r, c, w: f"{r.late_starts:,}", priority=3),
        Column("Queue", lambda r, c, w: VERDICTS.get(r.verdict, "-"), priority=2, left=True),
    ]


FIELDS: list[Field[QueueRow]] = [
    Field("rank", lambda r: r.rank, "the rank (0 for one file)", "BIGINT"),
    Field("stream", lambda r: r.lane, "the stream's lane (GPU 0 stream 7)", "VARCHAR"),
    Field("launches", lambda r: r.launches, "device activities launched onto it", "BIGINT"),
    Field("span_us", lambda r: _us(r.span_ns), "its first launch to its last start"),
    Field("mean", lambda r: r.mean, "the queue's mean length, each length weighted by how long it held"),
    Field(
        "mean_per_sample", lambda r: r.mean_per_sample, "HTA's mean: over one sample after each launch and each start"
    ),
    Field("p50", lambda r: r.p50, "the length the queue stayed at or under half the span", "BIGINT"),
    Field("p95", lambda r: r.p95, "... 95% of the span", "BIGINT"),
    Field("max", lambda r: r.max, "its longest", "BIGINT"),
    Field(
        "full_us", lambda r: _us(r.full_ns), "time at half its maximum or more, where that maximum reaches 256 (else 0)"
    ),
    Field("delay_p50_us", lambda r: _us(r.delay_p50_ns), "launch call start to activity start, median"),
    Field("delay_p95_us", lambda r: _us(r.delay_p95_ns), "... 95th percentile"),
    Field("slow_calls", lambda r: r.slow_calls, "launch calls over 50 us (HTA's runtime outliers)", "BIGINT"),
    Field(
        "late_starts",
        lambda r: r.late_starts,
        "activities starting over 100 us after their call ended (HTA's launch delay outliers)",
        "BIGINT",
    ),
    Field(
        "verdict",
        lambda r: r.verdict,
        "empty (the CPU cannot keep it fed), full (the CPU waits on it), or ''",
        "VARCHAR",
    ),
]


def footers(rows: list[QueueRow]) -> list[str]:
    return [NOTE] if rows else ["No launched device work in this trace: no launch queue."]
