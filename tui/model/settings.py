"""The tracetui settings the model reads from the environment, and their check when a command starts.

Each setting is read here, by the code that uses it (threads.py, load/parts.py, load/scanned.py), and a bad value
is said once per process (errors.said_once). A command that reads none of them (a cached summary) left a typo
unsaid: the command line calls check() first, which reads each one, so that a bad one is said at start and the
readers say nothing more later. Cheap enough for every start: os, math and errors only.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable

from .errors import count_setting, said_once

DECODE_PATHS = ("msgspec", "native")


def threads() -> int | None:
    """TRACETUI_THREADS: threads for side-by-side passes (None: unset, or a bad value, said)."""
    return count_setting("TRACETUI_THREADS")


def decode_procs() -> int | None:
    """TRACETUI_DECODE_PROCS: processes to decode a trace with, at most one per core (None: unset, or a bad value,
    said); load/parts.py reads it so."""
    return count_setting("TRACETUI_DECODE_PROCS", os.cpu_count() or 1)


def decode_path() -> str:
    """TRACETUI_DECODE: `native` (the compiled scan) or `msgspec`, the default; any other value is said and reads as
    msgspec, as load/scanned.py's mode() says it."""
    asked = os.environ.get("TRACETUI_DECODE", "").strip().lower()
    if asked not in ("", *DECODE_PATHS):
        said_once(f"TRACETUI_DECODE={asked} is neither msgspec nor native: msgspec reads")
    return "native" if asked == "native" else "msgspec"


def result_delay() -> float:
    """TRACETUI_RESULT_DELAY: seconds each viewer worker holds its result back (a test hook, appkit/pace.py); 0 when
    unset, or a bad value, said."""
    text = os.environ.get("TRACETUI_RESULT_DELAY", "").strip()
    try:
        seconds = float(text or 0)
    except ValueError:
        seconds = -1.0
    if not (math.isfinite(seconds) and seconds >= 0):
        said_once(f"TRACETUI_RESULT_DELAY={text} is not a number of seconds: ignored")
        return 0.0
    return seconds


SETTINGS: dict[str, Callable[[], object]] = {
    "TRACETUI_THREADS": threads,
    "TRACETUI_DECODE": decode_path,
    "TRACETUI_DECODE_PROCS": decode_procs,
    "TRACETUI_RESULT_DELAY": result_delay,
}


def check() -> None:
    """Read every setting now: each bad one is said in one line on stderr (a warning the command line shows as its
    line alone), once, whatever the command reads later."""
    for read in SETTINGS.values():
        read()
