"""The tracetui settings the model reads from the environment, and their check when a command starts.

Each setting is read here, by the code that uses it (threads.py, load/parts.py, load/scanned.py, load/cachedir.py,
the command line's width, sql/session.py, the viewer's keymap), and a bad value is said in one line once per process
(_bad: `NAME=value is not <what it must be>: <what is used instead>`, the default with its value where it has one).
A command that reads none of them (a cached summary) left a typo unsaid: the command line calls check() first,
which reads each one, so that a bad one is said at start and the readers say nothing more later. Cheap enough for
every start: os, math, re, pathlib and errors only (platformdirs where a folder's default is said).
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from .errors import said_once

DECODE_PATHS = ("auto", "msgspec", "native")
MAX_THREADS = 8  # side-by-side passes take one thread per core up to this many, unless TRACETUI_THREADS says
CACHE_MAX_GB = 20.0  # the disk the trace cache keeps at most (TRACETUI_CACHE_MAX_GB); the newest entry always stays
SQL_TIMEOUT_S = 30.0  # a query's time limit, where one is set (TRACETUI_SQL_TIMEOUT_S)


def threads() -> int:
    """TRACETUI_THREADS: threads for side-by-side passes; one per core up to MAX_THREADS when unset, or a bad
    value, said."""
    default = max(1, min(os.cpu_count() or 1, MAX_THREADS))
    instead = f"the default, {default} (one per core, up to {MAX_THREADS})"
    return _count("TRACETUI_THREADS", "threads", instead) or default


def decode_procs() -> int | None:
    """TRACETUI_DECODE_PROCS: processes to decode a trace with, at most one per core (a larger number is said and
    cut to it); None when unset, or a bad value, said: load/parts.py's worker_count picks by the trace's size."""
    cores = os.cpu_count() or 1
    instead = "the default, one per core for a big trace, else 1"
    return _count("TRACETUI_DECODE_PROCS", "processes", instead, most=cores)


def decode_path() -> str:
    """TRACETUI_DECODE: `auto`, the default (the compiled scan where numba has compiled it, else msgspec), `native`
    (the compiled scan, compiled first where it must be) or `msgspec`, as load/scanned.py's mode() says it; any other
    value is said and reads as the default."""
    text = os.environ.get("TRACETUI_DECODE", "").strip()
    if text.lower() not in ("", *DECODE_PATHS):
        _bad("TRACETUI_DECODE", text, ", ".join(DECODE_PATHS[:-1]) + f" or {DECODE_PATHS[-1]}", "the default, auto")
    return text.lower() if text.lower() in DECODE_PATHS else "auto"


def result_delay() -> float:
    """TRACETUI_RESULT_DELAY: seconds each viewer worker holds its result back (a test hook, appkit/pace.py); 0 when
    unset, or a bad value, said."""
    return _number("TRACETUI_RESULT_DELAY", "a number of seconds, 0 or more", "the default, 0 s", zero=True) or 0.0


def cache_max_gb() -> float:
    """TRACETUI_CACHE_MAX_GB: the disk the trace cache keeps at most, in GB (0: the newest entry alone), as
    load/cachedir.py's prune reads it; CACHE_MAX_GB when unset, or a bad value, said."""
    gb = _number("TRACETUI_CACHE_MAX_GB", "a number of GB, 0 or more", f"the default, {CACHE_MAX_GB:g} GB", zero=True)
    return CACHE_MAX_GB if gb is None else gb


def columns() -> int | None:
    """TRACETUI_COLUMNS: the width text is fitted to, in columns (0: no limit), where the command line prints; None
    when unset, or a bad value, said (the terminal's width then, as reports/formats.py's terminal_width says)."""
    what, instead = "a whole number of columns, 0 or more (0: no limit)", "the default, the terminal's width"
    text = os.environ.get("TRACETUI_COLUMNS", "").strip()
    if text and not _whole(text):
        _bad("TRACETUI_COLUMNS", text, what, instead)
    return int(text) if _whole(text) else None


def sql_timeout_s() -> float | None:
    """TRACETUI_SQL_TIMEOUT_S: a query's time limit in seconds (sql/session.py), 0 for none (as `sql --timeout 0`,
    None here); SQL_TIMEOUT_S when unset, or a bad value, said."""
    what, instead = "a number of seconds, 0 or more (0: none)", f"the default, {SQL_TIMEOUT_S:g} s"
    limit = _number("TRACETUI_SQL_TIMEOUT_S", what, instead, zero=True)
    return SQL_TIMEOUT_S if limit is None else limit or None


def sql_memory_gb() -> float | None:
    """TRACETUI_SQL_MEMORY_GB: a locked SQL session's memory limit in GB (sql/session.py); None when unset, or a bad
    value, said: the session takes a quarter of the memory available then."""
    return _number("TRACETUI_SQL_MEMORY_GB", "a number of GB above 0", "the default, a quarter of the memory available")


def cache_dir() -> Path | None:
    """TRACETUI_CACHE_DIR: the folder asked for the cache, absolute (load/cachedir.py uses it as it is, or through a
    subfolder of its own); None when unset or empty, or a bad value, said: the user's cache folder then."""
    return _folder("TRACETUI_CACHE_DIR", "cache")


def config_dir() -> Path | None:
    """TRACETUI_CONFIG_DIR: the folder of the viewer's keymap and marks (app/keymap.py), absolute; None when unset or
    empty, or a bad value, said: the user's config folder then."""
    return _folder("TRACETUI_CONFIG_DIR", "config")


def user_folder(kind: str) -> Path:
    """The platform's folder for tracetui of a kind, "cache" or "config" (~/.cache/tracetui, ~/.config/tracetui on
    Linux): where the cache and the config live unless TRACETUI_CACHE_DIR or TRACETUI_CONFIG_DIR says."""
    import platformdirs

    folder = platformdirs.user_cache_dir if kind == "cache" else platformdirs.user_config_dir
    return Path(folder("tracetui"))


def _bad(name: str, value: str, what: str, instead: str) -> None:
    """Say once that a setting's value will not do, in the one line every setting says it in:
    `NAME=value is not <what it must be>: <what is used instead>`. Control characters, bidi controls and lone
    surrogates are visible escapes (`\\x0d`, `\\u202e`), as in a name from a trace (tui/text/escape.py, which the
    model cannot import): written as they are, they would act on the terminal or fail to encode."""
    said_once(_visible(f"{name}={value} is not {what}: {instead}"))


def _visible(text: str) -> str:
    return "".join(c if c.isprintable() else _escape(ord(c)) for c in text)


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _whole(text: str) -> bool:
    """Digits alone, 0-9 (str.isdigit takes "²", which int() refuses)."""
    return text.isascii() and text.isdigit()


def _count(name: str, noun: str, instead: str, most: int | None = None) -> int | None:
    """A whole number of `noun` from the environment variable `name`, 1 or more (at most `most`, where given: a
    larger one is said and cut to it); None when unset, or anything else, which is said with what is used instead."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    what = f"a whole number of {noun}, 1 or more"
    if most is not None:
        what = f"a whole number of {noun} from 1 to {most} (this machine's cores)"
    if not (_whole(text) and int(text) > 0):
        _bad(name, text, what, instead)
        return None
    if most is not None and int(text) > most:
        _bad(name, text, what, f"{most}, the most")
        return most
    return int(text)


def _number(name: str, what: str, instead: str, zero: bool = False) -> float | None:
    """A positive finite number from the environment variable `name` (or 0, where zero); None when unset, or
    anything else, which is said with what is used instead."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and (value > 0 or (zero and value == 0))):
        _bad(name, text, what, instead)
        return None
    return value


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # C0, DEL and C1: a CR from a file of settings written on Windows


def _folder(name: str, kind: str) -> Path | None:
    """A folder from the environment variable `name`, absolute (~ expanded, a relative one from the working folder
    now); None when unset or empty, or a value that cannot be a folder, which is said: user_folder(kind) then."""
    text = os.environ.get(name, "")
    if not text.strip():
        return None
    path = Path(os.path.expanduser(text))
    try:
        path = path.absolute()
    except OSError:  # the working folder is gone: the folder stays relative (and cannot be made)
        pass
    what = _not_a_folder(text, path)
    if what:
        _bad(name, text, what, f"the default, {user_folder(kind)}")
        return None
    return path


def _not_a_folder(text: str, path: Path) -> str | None:
    """What the folder's path must be, where this one cannot be a folder (None: it can, or it is one): a path
    without control characters, with no file at it or above it."""
    if _CONTROL.search(text):
        return "a folder's path without control characters"
    for at in (path, *path.parents):
        try:
            mode = at.stat().st_mode  # one look: between is_dir() and exists() another opener may make the folder
        except (FileNotFoundError, NotADirectoryError):  # not there, or a file above it: look up
            continue
        except OSError:
            return None  # (cannot look: the cache or the keymap says what it cannot read or write)
        return None if stat.S_ISDIR(mode) else f"a folder's path ({at} is a file)"
    return None


SETTINGS: dict[str, Callable[[], object]] = {
    "TRACETUI_THREADS": threads,
    "TRACETUI_DECODE": decode_path,
    "TRACETUI_DECODE_PROCS": decode_procs,
    "TRACETUI_RESULT_DELAY": result_delay,
    "TRACETUI_CACHE_MAX_GB": cache_max_gb,
    "TRACETUI_COLUMNS": columns,
    "TRACETUI_SQL_TIMEOUT_S": sql_timeout_s,
    "TRACETUI_SQL_MEMORY_GB": sql_memory_gb,
    "TRACETUI_CACHE_DIR": cache_dir,
    "TRACETUI_CONFIG_DIR": config_dir,
}


def check() -> None:
    """Read every setting now: each bad one is said in one line on stderr (a warning the command line shows as its
    line alone), once, whatever the command reads later."""
    for read in SETTINGS.values():
        read()
