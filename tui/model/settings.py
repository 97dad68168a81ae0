"""The tracetui settings the model reads from the environment, and their check when a command starts.

Each setting is read here, by the code that uses it (threads.py, load/parts.py, load/scanned.py, load/cachedir.py,
the command line's width, sql/session.py), and a bad value is said once per process (errors.said_once), with what
is used instead. A command that reads none of them (a cached summary) left a typo unsaid: the command line calls
check() first, which reads each one, so that a bad one is said at start and the readers say nothing more later.
Cheap enough for every start: os, math and errors only.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable

from .errors import count_setting, said_once

DECODE_PATHS = ("msgspec", "native")
CACHE_MAX_GB = 20.0  # the disk the trace cache keeps at most (TRACETUI_CACHE_MAX_GB); the newest entry always stays
SQL_TIMEOUT_S = 30.0  # a query's time limit, where one is set (TRACETUI_SQL_TIMEOUT_S)


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
    return _number("TRACETUI_RESULT_DELAY", "a number of seconds", "ignored", zero=True) or 0.0


def cache_max_gb() -> float:
    """TRACETUI_CACHE_MAX_GB: the disk the trace cache keeps at most, in GB (0: the newest entry alone), as
    load/cachedir.py's prune reads it; CACHE_MAX_GB when unset, or a bad value, said."""
    gb = _number("TRACETUI_CACHE_MAX_GB", "a number of GB", f"{CACHE_MAX_GB:g} GB", zero=True)
    return CACHE_MAX_GB if gb is None else gb


def columns() -> int | None:
    """TRACETUI_COLUMNS: the width text is fitted to, in columns (0: no limit), where the command line prints; None
    when unset, or a bad value, said (the terminal's width then, as reports/formats.py's terminal_width says)."""
    text = os.environ.get("TRACETUI_COLUMNS", "").strip()
    if text and not text.isdigit():
        said_once(f"TRACETUI_COLUMNS={text} is not a whole number of columns: the terminal's width")
    return int(text) if text.isdigit() else None


def sql_timeout_s() -> float | None:
    """TRACETUI_SQL_TIMEOUT_S: a query's time limit in seconds (sql/session.py), 0 for none (as `sql --timeout 0`,
    None here); SQL_TIMEOUT_S when unset, or a bad value, said."""
    limit = _number("TRACETUI_SQL_TIMEOUT_S", "a number of seconds, 0 or more (0: none)", f"{SQL_TIMEOUT_S:g} s", True)
    return SQL_TIMEOUT_S if limit is None else limit or None


def sql_memory_gb() -> float | None:
    """TRACETUI_SQL_MEMORY_GB: a locked SQL session's memory limit in GB (sql/session.py); None when unset, or a bad
    value, said: the session takes a quarter of the memory available then."""
    return _number("TRACETUI_SQL_MEMORY_GB", "a positive number of GB", "a quarter of the memory available")


def _number(name: str, what: str, instead: str, zero: bool = False) -> float | None:
    """A positive finite number from the environment variable `name` (or 0, where zero); None when unset, or
    anything else, which is said once: `NAME=value is not <what>: <instead>`."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and (value > 0 or (zero and value == 0))):
        said_once(f"{name}={text} is not {what}: {instead}")
        return None
    return value


SETTINGS: dict[str, Callable[[], object]] = {
    "TRACETUI_THREADS": threads,
    "TRACETUI_DECODE": decode_path,
    "TRACETUI_DECODE_PROCS": decode_procs,
    "TRACETUI_RESULT_DELAY": result_delay,
    "TRACETUI_CACHE_MAX_GB": cache_max_gb,
    "TRACETUI_COLUMNS": columns,
    "TRACETUI_SQL_TIMEOUT_S": sql_timeout_s,
    "TRACETUI_SQL_MEMORY_GB": sql_memory_gb,
}


def check() -> None:
    """Read every setting now: each bad one is said in one line on stderr (a warning the command line shows as its
    line alone), once, whatever the command reads later."""
    for read in SETTINGS.values():
        read()
