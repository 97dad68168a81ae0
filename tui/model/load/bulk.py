"""Columns in bulk from a chunk's decoded events: one C-level pass per field, interning per distinct value.

Every function here takes a list of typed events (or their args) and returns numpy columns. A field
is read with np.fromiter over operator.attrgetter (no Python frame per event); a value that does not
fit the fast path (a string id, an int past 64 bits, a null) sends that chunk's column down an exact
slow path, so the columns never depend on which path ran.
"""

from __future__ import annotations

import hashlib
import re
from itertools import compress
from operator import attrgetter, itemgetter
from typing import Any

import numpy as np
import orjson

_TS_TEXT = re.compile(rb'"ts"\s*:\s*"?(-?\d+)(?:\.(\d+))?')
# Above this many µs a float with a fraction no longer holds exact nanoseconds.
_EXACT_LIMIT_US = float(2**43)
_EXT, _EXT_LEGACY, _CORR, _PY_ID, _PY_PARENT, _DIMS, _DIMS_LEGACY, _NBYTES = map(
    attrgetter,
    (
        "external_id",
        "external_id_legacy",
        "correlation",
        "python_id",
        "python_parent_id",
        "input_dims",
        "input_dims_legacy",
        "nbytes",
    ),
)


class Interner:
    """Strings (or any hashable) to dense int ids, in first-seen order."""

    def __init__(self) -> None:
        self.ids: dict = {}

    def __call__(self, value) -> int:
        return self.ids.setdefault(value, len(self.ids))

    def many(self, values) -> list[int]:
        """The ids of values (unseen ones added in order of first appearance)."""
        return self.array(values).tolist()

    def array(self, values: list) -> np.ndarray:
        """The ids of values as int32, looked up in C; only a list holding unseen values is walked twice."""
        try:
            return np.fromiter(map(self.ids.__getitem__, values), np.int32, len(values))
        except KeyError:
            self.add(values)
            return np.fromiter(map(self.ids.__getitem__, values), np.int32, len(values))

    def field(self, getter: Any, items: list) -> np.ndarray:
        """The ids of one field of every item (getter(item)), without a list of the values in between."""
        try:
            return np.fromiter(map(self.ids.__getitem__, map(getter, items)), np.int32, len(items))
        except KeyError:
            self.add(map(getter, items))
            return np.fromiter(map(self.ids.__getitem__, map(getter, items)), np.int32, len(items))

    def add(self, values) -> None:
        """Intern values not seen yet, in order of first appearance."""
        add, ids = self.ids.setdefault, self.ids
        for value in dict.fromkeys(values):
            add(value, len(ids))

    @property
    def values(self) -> list:
        return list(self.ids)


def take(items: list, idx: np.ndarray) -> list:
    """items[i] for i in idx, gathered in C."""
    if len(idx) == len(items):
        return items
    if len(idx) == 1:
        return [items[int(idx[0])]]
    return list(itemgetter(*idx.tolist())(items)) if len(idx) else []


def column(getter: Any, items: list, dtype: type) -> np.ndarray:
    """One field of every item as a numpy column."""
    return np.fromiter(map(getter, items), dtype, len(items))


BAD_INT = 1 << 100  # an id the lenient path read as NaN or Infinity: past every range, and said as not a number


def floats(getter: Any, items: list) -> np.ndarray:
    """One numeric field of every item as float64: an int past a float's range reads as an infinity."""
    try:
        return np.fromiter(map(getter, items), np.float64, len(items))
    except OverflowError:
        return np.array([_float(getter(item)) for item in items], np.float64)


def _float(value: int | float) -> float:
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def judge(values: np.ndarray, field: str, limit: float, tally: dict[str, int], negative: bool = True) -> np.ndarray:
    """Which values cannot be (not a number, infinite, |value| at or past limit, or negative where a value cannot
    be), each counted in tally under its field and why ("dur negative"); the first reason found wins."""
    with np.errstate(invalid="ignore"):
        nan = np.isnan(values)
        inf = np.isinf(values)
        far = ~nan & ~inf & (np.abs(values) >= limit)
        below = ~nan & ~inf & ~far & (values < 0) if not negative else np.zeros(len(values), bool)
    for why, mask in (("not a number", nan), ("infinite", inf), ("out of range", far), ("negative", below)):
        if count := int(mask.sum()):
            tally[f"{field} {why}"] = tally.get(f"{field} {why}", 0) + count
    return nan | inf | far | below


def to_ns(values) -> np.ndarray:
    """Microsecond numbers to int64 nanoseconds, exact for ints and short decimals."""
    arr = np.asarray(values, dtype=np.float64)
    whole = np.floor(arr)
    return whole.astype(np.int64) * 1000 + np.round((arr - whole) * 1000).astype(np.int64)


def exact_ts_ns(text: bytes, count: int) -> np.ndarray | None:
    """Re-read every "ts" of a chunk from its decimal text; None if they don't line up."""
    found = _TS_TEXT.findall(text)
    if len(found) != count:
        return None
    out = np.empty(count, np.int64)
    for i, (whole, frac) in enumerate(found):
        sign = -1 if whole.startswith(b"-") else 1
        out[i] = int(whole) * 1000 + sign * int((frac + b"000")[:3] or b"0")
    return out


def needs_exact(ts: np.ndarray) -> bool:
    """True when some ts is a large number with a fraction (19-digit absolute ns era)."""
    return bool(((np.abs(ts) >= _EXACT_LIMIT_US) & (ts != np.floor(ts))).any())


def link_columns(args: list, shapes: Interner, tally: dict[str, int], limits: dict[str, int]) -> tuple[np.ndarray, ...]:
    """External id, correlation, Python id/parent and shape id per event (-1 when absent), and which events hold
    an id no profiler writes (past 64 bits, or one read as NaN), counted in tally by field. An unsigned 64-bit id
    past 2**63 - 1 (seen in the wild) is dropped, its event kept unlinked, and counted in limits["ids"]."""
    try:
        ext = column(_EXT, args, np.int64)
        if max(map(_EXT_LEGACY, args), default=-1) > 0:  # the 2021 key "external id": rare, so looked for first
            legacy = column(_EXT_LEGACY, args, np.int64)
            ext = np.where(ext > 0, ext, legacy)
        corr = column(_CORR, args, np.int64)
        py_id = column(_PY_ID, args, np.int64)
        try:
            py_parent = column(_PY_PARENT, args, np.int64)
        except TypeError:  # a parent id written as null: none
            py_parent = np.array([-1 if p is None else p for p in map(_PY_PARENT, args)], np.int64)
    except OverflowError:  # an id past int64: its event is left out (see _link_columns_slow)
        return _link_columns_slow(args, shapes, tally, limits)
    ext = np.where(ext > 0, ext, -1)
    corr = np.where(corr > 0, corr, -1)
    none = np.zeros(len(args), bool)
    return ext, corr, np.maximum(py_id, -1), np.maximum(py_parent, -1), shape_ids(args, shapes), none


def shape_ids(args: list, shapes: Interner) -> np.ndarray:
    """The interned Input Dims of each event (-1 without): only events that have them are looked at."""
    dims = list(map(_DIMS, args))
    has = list(compress(range(len(dims)), dims))  # an empty Raw is false
    if len(has) < len(dims) and any(map(_DIMS_LEGACY, args)):  # the 2021 key "Input dims"
        dims = [d or old for d, old in zip(dims, map(_DIMS_LEGACY, args), strict=True)]
        has = list(compress(range(len(dims)), dims))
    out = np.full(len(dims), -1, np.int32)
    if has:
        out[has] = shapes.array(list(map(bytes, itemgetter(*has)(dims) if len(has) > 1 else [dims[has[0]]])))
    return out


def byte_counts(args: list) -> np.ndarray:
    """The "bytes" arg of each event (a copy's or a set's size), -1 where it is absent or not a size (a string, a
    bool, a negative number, one past 64 bits; a fraction is cut as the copies table always read it): only the
    events that have it are read."""
    raw = list(map(_NBYTES, args))
    out = np.full(len(raw), -1, np.int64)
    for k in compress(range(len(raw)), raw):  # an empty Raw is false
        out[k] = _size(raw[k])
    return out


def _size(raw) -> int:
    try:
        value = orjson.loads(bytes(raw))
    except orjson.JSONDecodeError:
        return -1
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 2**63:
        return -1
    return int(value)


_ID_FIELDS = (
    ("External id", "external_id"),
    ("External id", "external_id_legacy"),
    ("correlation", "correlation"),
    ("Python id", "python_id"),
    ("Python parent id", "python_parent_id"),
)


def _link_columns_slow(
    args: list, shapes: Interner, tally: dict[str, int], limits: dict[str, int]
) -> tuple[np.ndarray, ...]:
    bad = np.zeros(len(args), bool)
    for k, a in enumerate(args):
        for field, attr in _ID_FIELDS:
            value = getattr(a, attr)
            if value is None or -(2**63) <= value < 2**63:
                continue
            if 2**63 <= value < 2**64:  # unsigned 64 bits: the id is dropped (see _link, _opt), the event kept
                limits["ids"] = limits.get("ids", 0) + 1
                continue
            why = "not a number" if value == BAD_INT else "past 64 bits"
            tally[f"{field} {why}"] = tally.get(f"{field} {why}", 0) + 1
            bad[k] = True
            break
    ext = [_link(a.external_id if a.external_id > 0 else a.external_id_legacy) for a in args]
    corr = [_link(a.correlation) for a in args]
    py_id = [_opt(a.python_id) for a in args]
    py_parent = [_opt(a.python_parent_id) for a in args]
    return tuple(np.asarray(c, np.int64) for c in (ext, corr, py_id, py_parent)) + (shape_ids(args, shapes), bad)


def _link(value: int | None) -> int:
    """A correlation or External id; 0 and negatives mean 'none' as in torch (and so does one past 64 bits)."""
    return value if value is not None and 0 < value < 2**63 else -1


def _opt(value: int | None) -> int:
    return value if value is not None and -1 < value < 2**63 else -1


def int64_or(values: list, default: int = -1) -> tuple[np.ndarray, np.ndarray | None]:
    """Ints as int64, with any value past 64 bits as `default`; and where those were (None: nowhere)."""
    try:
        return np.fromiter(values, np.int64, len(values)), None
    except OverflowError:
        past = np.array([not -(2**63) <= v < 2**63 for v in values], bool)
        return np.array([default if p else v for v, p in zip(values, past, strict=True)], np.int64), past


def flow_ids(idents: list) -> np.ndarray:
    """Flow ids as int64: ints as they are, strings parsed (any base) or hashed, none as -1."""
    if set(map(type, idents)) == {int}:
        try:
            return np.fromiter(idents, np.int64, len(idents))
        except OverflowError:
            pass
    return np.fromiter(map(_flow_id, idents), np.int64, len(idents))


def _flow_id(value: int | str | None) -> int:
    if isinstance(value, int) and -(2**63) <= value < 2**63:
        return value
    if isinstance(value, str):
        try:
            return int(value, 0)
        except ValueError:  # a stable hash: Python's own differs between the processes that decode parts
            return int.from_bytes(
                hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little"
            ) & (2**62 - 1)
    return -1
