"""Where derived data is kept between runs: the Store a trace may carry, and how values are kept in it.

A Store (the on-disk cache entry of the trace; see load/cache.py) keeps named arrays, memory-mapped
when read back, and named blobs. A Codec turns a derived value into those and back, and says
whether what it reads back is sound; anything unsound is recomputed, never trusted. Values are kept
under their name and the fingerprint of the code that computed them (analysis.derived.stored_name).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Protocol

import msgspec
import numpy as np

from .lazy import return_type


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


@dataclass(eq=False)
class Blob:
    """Plain data (dataclasses, lists, numbers, strings) kept as msgpack and decoded to its type.

    kind is that type; None: the return type of the function whose value it keeps (its annotation, read when
    first decoded or encoded, so that the type's module is imported only then: lazy.py). Either is part of the
    fingerprint of the code (code_id.py: this dataclass's fields, and the names in the function's annotations).
    """

    kind: Any = None

    def __post_init__(self) -> None:  # not fields: what is built from them, not part of the fingerprint
        self._function: Callable[..., Any] | None = None
        self._coders: tuple[msgspec.msgpack.Decoder, msgspec.msgpack.Encoder] | None = None

    def keeping(self, function: Callable[..., Any]) -> Blob:
        """This codec, for the values function returns (its return type, where no kind is given)."""
        self._function = function
        return self

    def coders(self) -> tuple[msgspec.msgpack.Decoder, msgspec.msgpack.Encoder]:
        """The decoder to its type and the encoder, built on first use (a few ms per type a command never reads)."""
        if self._coders is None:
            kind = self.kind
            if kind is None:
                if self._function is None:
                    raise TypeError("Blob() without a kind keeps a derived function's value: use it with stored()")
                kind = return_type(self._function)
            self._coders = (msgspec.msgpack.Decoder(kind), msgspec.msgpack.Encoder(enc_hook=_plain))
        return self._coders

    def save(self, store: Store, name: str, value: Any) -> None:
        store.put_blob(name, self.coders()[1].encode(value))

    def load(self, store: Store, name: str, n: int) -> Any | None:
        blob = store.get_blob(name)
        if blob is None:
            return None
        try:
            return self.coders()[0].decode(blob)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers (tables hold the results of numpy sums)."""
    if isinstance(value, np.generic):
        return value.item()
    raise NotImplementedError(f"cannot keep a {type(value).__name__}")
