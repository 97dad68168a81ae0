"""The user's code and ours: whose frame is whose, and the user's exceptions told as theirs."""

from __future__ import annotations

import os
import sysconfig
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import ProfileError, UserCodeError

RUNNER_DIR = Path(__file__).resolve().parent
OUR_DIRS = (RUNNER_DIR, RUNNER_DIR.parent / "tui")
WORKLOADS_FILE = RUNNER_DIR / "workloads.py"
_LIBRARY_DIRS = tuple(
    str(Path(p).resolve()) + os.sep
    for key in ("stdlib", "platstdlib", "purelib", "platlib")
    if (p := sysconfig.get_paths().get(key))
)


def is_ours(filename: str, workloads_too: bool = True) -> bool:
    """A file of tracetui or its runner (the built-in workloads count as ours unless workloads_too is False)."""
    if filename.startswith("<frozen"):
        return filename.startswith(("<frozen runpy", "<frozen importlib"))
    try:
        path = Path(filename).resolve()
    except (OSError, ValueError):
        return False
    if path.name == "runpy.py":
        return True
    if path == WORKLOADS_FILE:
        return workloads_too
    return any(path.is_relative_to(d) for d in OUR_DIRS)


def is_library(filename: str) -> bool:
    """A file of the standard library or an installed package (torch among them)."""
    if filename.startswith("<"):
        return True
    try:
        path = str(Path(filename).resolve())
    except (OSError, ValueError):
        return False
    return path.startswith(_LIBRARY_DIRS) or "site-packages" in path or "dist-packages" in path


def shown(filename: str) -> str:
    """A file as the user would type it: relative to the working folder when under it."""
    try:
        rel = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if rel.startswith("..") else rel


def user_frames(tb) -> list[traceback.FrameSummary]:
    """The frames of a traceback that are the user's (not tracetui's, not a library's)."""
    return [f for f in traceback.extract_tb(tb) if not is_ours(f.filename) and not is_library(f.filename)]


def as_user_error(exc: BaseException) -> UserCodeError | None:
    """The user's exception told as theirs; None when no frame of theirs raised it (then it is ours)."""
    if isinstance(exc, SyntaxError) and exc.filename and not is_ours(exc.filename):
        return _syntax_error(exc)
    frames = user_frames(exc.__traceback__)
    if not frames:
        return None
    last = frames[-1]
    headline = f"{shown(last.filename)}:{last.lineno} in {last.name}: {type(exc).__name__}: {exc}"
    details = "Traceback (your frames only):\n" + "".join(traceback.format_list(frames))
    return UserCodeError(headline, details)


def _syntax_error(exc: SyntaxError) -> UserCodeError:
    where = f"{shown(exc.filename or '?')}:{exc.lineno}:{exc.offset or 0}"
    details = ""
    if exc.text:
        line = exc.text.rstrip("\n")
        indent = len(line) - len(line.lstrip())
        details = f"    {line.strip()}\n    {' ' * max((exc.offset or 1) - 1 - indent, 0)}^"
    return UserCodeError(f"{where}: SyntaxError: {exc.msg}", details)


@contextmanager
def their_errors() -> Iterator[None]:
    """Run the user's code: what it raises comes out as a UserCodeError; our own bugs pass through as they are."""
    try:
        yield
    except (ProfileError, UserCodeError, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - sorted into theirs and ours just below
        told = as_user_error(exc)
        if told is None:
            raise
        raise told from exc
