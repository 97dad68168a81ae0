"""Standard output that says why it could not be written: a full disk (`> /dev/full`), a closed stdout (`>&-`).
A command whose output fails ends in one line naming the reason (exit 2), not an internal error; a closed stderr
drops the notes (there is nowhere to say them). A broken pipe stays BrokenPipeError (commands.py: exit 0)."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class _Closed:
    """What a closed stdout (Python's None) writes to: nothing."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False


class Output:
    """sys.stdout, remembering the error its last write or flush raised; every other attribute is the stream's."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.failure: OSError | None = None

    def write(self, text: str) -> int:
        try:
            return self._inner.write(text)
        except OSError as exc:
            self._failed(exc)
            raise

    def flush(self) -> None:
        try:
            self._inner.flush()
        except OSError as exc:
            self._failed(exc)
            raise

    def _failed(self, exc: OSError) -> None:
        """Kept to say; what is left unwritten goes nowhere, so Python's flush at exit says nothing more."""
        self.failure = exc
        if isinstance(self._inner, _Closed) or isinstance(exc, BrokenPipeError):
            return
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._inner.fileno())
        except (OSError, ValueError, AttributeError):
            self._inner = _Closed()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@contextmanager
def guarded_streams() -> Iterator[None]:
    """sys.stdout as an Output (a closed one as a stream whose writes fail) while a command runs, then as it was;
    a closed stderr as os.devnull."""
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the process's life, as sys.stderr was
    before = sys.stdout
    if not isinstance(before, Output):
        sys.stdout = Output(_Closed() if before is None else before)
    try:
        yield
    finally:
        sys.stdout = before


def output_failure() -> str | None:
    """Why standard output could not be written, or None when it could (an OSError was another's)."""
    out = sys.stdout
    failure = out.failure if isinstance(out, Output) else None
    return None if failure is None else (failure.strerror or str(failure))
