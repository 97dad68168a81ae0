"""Where derived data is kept between runs: the Store a trace may carry, and how values are kept in it.

A Store (the on-disk cache entry of the trace; see load/cache.py) keeps named arrays, memory-mapped
when read back, and named blobs. A Codec turns a derived value into those and back, and says
whether what it reads back is sound; anything unsound is recomputed, never trusted. Values are kept
under their name and the fingerprint of the code that computed them (analysis.derived.stored_name).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Protocol

import msgspec
import numpy as np


class Store(Protocol):
    def get_arrays(self, name: str) -> dict[str, np.ndarray] | None: ...
    def put_arrays(self, name: str, arrays: dict[str, np.ndarray]) -> None: ...
    def get_blob(self, name: str) -> bytes | None: ...
    def put_blob(self, name: str, blob: bytes) -> None: ...


class Codec(Protocol):
    def load(self, store: Store, name: str, n: int) -> Any | None: ...
    def save(self, store: Store, name: str, value: Any) -> None: ...


class Arrays:
    """A dataclass of numpy arrays (and ints), or one array: kept as arrays, read back memory-mapped.

    per_event lists the fields that hold one value per event ("value" for one array): read back,
    they must have n of them.
    """

    def __init__(self, kind: type | None = None, per_event: tuple[str, ...] = ("value",)) -> None:
        self.kind, self.per_event = kind, per_event

    def save(self, store: Store, name: str, value: Any) -> None:
        if self.kind is None:
            store.put_arrays(name, {"value": np.asarray(value)})
            return
        store.put_arrays(name, {f.name: np.asarray(getattr(value, f.name)) for f in fields(value)})

    def load(self, store: Store, name: str, n: int) -> Any | None:
        arrays = store.get_arrays(name)
        if arrays is None:
            return None
        if self.kind is None:
            value = arrays.get("value")
            if value is None or value.ndim != 1 or ("value" in self.per_event and len(value) != n):
                return None
            return value
        names = [f.name for f in fields(self.kind)]
        if set(names) != set(arrays) or any(arrays[k].ndim != 1 or len(arrays[k]) != n for k in self.per_event):
            return None
        return self.kind(**{k: int(v) if v.ndim == 0 else v for k, v in arrays.items()})


class Blob:
    """Plain data (dataclasses, lists, numbers, strings) kept as msgpack and decoded to its type."""

    def __init__(self, kind: Any) -> None:
        self.kind = kind  # what it decodes to: part of the fingerprint of the code (see code_id.py)
        self.decoder = msgspec.msgpack.Decoder(kind)
        self.encoder = msgspec.msgpack.Encoder(enc_hook=_plain)

    def save(self, store: Store, name: str, value: Any) -> None:
        store.put_blob(name, self.encoder.encode(value))

    def load(self, store: Store, name: str, n: int) -> Any | None:
        blob = store.get_blob(name)
        if blob is None:
            return None
        try:
            return self.decoder.decode(blob)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers (tables hold the results of numpy sums)."""
    if isinstance(value, np.generic):
        return value.item()
    raise NotImplementedError(f"cannot keep a {type(value).__name__}")
