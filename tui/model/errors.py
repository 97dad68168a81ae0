"""Errors the loader reports as a one-line message naming the file, and what a setting cannot do, said once."""

from __future__ import annotations

import functools
import warnings


class TraceError(Exception):
    """An unreadable or invalid trace: the CLI prints it in one line and exits 2."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = str(path)
        self.problem = problem


def no_such_file(named: object) -> str:
    """What is said of a path with nothing there; of `-` too, what to do instead (the traces are read as files)."""
    if str(named) == "-":
        return "no such file (tracetui reads a trace from a file, not from standard input: save it to one first)"
    return "no such file"


class QueryError(ValueError):
    """A bad query (a regular expression, an id the trace does not have, a window, SQL DuckDB refuses): one line."""


SAID: list[str] = []  # what said_once said, in order (the viewer shows what a load said: stderr is not seen there)


@functools.cache
def said_once(message: str) -> None:
    """Say something about a setting once per process, on stderr as Python says warnings (the command line shows
    tracetui's own as their line alone)."""
    SAID.append(message)
    warnings.warn(f"tracetui: {message}", RuntimeWarning, stacklevel=3)
