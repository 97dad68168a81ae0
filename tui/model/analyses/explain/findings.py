"""What an explain rule returns: findings as data (figures as numbers with units), never prose.

A rule is an id and a finder (Analysis, Summary) -> list[Finding]. A Finding carries a title, its
figures (Quantity: a number and its unit; or plain ints, floats and names), the events it marks and
the templates its note is made of; tui/tables/explain.py holds the templates and writes the note at
render time, so `explain --format json` has numbers. Findings are kept in the cache as msgpack, so
every field stays plain data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...analysis import Analysis
    from ..summary import Summary


@dataclass
class Quantity:
    """A figure with its unit: "us" (microseconds), "fraction" (0..1), "x" (times); label: what it is of."""

    value: float
    unit: str
    label: str = ""


def us(value: float, label: str = "") -> Quantity:
    return Quantity(float(value), "us", label)


# A finding's figures: quantities, lists of them (one per op named), counts, or names (plain fields).
Figure = Quantity | list[Quantity] | int | float | str


@dataclass
class Finding:
    """A rule that fired: its figures, the templates of its note (tui/tables/explain.py; none: the rule's own),
    and the events it applies to (maybe none: trace-wide; a long list is cut, and total says how many)."""

    rule: str
    title: str
    figures: dict[str, Figure]
    events: list[int] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)
    total: int = 0  # how many events it is about, when it marks only some of them (0: every one is marked)

    @property
    def count(self) -> int:
        """How many events the finding is about: all of them, never the length of a list cut to mark a few."""
        return max(self.total, len(self.events))

    @property
    def templates(self) -> list[str]:
        return self.parts or [self.rule]


@dataclass(frozen=True)
class Rule:
    id: str
    find: Callable[[Analysis, Summary], list[Finding]]
