"""Turn a chunk's decoded events into interned, typed numpy columns (durations, instants, flows, metadata).

The events of a chunk are split by phase in order of first appearance (so every id is interned in the
same order whatever the chunk size or the number of processes), and each phase's columns are read in
bulk (bulk.py): no Python code runs per event.
"""

from __future__ import annotations

import math
from collections import Counter as Tally
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from operator import attrgetter

import msgspec
import numpy as np
import orjson

from ..cats import LEGACY_FLOW_CATS, Cat, normalize_cat
from ..columns import Events, Flows, Instants
from ..limits import ARGS_BYTES, DUR_NS, TIME_NS
from ..tracks import Meta
from . import schema
from .bulk import (
    Interner,
    byte_counts,
    column,
    exact_ts_ns,
    floats,
    flow_ids,
    int64_or,
    judge,
    link_columns,
    needs_exact,
    take,
    to_ns,
)
from .grow import Growing
from .schema import Event

_TS, _DUR, _NAME, _CAT, _PID, _TID, _ARGS, _CODE, _PHASE, _ID = map(
    attrgetter, ("ts", "dur", "name", "cat", "pid", "tid", "args", "code", "phase", "id")
)
_MEMORY = tuple(
    attrgetter(f) for f in ("bytes", "device_type", "device_id", "total_allocated", "total_reserved", "addr")
)
_PID_TID = attrgetter("pid", "tid")
_FLOW_CODES = {schema.FlowStart.code, schema.FlowEnd.code, schema.FlowStep.code}
_INSTANT_CODES = {schema.Instant.code, schema.GlobalInstant.code}
_X_DTYPES = {k: dt for k, dt in Events.dtypes().items() if k != "cat"}  # cat: from the category as written, at the end


def add_meta(meta: Meta, e: schema.Metadata) -> None:
    """Record one M event's process or thread name or order."""
    a = e.args
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
    x: Growing = field(default_factory=lambda: Growing(_X_DTYPES))
    inst: Growing = field(default_factory=lambda: Growing(Instants.dtypes()))
    flow: Growing = field(default_factory=lambda: Growing(Flows.dtypes()))
    unknown: dict[str, int] = field(default_factory=dict)
    inexact_chunks: int = 0
    untimed: int = 0
    bad_numbers: dict[str, int] = field(default_factory=dict)  # "dur negative" -> events left out for it
    limits: dict[str, int] = field(default_factory=dict)  # what hit a limit of model/limits.py, by limit
    bad_memory: int = 0
    bad_counters: int = 0
    raw_tracks: dict = field(default_factory=dict)  # (pid, tid) as written -> track id

    def add(
        self, events: list[Event], chunk_ids: np.ndarray, pos: np.ndarray, text: Callable[[], bytes] | None
    ) -> None:
        """Add one chunk's events; event i re-decodes as item pos[i] of chunk chunk_ids[i].

        text() gives the chunk's bytes, to re-read exact timestamps when floats cannot hold them.
        """
        n = len(events)
        if not n:
            return
        code = column(_CODE, events, np.int8)
        ts, inexact = start_times(floats(_TS, events), text)
        self.inexact_chunks += inexact
        if ts.dtype.kind == "f":  # some event has no time, or an impossible one: leave out the timed kinds of them
            timed = code < schema.Metadata.code
            untimed = np.isnan(ts) & timed
            self.untimed += int(untimed.sum())
            bad = untimed | (judge(np.where(untimed | ~timed, 0, ts), "ts", TIME_NS / 1000, self.bad_numbers) & timed)
            keep = np.flatnonzero(~bad)
            events, ts, code, chunk_ids, pos = take(events, keep), ts[keep], code[keep], chunk_ids[keep], pos[keep]
            ts = to_ns(np.where(timed[keep], ts, 0))
            n = len(events)
            if not n:
                return
        for kind, idx in by_phase(code):
            if idx is None:  # one phase: no split
                self._route(kind, events, ts, chunk_ids, pos)
            else:
                self._route(kind, take(events, idx), ts[idx], chunk_ids[idx], pos[idx])

    def _route(self, code: int, group: list, ts: np.ndarray, chunks: np.ndarray, pos: np.ndarray) -> None:
        if code == schema.Duration.code:
            self._add_x(group, ts, chunks, pos)
        elif code in _INSTANT_CODES:
            self._add_instants(group, ts)
        elif code == schema.Counter.code:
            self._add_counters(group, ts)
        elif code in _FLOW_CODES:
            self._add_flows(code == schema.FlowStart.code, group, ts)
        elif code == schema.Metadata.code:
            for e in group:
                add_meta(self.meta, e)
        else:
            for ph, count in Tally(map(_PHASE, group)).items():
                self.unknown[ph or "(none)"] = self.unknown.get(ph or "(none)", 0) + count

    def _add_x(self, group: list, ts: np.ndarray, chunks: np.ndarray, pos: np.ndarray) -> None:
        dur = floats(_DUR, group)
        bad = judge(dur, "dur", DUR_NS / 1000, self.bad_numbers, negative=False)
        if bad.any():
            keep = np.flatnonzero(~bad)
            group, ts, chunks, pos, dur = take(group, keep), ts[keep], chunks[keep], pos[keep], dur[keep]
        args = list(map(_ARGS, group))
        ext, corr, py_id, py_parent, shape, bad = link_columns(args, self.shapes, self.bad_numbers, self.limits)
        cols = [ts, to_ns(dur), ext, corr, py_id, py_parent, shape, byte_counts(args), chunks, pos]
        if bad.any():
            keep = np.flatnonzero(~bad)
            group, cols = take(group, keep), [c[keep] for c in cols]
        if not len(group):
            return
        ts, dur_ns, ext, corr, py_id, py_parent, shape, nbytes, chunks, pos = cols
        track, name, cat = self._track_ids(group), self.names.field(_NAME, group), self.cats.field(_CAT, group)
        self.put_x(ts, dur_ns, track, name, cat, ext, corr, py_id, py_parent, shape, nbytes, chunks, pos)

    def put_x(self, ts, dur, track, name, cat, ext, corr, py_id, py_parent, shape, nbytes, chunk, pos) -> None:
        """Durations' columns, read (here or by the compiled scan, scanned.py): kept for finish()."""
        self.x.extend(
            ts=ts,
            dur=dur,
            track=track,
            name=name,
            cat_str=cat,
            ext=ext,
            corr=corr,
            py_id=py_id,
            py_parent=py_parent,
            shape=shape,
            nbytes=nbytes,
            chunk=chunk,
            pos=pos,
        )

    def _add_instants(self, group: list, ts: np.ndarray) -> None:
        args = list(map(_ARGS, group))
        read = [int64_or(list(map(g, args))) for g in _MEMORY]
        size, dev_type, dev_id, total_alloc, total_reserved, addr = (values for values, _ in read)
        past = [where for _, where in read if where is not None]
        if past:  # a field past 64 bits: the sample reads as one without numbers (left out of the memory views)
            wrong = np.logical_or.reduce(past)
            size[wrong], dev_type[wrong] = 0, -1
        names = self.names.field(_NAME, group)
        self.put_instants(ts, self._track_ids(group), names, size, dev_type, dev_id, total_alloc, total_reserved, addr)

    def put_instants(self, ts, track, names, size, dev_type, dev_id, total_alloc, total_reserved, addr) -> None:
        """Instants' columns, read (here or by the compiled scan): kept for finish(); [memory] samples without
        a size or a device counted."""
        memory = names == self.names.ids.get("[memory]", -2)
        self.bad_memory += int((memory & ((size == 0) | (dev_type < 0))).sum())
        m = len(ts)
        self.inst.extend(
            ts=ts,
            track=track,
            name=names,
            bytes=size,
            dev_type=dev_type,
            dev_id=dev_id,
            total_alloc=total_alloc,
            total_reserved=total_reserved,
            addr=addr,
            value=np.zeros(m),
            counter=np.zeros(m, bool),
        )

    def _add_counters(self, group: list, ts: np.ndarray) -> None:
        """One sample per numeric arg of each counter event."""
        rows: list[tuple[int, str, float]] = []
        for k, e in enumerate(group):
            args = self._counter_args(e.args)
            values = {key: v for key, v in (args or {}).items() if _finite(v)}
            self.bad_counters += not values or len(values) < len(args or {})
            for key, v in values.items():
                rows.append((k, e.name if len(values) == 1 else f"{e.name} · {key}", float(v)))
        if not rows:
            return
        keep = np.array([k for k, _, _ in rows], np.int64)
        m = len(rows)
        self.inst.extend(
            ts=ts[keep],
            track=self._track_ids(take(group, keep)),
            name=self.names.array([name for _, name, _ in rows]),
            bytes=np.zeros(m, np.int64),
            dev_type=np.full(m, -1),
            dev_id=np.full(m, -1),
            total_alloc=np.full(m, -1),
            total_reserved=np.full(m, -1),
            addr=np.full(m, -1),
            value=[v for _, _, v in rows],
            counter=np.ones(m, bool),
        )

    def _counter_args(self, raw: msgspec.Raw) -> dict | None:
        """A counter's args as a dict (None: none, unreadable, or past the args size limit, which is counted)."""
        if len(raw) > ARGS_BYTES:
            self.limits["args"] = self.limits.get("args", 0) + 1
            return None
        try:
            args = orjson.loads(bytes(raw)) if raw else None
        except orjson.JSONDecodeError:  # a number past a double (1e400), or nesting past orjson's 1,024 levels
            return {"": None}  # said as a value that is not a number
        return args if isinstance(args, dict) else None

    def _add_flows(self, start: bool, group: list, ts: np.ndarray) -> None:
        cats = Interner()
        cat_ids = cats.field(_CAT, group)
        self.put_flows(ts, self._track_ids(group), flow_ids(list(map(_ID, group))), start, ac2g(cats.values)[cat_ids])

    def put_flows(self, ts, track, fid, start: bool, ac2g) -> None:
        """Flow events' columns, read (here or by the compiled scan): kept for finish()."""
        self.flow.extend(ts=ts, track=track, fid=fid, start=np.full(len(ts), start), ac2g=ac2g)

    def _track_ids(self, group: list) -> np.ndarray:
        """Track ids of events, interned in order of first appearance: each event's (pid, tid) as written is looked
        up in C in a table of the pairs seen so far; only a chunk with an unseen pair walks them again, once per
        distinct pair (one pass over the events, where coding pids and tids apart took two and a sort)."""
        try:
            return np.fromiter(map(self.raw_tracks.__getitem__, map(_PID_TID, group)), np.int32, len(group))
        except KeyError:
            for p, t in dict.fromkeys(map(_PID_TID, group)):
                if (p, t) not in self.raw_tracks:
                    self.raw_tracks[(p, t)] = self.tracks((_norm(p), _norm(t)))
            return np.fromiter(map(self.raw_tracks.__getitem__, map(_PID_TID, group)), np.int32, len(group))

    def finish(self, last: bool = True) -> tuple[Events, Instants, Flows]:
        """The typed tables of the chunks added so far; last=False: copies, for chunks may still be added after
        (else views of the builder's columns, which nothing may add to after)."""
        enum = np.array([int(normalize_cat(c)) for c in self.cats.values] or [int(Cat.OTHER)], np.int8)
        cols = {k: self.x.column(k, not last) for k in _X_DTYPES}
        x = Events.from_columns({**cols, "cat": enum[cols["cat_str"]]})
        inst = Instants.from_columns({k: self.inst.column(k, not last) for k in Instants.dtypes()})
        flow = Flows.from_columns({k: self.flow.column(k, not last) for k in Flows.dtypes()})
        return x, inst, flow


def start_times(ts_raw: np.ndarray, text: Callable[[], bytes] | None) -> tuple[np.ndarray, bool]:
    """A chunk's start times (float µs as read, NaN where an event has none) in int64 ns; as they are when some is
    not a number or cannot be (infinite, or past limits.TIME_NS), for the caller to leave out. And whether they
    needed re-reading from the chunk's text() (a float cannot hold their ns) and could not be."""
    with np.errstate(invalid="ignore"):
        odd = ~(np.abs(ts_raw) < TIME_NS / 1000)  # NaN, infinite or out of range
    if odd.any():
        return ts_raw, False
    if text is not None and needs_exact(ts_raw):
        exact = exact_ts_ns(text(), len(ts_raw))
        return (to_ns(ts_raw), True) if exact is None else (exact, False)
    return to_ns(ts_raw), False


def by_phase(code: np.ndarray) -> Iterator[tuple[int, np.ndarray | None]]:
    """A chunk's phases in order of first appearance (the order ids are interned in), each with the indices of its
    events (None: every event, the chunk has one phase)."""
    if not len(code):
        return
    if code[0] == code[-1] and (code == code[0]).all():
        yield int(code[0]), None
        return
    kinds, first = np.unique(code, return_index=True)
    for kind in kinds[np.argsort(first)].tolist():
        yield kind, np.flatnonzero(code == kind)


def ac2g(cats: list[str]) -> np.ndarray:
    """Which flow categories link a launch to its device activity (ac2g, or a legacy name of it)."""
    return np.array([LEGACY_FLOW_CATS.get(c, c) == "ac2g" for c in cats], bool)


def _finite(value: object) -> bool:
    """A counter value: a number, not a bool, that a float holds (an int past 1e308 does not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _norm(key: int | str) -> int | str:
    """Numeric-string pids/tids ("24572") are the same thread as the int elsewhere."""
    if isinstance(key, str) and key.lstrip("-").isdigit():
        return int(key)
    return key


__all__ = ["Builder", "Interner", "add_meta", "to_ns"]
