"""Watch a folder of captures (a tensorboard_trace_handler folder during training): new complete files, in order.

A file counts once it is complete: its size and mtime have held still over two polls (or, at the first look,
for SETTLE_S) and it holds a whole JSON document, an object or a legacy top-level array (for gzip, a whole
stream): a trace written in pieces is never read half-written, whatever its last byte. A file still being written is skipped with a note
and looked at again on the next poll; one that has not changed for STALLED_S and still is not whole is
corrupt, said once and skipped until it changes, as is one that is whole but cannot be read. Each
capture is summarized to a row: its steps, typical step time and verdict.
"""

from __future__ import annotations

import mmap
import os
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from .errors import TraceError
from .load.folder import newest_first, trace_files

SETTLE_S = 1.0  # a file unchanged for this long (or over two polls) is no longer being written
STALLED_S = 30.0  # a file unchanged for this long that still is not a whole trace is corrupt, not being written
TAIL_BYTES = 256


@dataclass(frozen=True)
class CaptureRow:
    """One capture of a watched folder, summarized (times in microseconds)."""

    file: str
    steps: int
    step_us: float  # the typical step (steps.typical_step); the window without steps
    verdict: str
    reason: str
    written: float  # the file's mtime (seconds since the epoch)
    spread: float | None = None  # the steps' step-to-step spread, a share of step_us (steps.spread); None under 2

    def as_json(self) -> dict:
        return {
            "capture": self.file,
            "steps": self.steps,
            "step_us": round(self.step_us, 3),
            "step_spread_pct": None if self.spread is None else round(100 * self.spread, 1),
            "verdict": self.verdict,
            "reason": self.reason,
            "written": round(self.written, 3),
        }


def summarize(path: Path, use_cache: bool = True) -> CaptureRow:
    """A capture's row (TraceError when it cannot be read)."""
    from .analyses.results import Results
    from .load import load_trace

    s = Results(load_trace(path, use_cache=use_cache)).summary
    typical = s.typical.us if s.steps else s.wall_us
    spread = s.typical.spread if s.steps else None
    return CaptureRow(path.name, len(s.steps), typical, s.verdict, s.reason, path.stat().st_mtime, spread)


@dataclass(frozen=True)
class Change:
    """A capture's typical step against the one before it: the change in percent, and the runs' own spread (the
    larger of the two captures' spreads, a share; None when neither has one) it is judged by."""

    pct: float
    spread: float | None

    @property
    def noise(self) -> bool:
        return self.spread is not None and abs(self.pct) <= 100 * self.spread


def change(before: CaptureRow, row: CaptureRow) -> Change | None:
    """row's typical step against before's (None when before has no time)."""
    if not before.step_us:
        return None
    known = [r.spread for r in (before, row) if r.spread is not None]
    return Change(100 * (row.step_us - before.step_us) / before.step_us, max(known) if known else None)


def is_complete(path: Path) -> bool:
    """Does the file hold a whole JSON document (an object, or a legacy top-level array of events)? A document
    cut short is not; one whole but malformed is (the load says what is wrong with it). A gzip file is
    unzipped to check (in memory, within the memory's limit; past it, a whole stream whose text ends closed)."""
    try:
        with open(path, "rb") as f:
            magic = f.read(2)
            f.seek(0)
            if magic == b"\x1f\x8b":
                return _gzip_complete(f)
            if os.fstat(f.fileno()).st_size == 0:
                return False
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _whole(data)
    except (OSError, ValueError):
        return False


def _whole(data) -> bool:
    """A whole JSON document (scanned, not built: msgspec checks the syntax of what it skips); one cut short is
    not; a malformed one is when it ends closed (a raw control byte in a name: the loader salvages those)."""
    try:
        msgspec.json.decode(data, type=msgspec.Raw)
    except msgspec.DecodeError as exc:
        if "truncated" in str(exc):
            return False
        return bytes(data[-TAIL_BYTES:]).rstrip().endswith((b"}", b"]"))
    return True


def _gzip_complete(f) -> bool:
    from .load.guard import inflate_limit

    limit, _ = inflate_limit(None)
    dec = zlib.decompressobj(wbits=31)
    parts: list[bytes] = []
    size, tail = 0, b""
    try:
        while block := f.read(1 << 20):
            data = dec.decompress(block)
            size += len(data)
            if size <= limit:
                parts.append(data)
            else:
                parts.clear()
            tail = (tail + data)[-TAIL_BYTES:] if data else tail
            if dec.eof:
                break
    except zlib.error:
        return True  # whole but corrupt: complete, and the load says what is wrong with it
    if not dec.eof:
        return False
    if size <= limit:
        return _whole(b"".join(parts) + dec.flush())  # (the tail is the text's own)
    return (tail + dec.flush()).rstrip().endswith((b"}", b"]"))


@dataclass
class _Seen:
    stamp: tuple[int, int]  # (size, mtime_ns)
    state: str = "new"  # new, writing, done, bad
    polls: int = 0


def before_first(seen: _Seen) -> bool:
    """Is this the first look at the file (never seen written to)?"""
    return seen.state == "new"


@dataclass
class Watcher:
    """Polls a folder: each call to poll() gives the captures completed since the last one, oldest first."""

    folder: Path
    seen: dict[Path, _Seen] = field(default_factory=dict)
    clock: Callable[[], float] = time.time  # for the tests

    def poll(self) -> tuple[list[Path], list[str]]:
        """New complete captures (oldest first) and notes on the files skipped for now."""
        ready, notes = [], []
        try:
            files = list(reversed(newest_first(trace_files(self.folder))))
        except OSError as exc:
            raise TraceError(self.folder, f"cannot be read ({exc.strerror})") from None
        for f in files:
            state = self._look(f)
            if state == "ready":
                ready.append(f)
            elif state == "writing":
                notes.append(f"{f.name} is still being written; skipped for now")
            elif state == "corrupt":
                notes.append(
                    f"{f.name} is corrupt: not a whole trace, and unchanged for {STALLED_S:.0f} s; skipped until it changes"
                )
        return ready, notes

    def _look(self, f: Path) -> str:
        try:
            st = f.stat()
        except OSError:  # gone between the listing and now
            return "gone"
        stamp = (st.st_size, st.st_mtime_ns)
        seen = self.seen.get(f)
        if seen is None or seen.stamp != stamp:
            before = seen
            seen = self.seen[f] = _Seen(stamp)
            if before is not None and before.state == "writing":
                seen.state = "writing"  # still the same write: said once
        elif seen.state in ("done", "bad"):
            return seen.state
        seen.polls += 1
        # Settled: the same size and mtime over two polls, or, at the first look, nothing written for a while.
        settled = seen.polls >= 2 or (before_first(seen) and self.clock() - st.st_mtime >= SETTLE_S)
        if not (settled and is_complete(f)):
            if self.clock() - st.st_mtime >= STALLED_S:  # it stopped growing long ago: no writer will finish it
                seen.state = "bad"
                return "corrupt"
            told = seen.state == "writing"
            seen.state = "writing"
            return "quiet" if told else "writing"
        seen.state = "done"
        return "ready"

    def writing(self) -> bool:
        """Is a file of the folder still being written (as of the last poll)?"""
        return any(seen.state == "writing" for seen in self.seen.values())

    def mark_bad(self, f: Path) -> None:
        """A capture that looked complete but could not be read: not offered again until it changes."""
        if f in self.seen:
            self.seen[f].state = "bad"
