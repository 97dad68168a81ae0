"""What an explain rule returns: findings as data (figures as numbers with units), never prose.

A rule is an id and a finder (Analysis, Summary) -> list[Finding]. A Finding carries a title, its
figures (Quantity: a number and its unit; or plain ints, floats and names), the events it marks and
the templates its note is made of; tui/tables/explain.py holds the templates and writes the note at
render time, so `explain --format json` has numbers. Findings are kept in the cache as msgpack, so
every field stays plain data. savings.py adds what the finding's fix would buy (a Saving), or why no
what-if applies.
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
Figure = Quantity | list[Quantity] | int | float | str | None


@dataclass
class Saving:
    """What a finding's fix buys: a --what-if spec re-solved on the critical path of the step the verdict reads (ns).

    why: where it saves (next to) nothing, the reason: "gpu-waits" (the change is on the GPU, the path runs through
    the CPU), "cpu-waits" (the other way round), "off-path" (it is not on the path), "absent" (none of it runs in the
    window).
    """

    spec: str
    window: str
    length_ns: int  # the path as recorded
    after_ns: int  # the path with the change
    bound_before: str  # the class with the most time on the path, before and after
    bound_after: str
    bound_share: float  # bound_before's share of the path
    matched: list[str] = field(default_factory=list)  # the names the spec touched (the first few)
    why: str = ""
    caveats: list[tuple[str, int]] = field(default_factory=list)  # what the what-if could not model (its notes)

    @property
    def saving_ns(self) -> int:
        return self.length_ns - self.after_ns

    @property
    def share(self) -> float:
        return self.saving_ns / self.length_ns if self.length_ns else 0.0


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
    saving: Saving | None = None  # what its fix buys on the critical path (savings.py); None: no what-if applies
    no_saving: str = ""  # then why (a reason code, worded by tui/tables/explain.py)

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
