"""Turn decoded events into interned, typed numpy columns (durations, instants, flows, metadata)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter

import msgspec
import numpy as np
import orjson

from ..cats import Cat, normalize_cat
from ..columns import Events, Flows, Instants
from ..tracks import Meta
from .schema import Event

_TS_TEXT = re.compile(rb'"ts"\s*:\s*"?(-?\d+)(?:\.(\d+))?')
# Above this many µs a float with a fraction no longer holds exact nanoseconds.
_EXACT_LIMIT_US = float(2**43)
_TS, _DUR, _PH, _NAME, _CAT, _PID, _TID, _ARGS = map(
    attrgetter, ("ts", "dur", "ph", "name", "cat", "pid", "tid", "args")
)
_EXT, _EXT_LEGACY, _CORR, _PY_ID, _PY_PARENT, _DIMS, _DIMS_LEGACY = map(
    attrgetter,
    (
        "external_id",
        "external_id_legacy",
        "correlation",
        "python_id",
        "python_parent_id",
        "input_dims",
        "input_dims_legacy",
    ),
)
LEGACY_FLOW_CATS = {"async": "ac2g", "async_cpu_to_gpu": "ac2g", "forward_backward": "fwdbwd"}


class Interner:
    """Strings (or any hashable) to dense int ids, in first-seen order."""

    def __init__(self) -> None:
        self.ids: dict = {}

    def __call__(self, value) -> int:
        return self.ids.setdefault(value, len(self.ids))

    def many(self, values) -> list[int]:
        ids = self.ids
        found: list = list(map(ids.get, values))  # C-level lookups; only unseen values take the slow path
        if None in found:
            add = ids.setdefault
            found = [add(v, len(ids)) if f is None else f for v, f in zip(values, found, strict=True)]
        return found

    @property
    def values(self) -> list:
        return list(self.ids)


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


def add_meta(meta: Meta, e: Event) -> None:
    """Record one M event's process or thread name or order."""
    a = e.args
    if a is None:
        return
    pid, key = _norm(e.pid), (_norm(e.pid), _norm(e.tid))
    if e.name == "process_name" and a.name is not None:
        meta.process_name[pid] = a.name.strip()
    elif e.name == "process_labels" and a.labels is not None:
        meta.process_labels[pid] = a.labels.strip()
    elif e.name == "process_sort_index" and a.sort_index is not None:
        meta.process_sort[pid] = a.sort_index
    elif e.name == "thread_name" and a.name is not None:
        meta.thread_name[key] = a.name.strip()
    elif e.name == "thread_sort_index" and a.sort_index is not None:
        meta.thread_sort[key] = a.sort_index


_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])


@dataclass
class Builder:
    """Accumulates columns across chunks, interning names, tracks and shapes."""

    names: Interner = field(default_factory=Interner)
    cats: Interner = field(default_factory=Interner)
    shapes: Interner = field(default_factory=Interner)
    tracks: Interner = field(default_factory=Interner)
    meta: Meta = field(default_factory=Meta)
    x: dict[str, list] = field(default_factory=dict)
    inst: dict[str, list] = field(default_factory=dict)
    flow: dict[str, list] = field(default_factory=dict)
    unknown: dict[str, int] = field(default_factory=dict)
    inexact_chunks: int = 0
    bad_memory: int = 0
    bad_counters: int = 0
    text: Callable[[], bytes] | None = None  # the chunk being added (counter values are read from it)
    raw_tracks: dict = field(default_factory=dict)  # (pid, tid) as written -> track id
    pid_codes: Interner = field(default_factory=Interner)
    tid_codes: Interner = field(default_factory=Interner)

    def add(
        self, events: list[Event], chunk_ids: np.ndarray, pos: np.ndarray, text: Callable[[], bytes] | None
    ) -> None:
        """Add one chunk's events; event i re-decodes as item pos[i] of chunk chunk_ids[i].

        text() gives the chunk's bytes, to re-read exact timestamps when floats cannot hold them.
        """
        n = len(events)
        self.text = text
        ts_raw = np.fromiter(map(_TS, events), np.float64, n)
        ts = None
        if text is not None and needs_exact(ts_raw):
            ts = exact_ts_ns(text(), n)
            self.inexact_chunks += ts is None
        if ts is None:
            ts = to_ns(ts_raw)
        phs = list(map(_PH, events))
        kinds = {ph: k for k, ph in enumerate(dict.fromkeys(phs))}  # first appearance: ids do not depend on hashing
        code = np.fromiter(map(kinds.__getitem__, phs), np.int32, n) if len(kinds) > 1 else None
        for ph, k in kinds.items():
            idx = np.flatnonzero(code == k) if code is not None else np.arange(n)
            group = events if len(kinds) == 1 else [events[i] for i in idx.tolist()]
            self._route(ph, group, ts[idx], chunk_ids[idx], pos[idx])

    def _route(self, ph, group, ts, chunks, pos) -> None:
        if ph == "X":
            self._add_x(group, ts, chunks, pos)
        elif ph in ("i", "I"):
            self._add_instants(group, ts)
        elif ph == "C":
            self._add_counters(group, ts, pos)
        elif ph in ("s", "f", "t"):
            self._add_flows(ph, group, ts)
        elif ph == "M":
            for e in group:
                add_meta(self.meta, e)
        else:
            self.unknown[ph or "(none)"] = self.unknown.get(ph or "(none)", 0) + len(group)

    def _add_instants(self, group: list[Event], ts: np.ndarray) -> None:
        args = [e.args for e in group]
        memory = [e.name == "[memory]" for e in group]
        self.bad_memory += sum(m and (a.bytes == 0 or a.device_type < 0) for m, a in zip(memory, args, strict=True))
        _extend(
            self.inst,
            ts=ts,
            track=self._track_ids(group),
            name=self.names.many([e.name for e in group]),
            bytes=[a.bytes for a in args],
            dev_type=[a.device_type for a in args],
            dev_id=[a.device_id for a in args],
            total_alloc=[a.total_allocated for a in args],
            total_reserved=[a.total_reserved for a in args],
            addr=[a.addr if -(2**63) <= a.addr < 2**63 else -1 for a in args],
            value=np.zeros(len(group)),
            counter=np.zeros(len(group), bool),
        )

    def _add_counters(self, group: list[Event], ts: np.ndarray, pos: np.ndarray) -> None:
        """One sample per numeric arg of each counter event (its values are read from the chunk's text)."""
        items = _RAW_LIST.decode(b"[" + self.text().strip().rstrip(b",") + b"]") if self.text else []
        rows: list[tuple[int, str, float]] = []
        for k, (e, p) in enumerate(zip(group, pos.tolist(), strict=True)):
            raw = orjson.loads(bytes(items[p])) if p < len(items) else {}
            args = raw.get("args") if isinstance(raw, dict) else None
            values = {
                key: v for key, v in (args or {}).items() if isinstance(v, (int, float)) and not isinstance(v, bool)
            }
            self.bad_counters += not values or len(values) < len(args or {})
            for key, v in values.items():
                rows.append((k, e.name if len(values) == 1 else f"{e.name} · {key}", float(v)))
        if not rows:
            return
        keep = [k for k, _, _ in rows]
        m = len(rows)
        _extend(
            self.inst,
            ts=ts[keep],
            track=self._track_ids([group[k] for k in keep]),
            name=self.names.many([name for _, name, _ in rows]),
            bytes=np.zeros(m, np.int64),
            dev_type=np.full(m, -1),
            dev_id=np.full(m, -1),
            total_alloc=np.full(m, -1),
            total_reserved=np.full(m, -1),
            addr=np.full(m, -1),
            value=[v for _, _, v in rows],
            counter=np.ones(m, bool),
        )

    def _track_ids(self, group: list[Event]) -> np.ndarray:
        """Track ids of events: pids and tids are coded to small ints, so no tuple is made per event."""
        pid = self._codes(self.pid_codes, list(map(_PID, group)))
        tid = self._codes(self.tid_codes, list(map(_TID, group)))
        keys, first, inverse = np.unique((pid << 32) | tid, return_index=True, return_inverse=True)
        ids = np.empty(len(keys), np.int32)
        pids, tids = self.pid_codes.values, self.tid_codes.values
        for k in np.argsort(first).tolist():  # intern in order of first appearance
            p, t = pids[int(keys[k]) >> 32], tids[int(keys[k]) & 0xFFFFFFFF]
            ident = self.raw_tracks.get((p, t))
            if ident is None:
                ident = self.raw_tracks[(p, t)] = self.tracks((_norm(p), _norm(t)))
            ids[k] = ident
        return ids[inverse]

    @staticmethod
    def _codes(table: Interner, values: list) -> np.ndarray:
        """Small int codes for pids or tids as written (19392 and "19392" differ here; _norm joins them)."""
        return np.asarray(table.many(values), np.int64)

    def _add_x(self, group: list[Event], ts, chunks, pos) -> None:
        ext, corr, py_id, py_parent, shape = _link_columns(list(map(_ARGS, group)), self.shapes)
        _extend(
            self.x,
            ts=ts,
            dur=np.maximum(to_ns(np.fromiter(map(_DUR, group), np.float64, len(group))), 0),
            track=self._track_ids(group),
            name=self.names.many(list(map(_NAME, group))),
            cat_str=self.cats.many(list(map(_CAT, group))),
            ext=ext,
            corr=corr,
            py_id=py_id,
            py_parent=py_parent,
            shape=shape,
            chunk=chunks,
            pos=pos,
        )

    def _add_flows(self, ph: str, group: list[Event], ts) -> None:
        cats = [LEGACY_FLOW_CATS.get(e.cat, e.cat) for e in group]
        _extend(
            self.flow,
            ts=ts,
            track=self._track_ids(group),
            fid=[_flow_id(e.id) for e in group],
            start=[ph == "s"] * len(group),
            ac2g=[c == "ac2g" for c in cats],
        )

    def finish(self) -> tuple[Events, Instants, Flows]:
        """Concatenate the per-chunk pieces into typed tables."""
        enum = np.array([int(normalize_cat(c)) for c in self.cats.values] or [int(Cat.OTHER)], np.int8)
        cols = {k: _joined(self.x, k, dt) for k, dt in Events.dtypes().items() if k != "cat"}
        x = Events.from_columns({**cols, "cat": enum[cols["cat_str"]]})
        inst = Instants.from_columns({k: _joined(self.inst, k, dt) for k, dt in Instants.dtypes().items()})
        flow = Flows.from_columns({k: _joined(self.flow, k, dt) for k, dt in Flows.dtypes().items()})
        return x, inst, flow


def _norm(key: int | str) -> int | str:
    """Numeric-string pids/tids ("24572") are the same thread as the int elsewhere."""
    if isinstance(key, str) and key.lstrip("-").isdigit():
        return int(key)
    return key


def _extend(store: dict[str, list], **cols) -> None:
    for key, values in cols.items():
        store.setdefault(key, []).append(values)


def _joined(store: dict[str, list], key: str, dtype: type) -> np.ndarray:
    parts = store.get(key)
    return np.concatenate([np.asarray(p, dtype=dtype) for p in parts]) if parts else np.empty(0, dtype)


def _link_columns(args: list, shapes: Interner) -> tuple[np.ndarray, ...]:
    """External id, correlation, Python id/parent and shape id per event (-1 when absent)."""
    n = len(args)
    try:
        ext = np.fromiter(map(_EXT, args), np.int64, n)
        legacy = np.fromiter(map(_EXT_LEGACY, args), np.int64, n)
        corr = np.fromiter(map(_CORR, args), np.int64, n)
        py_id = np.fromiter(map(_PY_ID, args), np.int64, n)
        parents = list(map(_PY_PARENT, args))
        if None in parents:
            parents = [-1 if p is None else p for p in parents]
        py_parent = np.array(parents, np.int64)
    except OverflowError:  # ids past int64 (seen in the wild): drop those links only
        return _link_columns_slow(args, shapes)
    ext = np.where(ext > 0, ext, np.where(legacy > 0, legacy, -1))
    corr = np.where(corr > 0, corr, -1)
    return ext, corr, np.maximum(py_id, -1), np.maximum(py_parent, -1), _shape_ids(args, shapes)


def _shape_ids(args: list, shapes: Interner) -> np.ndarray:
    """The interned Input Dims of each event (-1 without): only events that have them are looked at."""
    dims = list(map(_DIMS, args))
    has = np.fromiter(map(bool, dims), bool, len(dims))
    if not has.all():
        legacy = list(map(_DIMS_LEGACY, args))
        if any(legacy):
            dims = [d or old for d, old in zip(dims, legacy, strict=True)]
            has = np.fromiter(map(bool, dims), bool, len(dims))
    out = np.full(len(dims), -1, np.int32)
    idx = np.flatnonzero(has)
    out[idx] = shapes.many([bytes(dims[i]) for i in idx.tolist()])
    return out


def _link_columns_slow(args: list, shapes: Interner) -> tuple[np.ndarray, ...]:
    ext = [_link(a.external_id if a.external_id > 0 else a.external_id_legacy) for a in args]
    corr = [_link(a.correlation) for a in args]
    py_id = [_opt(a.python_id) for a in args]
    py_parent = [_opt(a.python_parent_id) for a in args]
    return tuple(np.asarray(c, np.int64) for c in (ext, corr, py_id, py_parent)) + (_shape_ids(args, shapes),)


def _link(value: int | None) -> int:
    """A correlation or External id; 0 and negatives mean 'none' as in torch."""
    return value if value is not None and 0 < value < 2**63 else -1


def _opt(value: int | None) -> int:
    return value if value is not None and -1 < value < 2**63 else -1


def _flow_id(value: int | str | None) -> int:
    if isinstance(value, int) and -(2**63) <= value < 2**63:
        return value
    if isinstance(value, str):
        try:
            return int(value, 0)
        except ValueError:
            return hash(value) & (2**62 - 1)
    return -1


__all__ = ["Builder", "Interner", "add_meta", "to_ns"]
