"""A table's columns appended chunk by chunk into arrays with room kept ahead, so the whole table is never joined.

Keeping each chunk's pieces and joining them at the end wrote every column twice and held both copies at the
peak (the 1 GB tile read by the compiled scan: 0.18 s and 250 MiB more page faults in the join, benchmarks/
RESULTS.md, round 14). Here a chunk's values go straight into their place. The room is reserved as address space
only: the kernel gives a page when it is first written, so room reserved and never used costs no memory. When a
table outgrows its room it moves once into twice the room (amortised: each value is copied at most once more on
average).
"""

from __future__ import annotations

import numpy as np

_FIRST_ROOM = 1 << 12  # rows reserved at a table's first chunk when nothing better is known


class Growing:
    """Columns of the given dtypes, appended to in step (every column gets the same number of values)."""

    def __init__(self, dtypes: dict[str, type]) -> None:
        self.dtypes = dtypes
        self.n = 0
        self.room = 0
        self.hint = 0
        self.arrays: dict[str, np.ndarray] = {}

    def reserve(self, rows: int) -> None:
        """The rows expected in all (an estimate: more are taken, and fewer cost nothing but address space)."""
        self.hint = max(self.hint, rows)

    def extend(self, **cols) -> None:
        """Append one chunk's values of every column (array-likes of one length, cast to the columns' dtypes)."""
        m = len(next(iter(cols.values())))
        if self.n + m > self.room:
            self._grow(self.n + m)
        for key, values in cols.items():
            self.arrays[key][self.n : self.n + m] = values
        self.n += m

    def _grow(self, need: int) -> None:
        room = max(need, 2 * self.room, self.hint, _FIRST_ROOM)
        for key, dtype in self.dtypes.items():
            new: np.ndarray = np.empty(room, dtype)
            if key in self.arrays:
                new[: self.n] = self.arrays[key][: self.n]
            self.arrays[key] = new
        self.room = room

    def column(self, key: str, copy: bool) -> np.ndarray:
        """The values so far: a view of the column (copy=False: nothing may be appended after), or a copy."""
        if key not in self.arrays:
            return np.empty(0, self.dtypes[key])
        values = self.arrays[key][: self.n]
        return values.copy() if copy else values
