"""Errors the loader reports as a one-line message naming the file."""

from __future__ import annotations


class TraceError(Exception):
    """An unreadable or invalid trace: the CLI prints it in one line and exits 2."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = str(path)
        self.problem = problem


class QueryError(ValueError):
    """A bad query (a regular expression, an id the trace does not have, a window, SQL DuckDB refuses): one line."""
