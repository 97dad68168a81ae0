"""Standard output that says why it could not be written: a full disk (`> /dev/full`), a closed stdout (`>&-`).
A command whose output fails ends in one line naming the reason (exit 2), not an internal error; a closed stderr
drops the notes (there is nowhere to say them). A broken pipe stays BrokenPipeError (commands.py: exit 0).

What a command prints, on stdout and stderr, is shown through tui.text.sanitize.visible_lines: a trace's names and
a file's name are data, and no control character or escape sequence of theirs reaches the terminal (the reports
sanitize their cells too, for widths; this is the one door every line goes out by)."""

from __future__ import annotations

import errno
import os
import sys
import warnings
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


class Visible:
    """A text stream whose writes show control characters as visible escapes (newlines and tabs kept)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        from ..text.escape import visible_lines  # on first write; no rich: --help and --version stay light

        return self._inner.write(visible_lines(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


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


def stream_columns(stream: Any) -> int | None:
    """The width of the terminal a stream writes to (COLUMNS where it is set, as shutil reads it); None when the
    stream is no terminal. Not shutil.get_terminal_size(), which asks stdout's terminal whichever stream writes:
    with stdout piped, stderr's notes were fitted to 80 columns on a narrower terminal."""
    try:
        if not stream.isatty():
            return None
        fd = stream.fileno()
    except (AttributeError, ValueError, OSError):
        return None
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return os.get_terminal_size(fd).columns or None
    except OSError:
        return None


def plain_warnings() -> None:
    """tracetui's own warnings (the model says what it cannot print as a RuntimeWarning "tracetui: ...") as that
    one line, without Python's file, line and source line; every other warning as Python shows it. Once per
    process: each command of a test run wrapped the one before, and a thousand commands in, formatting any other
    warning went a thousand calls deep (RecursionError, a test worker lost)."""
    shown = warnings.formatwarning
    if getattr(shown, "tracetui_one_line", False):
        return

    def one_line(
        message: Warning | str, category: type[Warning], filename: str, lineno: int, line: str | None = None
    ) -> str:
        text = str(message)
        return f"{text}\n" if text.startswith("tracetui: ") else shown(message, category, filename, lineno, line)

    one_line.tracetui_one_line = True  # type: ignore[attr-defined]
    warnings.formatwarning = one_line


@contextmanager
def guarded_streams(visible: bool = True) -> Iterator[None]:
    """sys.stdout as an Output (a closed one as a stream whose writes fail) while a command runs, then as it was;
    a closed stderr as os.devnull. visible: both streams show control characters as escapes (not for a command
    that runs the user's own code, whose output is theirs: a progress bar's carriage returns stay)."""
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the process's life, as sys.stderr was
    before, before_err = sys.stdout, sys.stderr
    if not isinstance(before, Output):
        inner = _Closed() if before is None else before
        sys.stdout = Output(Visible(inner) if visible and before is not None else inner)
    if visible and not isinstance(before_err, Visible):
        sys.stderr = Visible(before_err)
    strict = _escaping(before)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = before, before_err
        if strict:
            before.reconfigure(errors="strict")  # type: ignore[union-attr]


PLAIN = {"─": "-", "━": "-", "│": "|", "┃": "|", "…": "...", "µ": "u", "×": "x", "–": "-", "—": "-", "≥": ">=",
         "≤": "<=", "→": "->", "←": "<-", "·": ".", "•": "*", "█": "#", "▏": "|", "≈": "~"}  # fmt: skip
_ERRORS = "tracetui-plain"


def _plain(exc: UnicodeError) -> tuple[str, int]:
    """What an encoding cannot write: the tables' rules and marks as ASCII, anything else as a backslash escape."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    text = exc.object[exc.start : exc.end]
    return "".join(PLAIN.get(c) or c.encode("ascii", "backslashreplace").decode() for c in text), exc.end


def _escaping(stream: Any) -> bool:
    """A stdout whose encoding cannot write every character (PYTHONIOENCODING=ascii, latin-1) writes the tables'
    rules as ASCII and anything else it cannot as a backslash escape, rather than end the command with
    UnicodeEncodeError. True when it was strict (set back after)."""
    if getattr(stream, "errors", None) != "strict" or not hasattr(stream, "reconfigure"):
        return False
    if "utf" in str(getattr(stream, "encoding", "")).lower():
        return False  # (writes every character but a lone surrogate, which Visible escapes)
    import codecs

    codecs.register_error(_ERRORS, _plain)
    try:
        stream.reconfigure(errors=_ERRORS)
    except (ValueError, OSError, AttributeError):
        return False
    return True


def output_failure() -> str | None:
    """Why standard output could not be written, or None when it could (an OSError was another's)."""
    out = sys.stdout
    failure = out.failure if isinstance(out, Output) else None
    return None if failure is None else (failure.strerror or str(failure))
