"""The loaded trace: typed columns, string tables, tracks, device info and a load report."""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .columns import Events, Flows, Instants
from .limits import phrase as limit_phrase
from .store import Store
from .tracks import Track


@dataclass
class LoadReport:
    """What loading saw, skipped or repaired, for the one-line salvage warning."""

    events: int = 0
    skipped: int = 0
    garbled: int = 0  # bytes of garbled stretches, each too long for one event (garbage written over several)
    garbled_events: int = 0  # the events those stretches held at least
    repaired: int = 0
    unseparated: int = 0  # events written with no comma after them (another followed at once): read, and said
    dropped_tail: bool = False
    truncated: bool = False
    gz_truncated: bool = False
    inexact_chunks: int = 0
    unknown_phases: dict[str, int] = field(default_factory=dict)
    bad_memory: int = 0  # [memory] samples without numeric Bytes / Device Type: left out of the memory views
    bad_counters: int = 0  # counter samples without a numeric value
    untimed: int = 0  # events without a numeric start time: left out (at time 0 they would stretch the timeline)
    bad_numbers: dict[str, int] = field(default_factory=dict)  # events left out for a number that cannot be, by why
    limits: dict[str, int] = field(default_factory=dict)  # what hit each limit of load/limits.py, by limit
    damaged: list[str] = field(default_factory=list)  # what salvaging a damaged head lost (see load/locate.py)
    from_cache: bool = False
    cache_problem: str = ""
    notes: list[str] = field(default_factory=list)  # what loading a folder of ranks noticed (left-out files, ...)

    def add(self, other: LoadReport) -> None:
        """Fold another file's (or part's) report into this one."""
        self.events += other.events
        self.skipped += other.skipped
        self.garbled += other.garbled
        self.garbled_events += other.garbled_events
        self.repaired += other.repaired
        self.unseparated += other.unseparated
        self.dropped_tail |= other.dropped_tail
        self.truncated |= other.truncated
        self.gz_truncated |= other.gz_truncated
        self.inexact_chunks += other.inexact_chunks
        self.bad_memory += other.bad_memory
        self.bad_counters += other.bad_counters
        self.untimed += other.untimed
        for into, more in ((self.bad_numbers, other.bad_numbers), (self.limits, other.limits)):
            for key, n in more.items():
                into[key] = into.get(key, 0) + n
        self.damaged += [d for d in other.damaged if d not in self.damaged]
        for ph, n in other.unknown_phases.items():
            self.unknown_phases[ph] = self.unknown_phases.get(ph, 0) + n

    def warning(self) -> str | None:
        """One line saying what was skipped, or None for a clean load."""
        parts = list(self.damaged)
        if self.truncated or self.gz_truncated:
            cut = "gzip stream" if self.gz_truncated else "JSON"
            parts.append(
                f"the {cut} is truncated; loaded the {_count(self.events, 'event')} before the cut"
                + (" and dropped the partial last one" if self.dropped_tail else "")
            )
        if self.skipped:
            parts.append(f"skipped {_count(self.skipped, 'malformed event')}")
        if self.garbled:
            held = f" holding at least {_count(self.garbled_events, 'event')}" if self.garbled_events else ""
            parts.append(f"skipped {_kilobytes(self.garbled)} of garbled text{held}")
        if self.untimed:
            parts.append(f"skipped {_count(self.untimed, 'event')} without a numeric start time (ts)")
        if self.bad_numbers:
            listed = ", ".join(
                f"{why} ({n:,})" for why, n in sorted(self.bad_numbers.items(), key=lambda kv: (-kv[1], kv[0]))
            )
            parts.append(
                f"skipped {_count(sum(self.bad_numbers.values()), 'event')} holding a number that cannot be: {listed}"
            )
        parts += [limit_phrase(limit, n) for limit, n in self.limits.items()]
        if self.repaired:
            parts.append(f"repaired {_count(self.repaired, 'event')} with bad characters")
        if self.unseparated:
            parts.append(f"read {_count(self.unseparated, 'event')} not followed by a comma")
        odd = self.unknown_phases
        if odd:
            listed = ", ".join(f"{n:,} '{ph}'" for ph, n in sorted(odd.items()))
            parts.append(f"skipped events of phases tracetui does not read ({listed})")
        if self.bad_memory:
            parts.append(f"skipped {_count(self.bad_memory, '[memory] event')} without numeric Bytes and Device Type")
        if self.bad_counters:
            parts.append(
                f"skipped {_count(self.bad_counters, 'counter value')} that {'is' if self.bad_counters == 1 else 'are'} not a number"
            )
        if self.inexact_chunks:
            parts.append(f"{_count(self.inexact_chunks, 'chunk')} kept float timestamps")
        if self.cache_problem:
            parts.append(self.cache_problem)
        parts += self.notes
        return "; ".join(parts) or None


def file_stamp(path: str) -> tuple[int, int] | None:
    """A file's size and mtime (None: it cannot be read)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_size, st.st_mtime_ns)


@dataclass
class TraceColumns:
    """A whole trace (or a folder of per-rank traces) as numpy columns."""

    path: str
    x: Events  # the duration (ph X) events
    inst: Instants
    flow: Flows
    names: list[str]
    cat_names: list[str]
    shapes: list[str]
    tracks: list[Track]
    chunks: np.ndarray  # (n, 4): start, end, first event, source index
    sources: list[str]
    devices: list[dict] = field(default_factory=list)
    ranks: list[dict] = field(default_factory=list)
    flags: dict[str, int] = field(default_factory=dict)
    report: LoadReport = field(default_factory=LoadReport)
    buffers: dict[int, bytes | mmap.mmap] = field(default_factory=dict, repr=False)  # unzipped sources, no cache
    store: Store | None = field(default=None, repr=False)  # where derived data is kept (the cache entry)
    job: dict | None = None  # a folder of ranks: how their clocks were lined up (None for one file)
    # each source as it was when the trace was made (size, mtime): args are read from it later, by offset
    stamps: list[tuple[int, int] | None] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if not self.stamps:
            self.stamps = [file_stamp(s) for s in self.sources]

    def changed_source(self, src: int) -> bool:
        """Has source `src` changed (or gone) since the trace was made? (One kept in memory never does.)"""
        if src in self.buffers or src >= len(self.stamps):
            return False
        return file_stamp(self.sources[src]) != self.stamps[src]

    @property
    def n(self) -> int:
        return len(self.x.ts)

    @cached_property
    def origin(self) -> int:
        """Time zero of every time shown from this trace (ns, raw clock): the earliest event start, Python
        frames included, so hiding frames (or anything else) never moves it. 0 for an empty trace."""
        return int(self.x.ts.min()) if self.n else 0

    def name_of(self, i: int) -> str:
        return self.names[int(self.x.name[i])]

    def track_of(self, i: int) -> Track:
        return self.tracks[int(self.x.track[i])]


def rank_of_events(trace: TraceColumns) -> np.ndarray:
    """The rank of every event (read-only). One rank (a single file): one value seen n times, no array per event,
    which ranks_at and keyed keep so (3.3 M events: 6 ms and 26 MB a call, and the same again in each keyed)."""
    ranks = np.array([t.rank for t in trace.tracks] or [0], np.int64)
    if (ranks == ranks[0]).all():
        return np.broadcast_to(ranks[0], (trace.n,))
    return ranks[trace.x.track]


def ranks_at(rank: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """rank[idx], kept one value seen len(idx) times where rank is."""
    if rank.ndim and rank.strides[0] == 0:
        return np.broadcast_to(rank.flat[0], (len(idx),))
    return rank[idx]


def on_real_tracks(trace: TraceColumns) -> np.ndarray:
    """Per event: is its track a CPU or GPU lane, not a meta track? One lookup per track, then one gather (comparing
    the kind's string per event took 0.1 s of a first summary on 3.3 M events)."""
    real = np.array([t.kind != "meta" for t in trace.tracks] or [True])
    return real[trace.x.track]


def keyed(rank: np.ndarray, ident: np.ndarray) -> np.ndarray:
    """A (rank, id) pair folded into one int64 (-1 stays -1): ids never match across ranks."""
    if rank.ndim and rank.strides[0] == 0 and len(rank):  # one rank: shift it once, not per event
        rank = rank.flat[0]
    if rank.ndim == 0 and rank == 0:  # rank 0 (a single file): the ids themselves, -1 for none
        return np.maximum(ident, -1).astype(np.int64, copy=False)
    return np.where(ident >= 0, (rank << 48) ^ ident, -1)


def _kilobytes(n: int) -> str:
    """`4.3 KiB`, `12.0 MiB`: a size in the file, as a warning says it (binary units, as every report's bytes)."""
    return f"{n / (1 << 20):,.1f} MiB" if n >= 1 << 20 else f"{n / (1 << 10):,.1f} KiB"


def _count(n: int, noun: str) -> str:
    """`1 malformed event`, `3 malformed events`: a count and its noun, one way in every notice."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
