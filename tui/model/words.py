"""Durations in the words of a sentence (verdicts, readings, reasons), one form for all of them: 12.3 us,
4.43 ms, 1.74 s. Tables keep torch's own forms (tui/text/fmt.py)."""

from __future__ import annotations

UNIT_US = {"s": 1e6, "ms": 1000.0, "us": 1.0}  # each unit a sentence says a duration in, in microseconds


def duration(us: float) -> str:
    """A duration in microseconds as a sentence says it: 881.2 us, 4.43 ms, 1.74 s."""
    scale, unit = _unit(us)
    return f"{us:,.1f} us" if scale == 1 else f"{us / scale:,.2f} {unit}"


def took(us: float) -> str:
    """A long duration, as a launch outlier is told (a call far slower than the rest): 3.06 s, 6.6 ms."""
    return f"{us / 1e6:,.2f} s" if us >= 1e6 else f"{us / 1000:,.1f} ms"


def duration_as(us: float, other: float) -> str:
    """A duration in the unit it shares with a comparable one in the same sentence, the larger one's: 324.9 us
    beside 118.4 us, never beside 0.12 ms; 0.87 ms beside 1.09 ms. One under a tenth of that unit keeps its own,
    where it would lose its digits (32.7 us of 4.43 ms, not 0.03 ms)."""
    scale, unit = _unit(max(abs(us), abs(other)))
    if scale == 1 or abs(us) < scale / 10:
        return duration(us)
    return f"{us / scale:,.2f} {unit}"


def _unit(us: float) -> tuple[float, str]:
    """The unit a duration of us is said in, and its scale: the largest it is one or more of."""
    return next((scale, unit) for unit, scale in UNIT_US.items() if abs(us) >= scale or scale == 1)


def said_us(us: float) -> float:
    """A duration as duration() prints it, back in microseconds (1524.9 -> 1520.0, 912.34 -> 912.3): what a reader
    takes from the text, so that a difference said beside two figures is their printed difference."""
    value, unit = duration(us).split()
    return float(value.replace(",", "")) * UNIT_US[unit]


def saving_said(before: float, after: float) -> tuple[str, str]:
    """What a change saves (after below before) or costs, and the duration before it, in one unit: a saving said in
    the totals' unit is Before - After as each prints (73.4 us - 26.8 us saves 46.6 us, not the 46.5 us of the
    unrounded figures); one said in a finer unit, or too small to show between them, as it is (32.7 us of 4.43 ms)."""
    exact = abs(before - after)
    scale, _ = _unit(max(abs(before), exact))
    change = abs(said_us(before) - said_us(after)) if exact >= scale / 10 else exact
    change = change or exact
    return duration_as(change, before), duration_as(before, change)
