"""What tracetui reads of a trace at most: the limits that keep a hostile or absurd file from hanging it or
exhausting the machine, each generous for real traces and each named in the one warning line that says it was hit.

| limit | past it | real traces |
|---|---|---|
| a name (event, category, thread, process): NAME_CHARS | cut to its first NAME_CHARS characters | kernel names run to 5 KB |
| an event's JSON: EVENT_BYTES | the event is skipped, never read into memory | events run to 7 KB |
| an event's args where they are decoded (details, columns, input shapes): ARGS_BYTES | left out | args run to 7 KB |
| nesting inside an event: NESTING levels (the event's object is the first, its args the second) | deeper values read as null | 4 levels |
| lanes (distinct pid/tid pairs) per file: LANES | the events of later lanes are left out | 25 lanes |
| a compressed trace, inflated | refused: a quarter of the memory available, or half the free disk where it is unzipped | 10-40x the .gz |
| times: TIME_NS, durations: DUR_NS | the event is skipped (see build.py) | epoch ns ~1.8e18 |
"""

from __future__ import annotations

NAME_CHARS = 64 * 1024
EVENT_BYTES = 64 << 20
ARGS_BYTES = 1 << 20
NESTING = 64
LANES = 250_000
MEMORY_SHARE = 0.25  # of the memory available, for a trace unzipped in memory
DISK_SHARE = 0.5  # of the free disk, for a trace unzipped to a file
TIME_NS = 1 << 62  # |ts| below this (the year 2116 in epoch ns), so a difference of two never overflows int64
DUR_NS = 1 << 61  # 73 years: ts + dur stays below 2**63
ELLIPSIS = "…"

PHRASES = {  # what each limit's warning says, after the count
    "name": "name(s) longer than {} characters cut (the name limit)".format(f"{NAME_CHARS:,}"),
    "event": f"event(s) larger than {EVENT_BYTES >> 20} MiB skipped (the event size limit)",
    "args": f"input shapes or counter args larger than {ARGS_BYTES >> 20} MiB left out (the args size limit)",
    "nesting": f"event(s) nested deeper than {NESTING} levels cut there (the nesting limit)",
    "lanes": f"event(s) on lanes past the first {LANES:,} left out (the lane limit)",
    "ids": "link id(s) past 2**63 - 1 dropped, their events kept unlinked (the id limit)",
}


def phrase(limit: str, count: int) -> str:
    """The warning's words for one limit hit `count` times."""
    return f"{count:,} {PHRASES[limit]}"


def cut_name(name: str) -> str:
    """A name cut to NAME_CHARS characters (its last one an ellipsis), or as it is."""
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + ELLIPSIS


def size_text(nbytes: float) -> str:
    """1.5 GiB, 300.0 MiB: for the one-line messages (binary units, as every report's bytes)."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= size:
            return f"{nbytes / size:.1f} {unit}"
    return f"{int(nbytes)} bytes"
