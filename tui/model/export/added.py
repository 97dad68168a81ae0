"""The events an export adds, as JSON text: counters (ph C) and the critical path's lane (ph M and X).

- queue: per stream, the launches queued on it (critical/queue.py), a counter on the stream's process named
  "Launch queue (GPU 0 stream 7)", a sample at each change;
- bandwidth: per device and direction, the bandwidth of the copies running (each copy's bytes over its time,
  summed while they overlap), "Copy bandwidth H2D (GB/s)" on the device's process, and of the sets running,
  "Memset bandwidth (GB/s)" (HTA's memory-bandwidth series has the same four: its MemcpyHtoD, DtoH, DtoD, Memset);
- critical: the critical path of a step (the slowest, or the one asked for) as a process of its own holding one
  lane: a slice per stretch of the path, named by its event, its class and the event's id in its args.
Times are written in the file's own clock (microseconds, from baseTimeNanoseconds when the file has one), the
nanoseconds as three exact decimals: never a float's rounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import orjson

from ..analyses.copies import copy_bytes
from ..analyses.critical import critical_path, find_window
from ..analyses.critical.queue import queue_series
from ..analyses.device_work import direction
from ..analyses.results import Results
from ..cats import Cat
from ..trace import TraceColumns

KINDS = ("queue", "bandwidth", "critical")
LANE_CAT = "tracetui_critical_path"


@dataclass
class Added:
    """The new events (one JSON object each), how many of each kind, and what the export has to say."""

    texts: list[bytes] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def added_events(a: Results, kinds: Sequence[str], base_ns: int, step: int | None = None) -> Added:
    """The events of each kind asked for (KINDS), times relative to base_ns (the file's baseTimeNanoseconds)."""
    out = Added()
    clock = _Clock(base_ns)
    for kind in kinds:
        texts = {"queue": _queues, "bandwidth": _bandwidth, "critical": _critical}[kind](a, clock, out, step)
        out.texts += texts
        out.counts[kind] = len(texts)
    return out


class _Clock:
    """Nanoseconds on the trace's clock as the file writes them: microseconds from its base, three decimals."""

    def __init__(self, base_ns: int) -> None:
        self.base = base_ns

    def us(self, ns: int) -> bytes:
        return _us(int(ns) - self.base)


def _us(ns: int) -> bytes:
    q, r = divmod(abs(ns), 1000)
    return f"{'-' if ns < 0 else ''}{q}.{r:03d}".encode()


def _event(ph: str, name: str, pid: object, tid: object, ts: bytes, **rest: object) -> bytes:
    """One event's JSON text, its times (ts, and dur when given as bytes) written as they are."""
    parts = [b'"ph":' + orjson.dumps(ph), b'"name":' + orjson.dumps(name), b'"pid":' + orjson.dumps(pid)]
    parts += [b'"tid":' + orjson.dumps(tid), b'"ts":' + ts]
    for key, value in rest.items():
        parts.append(orjson.dumps(key) + b":" + (value if isinstance(value, bytes) else orjson.dumps(value)))
    return b"{" + b",".join(parts) + b"}"


def _queues(a: Results, clock: _Clock, out: Added, step: int | None) -> list[bytes]:
    texts = []
    for s in queue_series(a.trace, a.links.launcher):
        track = a.trace.tracks[s.track]
        name = f"Launch queue ({track.name})"
        for t, n in zip(s.ts.tolist(), s.length.tolist(), strict=True):
            texts.append(_event("C", name, track.pid, track.tid, clock.us(t), args={"queued": n}))
    return texts


def _bandwidth(a: Results, clock: _Clock, out: Added, step: int | None) -> list[bytes]:
    trace, x = a.trace, a.trace.x
    ev = np.flatnonzero(((x.cat == int(Cat.MEMCPY)) | (x.cat == int(Cat.MEMSET))) & (x.dur > 0))
    size = copy_bytes(trace, ev) if len(ev) else np.zeros(0, np.int64)
    if len(ev) and (size < 0).any():
        out.notes.append(
            f"{int((size < 0).sum()):,} copies or sets record no bytes: left out of the bandwidth counters"
        )
    ev, size = ev[size >= 0], size[size >= 0]
    kinds = np.array([_kind(trace, int(e)) for e in ev.tolist()], dtype=object)
    pids = np.array([str(trace.tracks[int(t)].pid) for t in x.track[ev]], dtype=object)
    texts = []
    for pid, kind in sorted({(p, k) for p, k in zip(pids.tolist(), kinds.tolist(), strict=True)}):
        mine = ev[(pids == pid) & (kinds == kind)]
        name = "Memset bandwidth (GB/s)" if kind == SET else f"Copy bandwidth {kind} (GB/s)"
        texts += _rate_series(trace, mine, size[(pids == pid) & (kinds == kind)], name, clock)
    return texts


SET = "set"


def _kind(trace: TraceColumns, ev: int) -> str:
    """A copy's direction (H2D, ...), or SET for a set."""
    x = trace.x
    return SET if int(x.cat[ev]) == int(Cat.MEMSET) else direction(trace.names[int(x.name[ev])])


def _rate_series(trace: TraceColumns, ev: np.ndarray, size: np.ndarray, name: str, clock: _Clock) -> list[bytes]:
    """The summed bandwidth of the copies running, after each start and end (one sample per instant)."""
    x = trace.x
    rate = size / x.dur[ev]  # bytes per ns: GB/s
    t = np.concatenate([x.ts[ev], x.ts[ev] + x.dur[ev]])
    change = np.concatenate([rate, -rate])
    order = np.argsort(t, kind="stable")
    t, level = t[order], np.cumsum(change[order])
    last = np.r_[t[1:] != t[:-1], True]
    track = trace.tracks[int(x.track[ev[0]])]
    return [
        _event("C", name, track.pid, track.tid, clock.us(at), args={"GB/s": round(max(v, 0.0), 3)})
        for at, v in zip(t[last].tolist(), level[last].tolist(), strict=True)
    ]


def _critical(a: Results, clock: _Clock, out: Added, step: int | None) -> list[bytes]:
    path = a.critical if step is None else critical_path(a, find_window(a.trace, step), a.graph_owner)
    if not path.items:
        out.notes.append(f"the critical path of {path.window} is empty: no lane added")
        return []
    pid = _free_pid(a.trace)
    bound = path.bound_by or "nothing"
    lane = f"critical path of {path.window}: {path.length_ns / 1e6:,.3f} ms, mostly {bound}"
    texts = [
        _event("M", "process_name", pid, 0, b"0", args={"name": "tracetui: critical path"}),
        _event("M", "thread_name", pid, 0, b"0", args={"name": lane}),
    ]
    origin = a.trace.origin
    for it in path.items:
        args = {"bound_by": it.bound_by, "kind": it.kind} | ({"event_id": it.event} if it.event >= 0 else {})
        ts, dur = clock.us(origin + it.start_ns), _us(it.dur_ns)
        texts.append(_event("X", it.name, pid, 0, ts, dur=dur, cat=LANE_CAT, args=args))
    return texts


def _free_pid(trace: TraceColumns) -> int:
    """A process id no lane of the trace uses."""
    taken = [t.pid for t in trace.tracks if isinstance(t.pid, int)]
    return max(taken, default=0) + 1
