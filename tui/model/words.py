"""Durations in the words of a sentence (verdicts, readings, reasons), one form for all of them: 12.3 us,
4.43 ms, 1.74 s. Tables keep torch's own forms (tui/text/fmt.py)."""

from __future__ import annotations


def duration(us: float) -> str:
    """A duration in microseconds as a sentence says it: 881.2 us, 4.43 ms, 1.74 s."""
    if abs(us) >= 1e6:
        return f"{us / 1e6:,.2f} s"
    if abs(us) >= 1000:
        return f"{us / 1000:,.2f} ms"
    return f"{us:,.1f} us"


def duration_as(us: float, other: float) -> str:
    """A duration in the unit it shares with a comparable one in the same sentence, the larger one's: 324.9 us
    beside 118.4 us, never beside 0.12 ms. A figure that would read as zero there keeps its own (1.3 us of 6.30 ms)."""
    larger = max(abs(us), abs(other))
    scale, unit = (1e6, "s") if larger >= 1e6 else (1000, "ms") if larger >= 1000 else (1, "us")
    if scale == 1:
        return duration(us)
    said = f"{us / scale:,.2f}"
    return duration(us) if us and float(said.replace(",", "")) == 0 else f"{said} {unit}"
