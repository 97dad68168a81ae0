"""Typed column tables: a trace's events as equally long numpy arrays, one field per column."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T", bound="Table")


def column(dtype: type) -> Any:
    """A dataclass field holding one numpy column of this dtype (empty by default)."""
    return field(default_factory=lambda: np.empty(0, dtype), metadata={"dtype": dtype})


@dataclass
class Table:
    """Columns of equal length; subclasses declare them with column(dtype)."""

    @classmethod
    def dtypes(cls) -> dict[str, type]:
        return {f.name: f.metadata["dtype"] for f in fields(cls)}

    @classmethod
    def from_columns(cls: type[T], cols: dict[str, Any]) -> T:
        """Build from name -> array-like (missing columns are empty), casting to the declared dtypes."""
        return cls(**{k: np.asarray(cols[k], dt) if k in cols else np.empty(0, dt) for k, dt in cls.dtypes().items()})

    @classmethod
    def concat(cls: type[T], tables: list[T]) -> T:
        return cls.from_columns({k: np.concatenate([t.column(k) for t in tables]) for k in cls.dtypes()})

    def column(self, name: str) -> np.ndarray:
        return getattr(self, name)

    def columns(self) -> dict[str, np.ndarray]:
        return {k: getattr(self, k) for k in self.dtypes()}

    def take(self: T, idx: np.ndarray) -> T:
        return type(self)(**{k: v[idx] for k, v in self.columns().items()})

    def __len__(self) -> int:
        return len(getattr(self, fields(self)[0].name))


@dataclass
class Events(Table):
    """Duration (ph X) events. Times are int64 ns; ids index the trace's string tables; -1 means none."""

    ts: np.ndarray = column(np.int64)
    dur: np.ndarray = column(np.int64)
    track: np.ndarray = column(np.int32)
    name: np.ndarray = column(np.int32)
    cat: np.ndarray = column(np.int8)  # cats.Cat
    cat_str: np.ndarray = column(np.int16)  # the category as written
    ext: np.ndarray = column(np.int64)  # External id
    corr: np.ndarray = column(np.int64)  # correlation
    py_id: np.ndarray = column(np.int64)
    py_parent: np.ndarray = column(np.int64)
    shape: np.ndarray = column(np.int32)  # Input Dims, interned
    nbytes: np.ndarray = column(np.int64)  # the "bytes" arg (a copy's or a set's size); -1 without, or not a size
    chunk: np.ndarray = column(np.int32)  # the chunk row that re-decodes the event's args
    pos: np.ndarray = column(np.int32)  # the event's index within that chunk


@dataclass
class Instants(Table):
    """Instant (ph i) events: allocator samples ([memory]) and markers; and counter (ph C) samples.

    A [memory] sample carries its allocation (bytes > 0) or free (< 0), the device, the address and
    the allocator's totals after it (-1 where the trace does not write them, as before 2022). A
    counter sample carries one value; an event with several numeric args is one sample per arg,
    named "name · arg".
    """

    ts: np.ndarray = column(np.int64)
    track: np.ndarray = column(np.int32)
    name: np.ndarray = column(np.int32)
    bytes: np.ndarray = column(np.int64)
    dev_type: np.ndarray = column(np.int16)
    dev_id: np.ndarray = column(np.int16)
    total_alloc: np.ndarray = column(np.int64)
    total_reserved: np.ndarray = column(np.int64)
    addr: np.ndarray = column(np.int64)
    value: np.ndarray = column(np.float64)
    counter: np.ndarray = column(np.bool_)


@dataclass
class Flows(Table):
    """Flow (ph s/f) endpoints: ac2g launch arrows and fwdbwd links."""

    ts: np.ndarray = column(np.int64)
    track: np.ndarray = column(np.int32)
    fid: np.ndarray = column(np.int64)
    start: np.ndarray = column(np.bool_)
    ac2g: np.ndarray = column(np.bool_)
