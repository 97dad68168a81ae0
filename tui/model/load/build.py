"""Turn decoded events into interned, typed numpy columns (durations, instants, flows, metadata)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..cats import Cat, normalize_cat
from ..columns import Events, Flows, Instants
from ..tracks import Meta
from .schema import Event

_TS_TEXT = re.compile(rb'"ts"\s*:\s*"?(-?\d+)(?:\.(\d+))?')
# Above this many µs a float with a fraction no longer holds exact nanoseconds.
_EXACT_LIMIT_US = float(2**43)
LEGACY_FLOW_CATS = {"async": "ac2g", "async_cpu_to_gpu": "ac2g", "forward_backward": "fwdbwd"}


class Interner:
    """Strings (or any hashable) to dense int ids, in first-seen order."""

    def __init__(self) -> None:
        self.ids: dict = {}

    def __call__(self, value) -> int:
        return self.ids.setdefault(value, len(self.ids))

    def many(self, values) -> list[int]:
        ids = self.ids
        add = ids.setdefault
        return [add(v, len(ids)) for v in values]

    @property
    def values(self) -> list:
        return list(self.ids)


def to_ns(values: list) -> np.ndarray:
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


def needs_exact(ts: list) -> bool:
    """True when some ts is a large float with a fraction (19-digit absolute ns era)."""
    return any(isinstance(t, float) and abs(t) >= _EXACT_LIMIT_US and t != int(t) for t in ts)


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
    raw_tracks: dict = field(default_factory=dict)  # (pid, tid) as written -> track id

    def add(self, events: list[Event], chunk_ids: np.ndarray, pos: np.ndarray, text: bytes | None) -> None:
        """Add one chunk's events; event i re-decodes as item pos[i] of chunk chunk_ids[i]."""
        ts_raw = [e.ts for e in events]
        ts = None
        if text is not None and needs_exact(ts_raw):
            ts = exact_ts_ns(text, len(events))
            self.inexact_chunks += ts is None
        if ts is None:
            ts = to_ns(ts_raw)
        phs = [e.ph for e in events]
        for ph in dict.fromkeys(phs):  # in order of first appearance: ids do not depend on hashing
            sel = np.fromiter((p == ph for p in phs), bool, len(phs))
            idx = np.flatnonzero(sel)
            group = [events[i] for i in idx]
            self._route(ph, group, ts[idx], chunk_ids[idx], pos[idx])

    def _route(self, ph, group, ts, chunks, pos) -> None:
        if ph == "X":
            self._add_x(group, ts, chunks, pos)
        elif ph in ("i", "I"):
            _extend(
                self.inst,
                ts=ts,
                track=self._track_ids(group),
                name=self.names.many([e.name for e in group]),
                bytes=[e.args.bytes for e in group],
                dev_type=[e.args.device_type for e in group],
            )
        elif ph in ("s", "f", "t"):
            self._add_flows(ph, group, ts)
        elif ph == "M":
            for e in group:
                add_meta(self.meta, e)
        else:
            self.unknown[ph or "(none)"] = self.unknown.get(ph or "(none)", 0) + len(group)

    def _track_ids(self, group: list[Event]) -> list[int]:
        raw = self.raw_tracks
        out = []
        for e in group:
            key = (e.pid, e.tid)
            ident = raw.get(key)
            if ident is None:
                ident = raw[key] = self.tracks((_norm(e.pid), _norm(e.tid)))
            out.append(ident)
        return out

    def _add_x(self, group: list[Event], ts, chunks, pos) -> None:
        ext, corr, py_id, py_parent, shape = _link_columns([e.args for e in group], self.shapes)
        _extend(
            self.x,
            ts=ts,
            dur=np.maximum(to_ns([e.dur for e in group]), 0),
            track=self._track_ids(group),
            name=self.names.many([e.name for e in group]),
            cat_str=self.cats.many([e.cat for e in group]),
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
    try:
        ext = np.array([a.external_id for a in args], np.int64)
        legacy = np.array([a.external_id_legacy for a in args], np.int64)
        corr = np.array([a.correlation for a in args], np.int64)
        py_id = np.array([a.python_id for a in args], np.int64)
        py_parent = np.array([-1 if p is None else p for p in (a.python_parent_id for a in args)], np.int64)
    except OverflowError:  # ids past int64 (seen in the wild): drop those links only
        return _link_columns_slow(args, shapes)
    ext = np.where(ext > 0, ext, np.where(legacy > 0, legacy, -1))
    corr = np.where(corr > 0, corr, -1)
    shape = [shapes(bytes(d)) if d else -1 for d in (a.input_dims or a.input_dims_legacy for a in args)]
    return ext, corr, np.maximum(py_id, -1), np.maximum(py_parent, -1), np.asarray(shape, np.int32)


def _link_columns_slow(args: list, shapes: Interner) -> tuple[np.ndarray, ...]:
    ext = [_link(a.external_id if a.external_id > 0 else a.external_id_legacy) for a in args]
    corr = [_link(a.correlation) for a in args]
    py_id = [_opt(a.python_id) for a in args]
    py_parent = [_opt(a.python_parent_id) for a in args]
    shape = [shapes(bytes(d)) if d else -1 for d in (a.input_dims or a.input_dims_legacy for a in args)]
    return tuple(np.asarray(c, np.int64) for c in (ext, corr, py_id, py_parent)) + (np.asarray(shape, np.int32),)


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
