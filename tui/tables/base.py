"""What a table definition is made of: display columns, JSON/CSV fields, sort keys."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

R = TypeVar("R")  # a row of the model
C = TypeVar("C")  # what a column may need besides its row (the table, for totals)


class UnknownSort(ValueError):
    """A sort key the table does not have (the CLI reports it as bad usage)."""

    def __init__(self, key: str, choices: list[str]) -> None:
        super().__init__(f"unknown sort key {key!r}; choose from {', '.join(choices)}")


@dataclass(frozen=True)
class SortKey:
    """Sort by a row attribute, descending unless reverse is False (names sort ascending)."""

    attr: str
    reverse: bool = True


@dataclass(frozen=True)
class Column(Generic[R, C]):
    """A displayed column: its header, its text for a row, and the sort key that orders by it."""

    header: str
    text: Callable[[R, C, int], str]  # (row, context, name width) -> cell text
    sort: str | None = None


@dataclass(frozen=True)
class Field(Generic[R]):
    """A JSON key (also the CSV header) and the plain value of a row for it."""

    key: str
    value: Callable[[R], Any]


def sort_rows(rows: Sequence, sorts: dict[str, SortKey], key: str) -> list:
    """Rows ordered by a sort key; rows without a value (None) go last."""
    spec = sorts[key]
    return sorted(rows, key=lambda r: (getattr(r, spec.attr) is None, _sortable(getattr(r, spec.attr), spec.reverse)))


def _sortable(value: Any, reverse: bool) -> Any:
    if value is None:
        return 0
    return -value if reverse and not isinstance(value, str) else value


def limit(rows: list, n: int) -> list:
    """The first n rows (all when n <= 0)."""
    return rows if n <= 0 else rows[:n]
