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
