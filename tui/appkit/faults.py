"""Where a failure inside the app goes: one line for the user, the whole traceback to a log file."""

from __future__ import annotations

import datetime
import traceback
from pathlib import Path

LOG_NAME = "tracetui.log"
KEEP_BYTES = 1 << 20  # the log is started again past this size


def log_path() -> Path:
    """The log file, in the cache directory (TRACETUI_CACHE_DIR moves it)."""
    from ..model.load.cache import cache_root

    return cache_root() / LOG_NAME


def one_line(exc: BaseException) -> str:
    """The exception as the user reads it: its type and its first line."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def record(what: str, exc: BaseException) -> Path:
    """Append the traceback of a failure to the log; the log's path (where the pane says to look)."""
    path = log_path()
    stamp = datetime.datetime.now().isoformat(timespec="seconds")
    body = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = "w" if path.exists() and path.stat().st_size > KEEP_BYTES else "a"
        with path.open(mode) as f:
            f.write(f"--- {stamp} {what}\n{body}\n")
    except OSError:
        pass  # a log that cannot be written must not end the app either
    return path
