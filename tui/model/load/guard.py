"""Guards against hostile input for the loader: bytes scanned without holding them, JSON cut at a depth without
recursion, and how much the machine can give a trace unzipped (the limits themselves: model/limits.py)."""

from __future__ import annotations

import mmap
import os
import re
import shutil
from pathlib import Path

import numpy as np

from ..limits import DISK_SHARE, MEMORY_SHARE


def memory_available() -> int:
    """Bytes of memory the system can give without swapping (MemAvailable; free pages where it is not known)."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 4 << 30


def disk_free(folder: Path) -> int:
    """Free bytes on the disk that holds folder (its nearest existing parent)."""
    for place in (folder, *folder.parents):
        try:
            return shutil.disk_usage(place).free
        except OSError:
            continue
    return 0


def inflate_limit(to_file: Path | None) -> tuple[int, str]:
    """How far a compressed trace may inflate, and what that limit is, in words."""
    if to_file is None:
        return int(memory_available() * MEMORY_SHARE), "a quarter of the memory available"
    return int(disk_free(to_file.parent) * DISK_SHARE), f"half the free disk in {to_file.parent}"


_BLANK = b" \t\r\n"
_WINDOW = 4 << 20


def last_nonblank(buf: bytes | mmap.mmap, floor: int, end: int) -> int:
    """The position of the last byte before `end` (and at or after `floor`) that is not JSON whitespace, else
    floor - 1. Read backwards in growing windows; a mapped file's pages are handed back after each, so a gigabyte
    of blanks costs a window of memory, not a gigabyte."""
    hi, window = end, 4096
    while hi > floor:
        lo = max(floor, hi - window)
        kept = buf[lo:hi].rstrip(_BLANK)
        if kept:
            return lo + len(kept) - 1
        if isinstance(buf, mmap.mmap) and hi - lo >= _WINDOW:
            drop_pages(buf, lo, hi)
        hi, window = lo, min(window * 4, _WINDOW)
    return floor - 1


def drop_pages(buf: mmap.mmap, lo: int, hi: int) -> None:
    """Let the kernel take back the pages of a read-only mapping read so far (they stay in the page cache)."""
    at = lo - lo % mmap.PAGESIZE
    try:
        buf.madvise(mmap.MADV_DONTNEED, at, hi - at)
    except (AttributeError, OSError, ValueError):
        pass


_QUOTE, _BACKSLASH = 0x22, 0x5C
_OPENS, _CLOSES = (0x5B, 0x7B), (0x5D, 0x7D)


def levels(text: bytes) -> np.ndarray:
    """The nesting level of every byte of a JSON text (0 outside every array and object; a bracket counts as
    inside the array or object it opens or closes); strings, escapes included, are read as text."""
    a = np.frombuffer(text, np.uint8)
    n = len(a)
    if not n:
        return np.zeros(0, np.int64)
    quotes = np.flatnonzero(a == _QUOTE)
    if len(quotes):
        slash = a == _BACKSLASH
        last_other = np.maximum.accumulate(np.where(slash, -1, np.arange(n)))  # the last non-backslash up to k
        before = np.maximum(quotes - 1, 0)
        run = np.where(quotes > 0, before - last_other[before], 0)  # backslashes just before each quote
        quotes = quotes[run % 2 == 0]  # the unescaped ones open or close strings
    mark = np.zeros(n + 1, np.int64)
    mark[quotes] = 1
    inside = (np.cumsum(mark[:n]) % 2 == 1) | (mark[:n] == 1)  # from an opening quote to its closing one
    opens = ((a == _OPENS[0]) | (a == _OPENS[1])) & ~inside
    closes = ((a == _CLOSES[0]) | (a == _CLOSES[1])) & ~inside
    depth = np.cumsum(opens.astype(np.int64) - closes)
    return depth + closes


def deepest(text: bytes) -> int:
    """How many levels deep a JSON text nests (0: a scalar)."""
    return int(levels(text).max(initial=0))


_NULL = b"null"


def cut_deep(text: bytes, limit: int, instead: bytes = _NULL) -> tuple[bytes, int]:
    """The JSON text with every array or object nested deeper than `limit` levels replaced by `instead` (null),
    and how many were cut. Runs in time linear in the text (no recursion)."""
    level = levels(text)
    over = level > limit
    if not over.any():
        return text, 0
    edges = np.flatnonzero(np.diff(np.concatenate([[False], over, [False]]).astype(np.int8)))
    starts, stops = edges[0::2].tolist(), edges[1::2].tolist()
    pieces, at = [], 0
    for a, b in zip(starts, stops, strict=True):
        pieces += [text[at:a], instead]
        at = b
    pieces.append(text[at:])
    return b"".join(pieces), len(starts)


RECURSION = re.compile(r"recursion", re.IGNORECASE)


def too_deep(exc: BaseException) -> bool:
    """Did a decoder give up for the depth of its input (msgspec's RecursionError, orjson's "recursion limit")?"""
    return isinstance(exc, RecursionError) or bool(RECURSION.search(str(exc)))
