"""Decoded parts merged into one set of columns as they arrive, in part order (issue 39).

Each part interns its own strings and tracks and numbers its own chunk rows; the fold re-interns them in part order
(once per distinct value) and reads each part's columns straight into their place in the final columns, so the
result is the same as one pass over all chunks. A parallel decode offers each part as it is done: parts come back
about in file order, and each one that continues the run folded so far is folded at once, while later parts still
decode. Once the last part is decoded, only it (or the few before it that came late) is left to fold.

The columns are allocated for the whole file at the rate the parts folded so far hold events per byte (untouched
room costs address space, not memory), grown when a later part holds more (one copy of what is there), and cut to
length in place at the end.
"""

from __future__ import annotations

import numpy as np

from ..threads import side_by_side
from ..trace import LoadReport
from ..tracks import Meta
from .build import Interner
from .merge import remap
from .part import TABLES, Part

_ROOM = 1.1  # room allocated past the estimate of the whole file's events
_SIDE_BY_SIDE_ROWS = 1 << 20  # rows filled at once past which each column is filled in its own thread


class Fold:
    """The parts folded so far (spilled or not) and the columns they fill."""

    def __init__(self, total_bytes: int = 0, keep: bool = False) -> None:
        self.total_bytes = total_bytes  # the bytes of events in the whole file (0: parts come all at once)
        self.keep = keep  # keep spilled parts' files (else each is removed once folded)
        self.bytes = 0
        self.names, self.cats, self.shapes, self.keys = Interner(), Interner(), Interner(), Interner()
        self.columns: dict[str, dict[str, np.ndarray]] = {
            name: {key: np.empty(0, dtype) for key, dtype in cls.dtypes().items()} for name, cls in TABLES.items()
        }
        self.filled = dict.fromkeys(TABLES, 0)
        self.rows: list[tuple[int, int, int]] = []
        self.meta, self.report = Meta(), LoadReport()
        self.waiting: dict[int, Part] = {}  # parts offered ahead of their turn, by index
        self.next = 0  # the index of the next part to fold

    def offer(self, k: int, part: Part) -> None:
        """Part k is decoded: fold it, and the parts after it that were waiting for it, if its turn has come."""
        self.waiting[k] = part
        run = []
        while self.next in self.waiting:
            run.append(self.waiting.pop(self.next))
            self.next += 1
        if run:
            self.add(run)

    def add(self, parts: list[Part]) -> None:
        """Fold the next parts, in order: their ids re-interned, then each column filled (in its own thread when they
        are many rows)."""
        maps = [
            {
                "name": remap(self.names, p.names),
                "cat_str": remap(self.cats, p.cat_names),
                "shape": remap(self.shapes, p.shapes),
                "track": remap(self.keys, p.tracks),
            }
            for p in parts
        ]
        offsets = np.cumsum([len(self.rows)] + [len(p.rows) for p in parts])
        self.bytes += sum(end - start for p in parts for start, end, _ in p.rows)
        try:
            for table in TABLES:
                self._fill(table, parts, maps, offsets)
        finally:
            for p in parts:
                if p.spilled and not self.keep:
                    p.spilled.remove()
        for p in parts:
            self.rows += p.rows
            self.meta.update(p.meta)
            self.report.add(p.report)

    def _fill(self, table: str, parts: list[Part], maps: list[dict], offsets: np.ndarray) -> None:
        sizes = [p.length(table) for p in parts]
        at = self.filled[table]
        bounds = (at + np.cumsum([0] + sizes)).tolist()
        self._room(table, bounds[-1])
        columns = self.columns[table]

        def column(key: str) -> None:
            for k, p in enumerate(parts):
                piece = columns[key][bounds[k] : bounds[k + 1]]
                p.fill(table, key, piece)
                if key in maps[k] and len(piece):
                    _remap(piece, maps[k][key], key == "shape")
                elif key == "chunk":
                    piece += offsets[k]

        jobs = [lambda key=key: column(key) for key in columns]
        if bounds[-1] - at >= _SIDE_BY_SIDE_ROWS:
            side_by_side(*jobs)
        else:  # a part as a decode hands it over: threads cost more than they save (0.30 -> 0.22 s for the tile's)
            for job in jobs:
                job()
        self.filled[table] = bounds[-1]

    def _room(self, table: str, need: int) -> None:
        """Columns that hold `need` rows: at the estimate of the whole file's, if the parts still come."""
        columns = self.columns[table]
        room = len(next(iter(columns.values())))
        if need <= room:
            return
        if self.total_bytes > self.bytes > 0:
            need = max(need, int(need * self.total_bytes / self.bytes * _ROOM))
        at = self.filled[table]
        for key, old in columns.items():
            grown = np.empty(need, old.dtype)
            grown[:at] = old[:at]
            columns[key] = grown

    def snapshot(self) -> Part:
        """A Part of what is folded so far: its columns are views (copy them before changing them)."""
        columns = {name: {k: c[: self.filled[name]] for k, c in self.columns[name].items()} for name in TABLES}
        meta, report = Meta(), LoadReport()
        meta.update(self.meta)
        report.add(self.report)
        return self._part(columns, meta, report, copy=True)

    def result(self) -> Part:
        """The merged Part: every column cut to its length, in place (a copy where something still views it)."""
        if self.waiting:
            raise ValueError(f"parts {sorted(self.waiting)} came without part {self.next}")
        for name in TABLES:
            for key in list(self.columns[name]):
                self.columns[name][key] = _cut(self.columns[name].pop(key), self.filled[name])
        return self._part(self.columns, self.meta, self.report, copy=False)

    def _part(self, columns: dict[str, dict[str, np.ndarray]], meta: Meta, report: LoadReport, copy: bool) -> Part:
        x, inst, flow = (cls(**columns[name]) for name, cls in TABLES.items())
        names, cats, shapes, keys = (
            list(v) if copy else v for v in (self.names.values, self.cats.values, self.shapes.values, self.keys.values)
        )
        rows = list(self.rows) if copy else self.rows
        return Part(x, inst, flow, names, cats, shapes, keys, meta, rows, report)  # type: ignore[arg-type]


def _cut(column: np.ndarray, n: int) -> np.ndarray:
    """The column's first n rows, cut in place (no copy) unless a view of it is still held."""
    if len(column) == n:
        return column
    try:
        column.resize(n)  # refcheck: raises where another array views it
        return column
    except ValueError:
        return column[:n].copy()


def _remap(piece: np.ndarray, mapping: np.ndarray, optional: bool) -> None:
    """Local ids to global ones, in place (-1 stays -1 where ids are optional)."""
    if optional:
        has = piece >= 0
        piece[has] = mapping[piece[has]]
    else:
        np.take(mapping, piece, out=piece)
