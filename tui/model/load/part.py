"""A decoded part of a file: the columns of a run of chunks, with its own string, track and chunk-row ids."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..columns import Events, Flows, Instants, Table
from ..trace import LoadReport
from ..tracks import Meta
from .spill import Spill

TABLES: dict[str, type[Table]] = {"x": Events, "inst": Instants, "flow": Flows}


@dataclass
class Part:
    """The columns of a run of chunks, with string, track and chunk-row ids local to the part.

    A worker's part arrives spilled: its tables are empty here and its columns lie in `spilled`.
    """

    x: Events
    inst: Instants
    flow: Flows
    names: list
    cat_names: list
    shapes: list
    tracks: list  # (pid, tid) keys
    meta: Meta
    rows: list[tuple[int, int, int]]  # chunk rows: (start, end, first event)
    report: LoadReport = field(default_factory=LoadReport)
    spilled: Spill | None = None

    def length(self, table: str) -> int:
        return self.spilled.length(table) if self.spilled else len(getattr(self, table))

    def fill(self, table: str, key: str, out: np.ndarray) -> None:
        if self.spilled:
            self.spilled.fill(table, key, out)
        else:
            out[:] = getattr(self, table).column(key)
