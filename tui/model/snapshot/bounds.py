"""What an allocator snapshot may hold, counted as it is read, and the numbers it may give.

A pickle may refer to one list many times (its memo): a 267 KB file whose lists share references held 10**8
trace entries once expanded. So entries, segments and blocks are counted as they are read, and the frames of
every stack each time a stack is used (a shared list counts at every use), and the read is refused, one line,
past the limits below (model/limits.py's style: generous for real snapshots, named in the line that says it).
A number that no allocator writes (of the wrong type, negative, past int64, an infinity) makes its entry,
segment or block unreadable: it is skipped and counted, never an error of tracetui's.

| limit | real snapshots |
|---|---|
| entries, segments and blocks: ENTRIES | 2,900 in the shared H200 snapshot (torch keeps 100,000 per device when told to) |
| frame uses: FRAMES | 91,000 in the shared H200 snapshot (78 at most in one stack) |
| devices: DEVICES (device_traces' length, a segment's device) | 8 on a node |
"""

from __future__ import annotations

import math
from typing import Any

ENTRIES = 5_000_000
FRAMES = 50_000_000  # about 30 s of reading
DEVICES = 1024
INT_MAX = (1 << 63) - 1
TIME_US = (1 << 62) // 1000  # a time in µs whose ns fit in int64 with room for differences
LINE_MAX = 1 << 31


class TooLarge(Exception):
    """The snapshot holds more than a limit allows (the message says which, and the limit)."""


class Bad(Exception):
    """A number no allocator writes: its entry, segment or block is skipped."""


class Budget:
    """Counts what is read, raising TooLarge past a limit."""

    def __init__(self) -> None:
        self.entries = 0
        self.frames = 0

    def entry(self, n: int = 1) -> None:
        self.entries += n
        if self.entries > ENTRIES:
            raise TooLarge(
                f"more than {ENTRIES:,} trace entries, segments and blocks (the snapshot entry limit; its lists may "
                "refer to one another, each use counted)"
            )

    def stack(self, frames: int) -> None:
        self.frames += frames
        if self.frames > FRAMES:
            raise TooLarge(
                f"more than {FRAMES:,} stack frames in all (the snapshot frame limit; a stack shared by many "
                "entries counts at each)"
            )


def devices(n: int) -> None:
    """TooLarge when device_traces has more lists than there can be devices."""
    if n > DEVICES:
        raise TooLarge(f"{n:,} device traces, more than {DEVICES:,} devices (the snapshot device limit)")


def count(value: Any) -> int:
    """A size, address, stream or device field: an int from 0 to 2**63 - 1 (absent: 0); Bad otherwise."""
    if value is None:
        return 0
    if isinstance(value, int) and 0 <= value <= INT_MAX:
        return int(value)
    raise Bad


def device(value: Any) -> int:
    d = count(value)
    if d >= DEVICES:
        raise Bad
    return d


def time_ns(value: Any) -> int | None:
    """A time_us field in ns (None: absent, the snapshot records no times); Bad for an infinity, NaN, a huge
    number or another type."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Bad
    if not (isinstance(value, int) or math.isfinite(value)) or abs(value) >= TIME_US:
        raise Bad
    return int(value * 1000)


def text(value: Any, default: str = "?") -> str:
    """A frame's name or file: a string, or a number written as one; anything else (a list, a dict nested any
    depth) the default, never formatted."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value) if not isinstance(value, int) or abs(value) <= INT_MAX else default
    return default


def line(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < LINE_MAX else 0


SETTING_DEPTH = 3  # allocator settings are flat, with a list or dict of numbers at most (roundup_power2_divisions)


def plain(value: Any, depth: int = SETTING_DEPTH) -> Any:
    """A setting's value as JSON writes it: strings, finite numbers within int64, booleans, and lists and dicts of
    them nested at most `depth` deep; anything else None (never formatted: it may be nested any depth)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if abs(value) <= INT_MAX else None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth <= 0:
        return None
    if isinstance(value, (list, tuple)):
        return [plain(v, depth - 1) for v in value]
    if isinstance(value, dict):
        return {k: plain(v, depth - 1) for k, v in value.items() if isinstance(k, str)}
    return None


def annotation(a: Any) -> dict[str, Any] | None:
    """An external annotation (a record_function span's START or END) with fields of the right types, or None."""
    if not isinstance(a, dict):
        return None
    try:
        t = time_ns(a.get("time_us"))
        on = {"device": device(a["device"])} if "device" in a else {}  # none: every device's
    except Bad:
        return None
    stage = a.get("stage")
    if t is None or not isinstance(stage, str):
        return None
    return {"name": text(a.get("name", ""), ""), "stage": stage, "time_us": t / 1000} | on
