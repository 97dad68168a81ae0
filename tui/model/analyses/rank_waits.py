"""Collectives that run on the host (gloo on the CPU; a backend's span where no collective kernel was recorded), and
who the ranks waited for in them.

The backend's span of a c10d Work (``gloo:all_reduce``, ``nccl:all_reduce``: comm_names.BACKEND_SPAN) is an async
RecordFunction that ends when the Work completes (c10d/Work.cpp); gloo's worker threads start it when they take
the work, which on a loaded machine is a few ms after the rank called the collective (c10d::allreduce_). So a
rank arrives when it calls the collective and is done when the span ends. A collective completes on no rank
before every rank has arrived, and then on all of them: the time from a rank's arrival to the last rank's is a
wait for that rank. Each rank's spans are
matched to the other ranks' by (ProfilerStep#N, name, order within the step); the clocks are the job's, lined up
on a common ProfilerStep (steps.align_on_steps).

A rank's collective time is the union of its spans (each thread's work counted once), its compute the union of
its CPU ops that are not collective calls, and its hidden communication the time both run at once: DDP's buckets
all-reduced on gloo's threads while the backward runs on the others.
"""

from __future__ import annotations

import bisect
import statistics
from dataclasses import dataclass, field

import numpy as np

from ..cats import Cat
from ..trace import TraceColumns
from .comm_names import BACKEND_SPAN, COLLECTIVE_CALL
from .summary import union_length


@dataclass
class Arrival:
    """A rank's arrival at one collective: its match key, and its span on the rank's raw clock (ns)."""

    key: str  # "<step>|<name>|<k>": the k-th span of that name that starts in ProfilerStep#<step> (-1: none)
    start_ns: int
    dur_ns: int


@dataclass
class HostComm:
    """A rank's collectives on the host (us), its CPU compute, their overlap, time per collective, arrivals."""

    comm_us: float = 0.0
    compute_us: float = 0.0
    overlap_us: float = 0.0
    per_kind: dict[str, float] = field(default_factory=dict)  # by span name (gloo:all_reduce, ...)
    arrivals: list[Arrival] = field(default_factory=list)


def host_comm(trace: TraceColumns, own: np.ndarray, starts: dict[int, int], shift_ns: int = 0) -> HostComm:
    """The rank's host collectives (own: its events; starts: its ProfilerStep number -> start, ns; shift_ns: how
    far a job's load moved its events, taken back: arrivals are kept on the rank's raw clock)."""
    x = trace.x
    calls = np.array([bool(COLLECTIVE_CALL.search(n)) for n in trace.names] or [False])
    spans = backend_spans(trace, own)
    if not len(spans):
        return HostComm()
    ops = np.flatnonzero(own & (x.cat == int(Cat.CPU_OP)) & ~calls[x.name])
    s, e = x.ts[spans], x.ts[spans] + x.dur[spans]
    comm = union_length(s, e)
    compute = union_length(x.ts[ops], x.ts[ops] + x.dur[ops])
    both = union_length(np.concatenate([s, x.ts[ops]]), np.concatenate([e, x.ts[ops] + x.dur[ops]]))
    per_kind: dict[str, float] = {}
    for n, d in zip(x.name[spans].tolist(), x.dur[spans].tolist(), strict=True):
        per_kind[trace.names[n]] = per_kind.get(trace.names[n], 0.0) + d / 1000
    found = [Arrival(k, s - shift_ns, e - s) for k, s, e, _ in host_arrivals(trace, own, starts, spans)]
    return HostComm(comm / 1000, compute / 1000, (comm + compute - both) / 1000, per_kind, found)


def backend_spans(trace: TraceColumns, own: np.ndarray) -> np.ndarray:
    """The backend's spans of collectives among the events of own (gloo:all_reduce, nccl:all_reduce, ...)."""
    x = trace.x
    backend = np.array([bool(BACKEND_SPAN.match(n)) for n in trace.names] or [False])
    host = (x.cat == int(Cat.CPU_OP)) | (x.cat == int(Cat.USER_ANNOTATION))
    return np.flatnonzero(own & host & backend[x.name])


def host_arrivals(
    trace: TraceColumns, own: np.ndarray, starts: dict[int, int], spans: np.ndarray | None = None
) -> list[tuple[str, int, int, int]]:
    """Per ProfilerStep, the rank's collective calls (c10d::allreduce_, ...: when the rank arrived) paired in order
    with its backend spans (when the collective completed; gloo's threads take the work in the order it came):
    (match key, arrival, completion (ns, raw clock), the span)."""
    x = trace.x
    spans = backend_spans(trace, own) if spans is None else spans
    calls = _outer_calls(trace, own)
    step_of = _step_of(starts)
    by_step: dict[int, tuple[list[int], list[int]]] = {}
    for i in calls.tolist():
        by_step.setdefault(step_of(int(x.ts[i])), ([], []))[0].append(i)
    for i in spans[np.argsort(x.ts[spans], kind="stable")].tolist():
        by_step.setdefault(step_of(int(x.ts[i])), ([], []))[1].append(i)
    out = []
    for step, (arrive, done) in sorted(by_step.items()):
        arrive = arrive or done  # no call recorded: the span's start is the arrival
        seen: dict[str, int] = {}
        for k, i in enumerate(arrive):
            span = done[k] if k < len(done) else i
            name = trace.name_of(span)
            n = seen[name] = seen.get(name, 0) + 1
            start = int(x.ts[i])
            end = max(int(x.ts[span] + x.dur[span]), int(x.ts[i] + x.dur[i]))
            out.append((f"{step}|{name}|{n}", start, end, span))
    return out


def _step_of(starts: dict[int, int]):
    numbers = sorted(starts, key=lambda n: starts[n])
    at = [starts[n] for n in numbers]

    def step(ts: int) -> int:
        k = bisect.bisect_right(at, ts) - 1
        return numbers[k] if k >= 0 else -1

    return step


def _outer_calls(trace: TraceColumns, own: np.ndarray) -> np.ndarray:
    """The rank's outermost collective calls (not the backend's spans), in time order."""
    x = trace.x
    named = np.array([bool(COLLECTIVE_CALL.search(n)) and not BACKEND_SPAN.match(n) for n in trace.names] or [False])
    calls = np.flatnonzero(own & (x.cat == int(Cat.CPU_OP)) & named[x.name])
    calls = calls[np.lexsort((-x.dur[calls], x.ts[calls], x.track[calls]))]
    keep, end = [], dict[int, int]()
    for i in calls.tolist():
        track, ts = int(x.track[i]), int(x.ts[i])
        if ts < end.get(track, -1):
            continue  # inside a call of its thread (record_param_comms under c10d::allreduce_)
        keep.append(i)
        end[track] = ts + int(x.dur[i])
    out = np.array(keep, dtype=np.int64)
    return out[np.argsort(x.ts[out], kind="stable")]


@dataclass
class Waits:
    """Who the job waited for at its host collectives (us)."""

    per_rank: dict[int, float] = field(default_factory=dict)  # a rank's typical (median) step's wait for others
    for_rank: int = -1  # the rank the others waited for the most (-1: no waits matched)
    for_rank_us: float = 0.0  # the other ranks' typical step's wait for it (their median)
    collective: str = ""  # where they waited for it the most
    matched: int = 0  # collectives found on two ranks or more


def waits(arrivals: dict[int, list[Arrival]]) -> Waits:
    """Match the ranks' arrivals; on each rank, the time from its arrival to the last rank's (within its span)."""
    by_key: dict[str, dict[int, Arrival]] = {}
    for rank, found in arrivals.items():
        for a in found:
            by_key.setdefault(a.key, {})[rank] = a
    per_step: dict[tuple[int, str], list[tuple[int, int]]] = {}  # (waiting rank, step) -> its waits
    held: dict[tuple[int, int, str], list[tuple[int, int]]] = {}  # (waiting rank, for rank, step) -> its waits
    where: dict[tuple[int, str], float] = {}  # (for rank, collective) -> ns
    matched = 0
    for key, here in by_key.items():
        if len(here) < 2:
            continue
        matched += 1
        step, name = key.split("|")[0], key.split("|")[1]
        last, waited = last_arrival({r: (a.start_ns, a.start_ns + a.dur_ns) for r, a in here.items()})
        for r, a in here.items():
            wait = (a.start_ns, a.start_ns + waited[r])
            per_step.setdefault((r, step), []).append(wait)
            if waited[r] > 0:
                held.setdefault((r, last, step), []).append(wait)
                where[(last, name)] = where.get((last, name), 0.0) + waited[r]
    # buckets in flight together wait at once: a step's wait is the union of its waits, not their sum
    return _told(arrivals, _unions(per_step), _unions(held), where, matched)


def last_arrival(spans: dict[int, tuple[int, int]]) -> tuple[int, dict[int, int]]:
    """The rank that arrived last at a collective, and each rank's wait for it (ns): from its arrival to the last
    rank's, within its own span. The clocks are the ranks' own (raw): ranks of one machine share one, and lined
    up on a step's start they would be off by the ranks' different starts of that step (7 ms seen on 2 gloo
    ranks). The ranks' times in the collective alone do not tell it: a rank starved of CPU ends its part a few
    ms after the others."""
    last = max(spans, key=lambda r: (spans[r][0], -r))
    arrived = spans[last][0]
    return last, {r: max(min(arrived, end) - start, 0) for r, (start, end) in spans.items()}


def _unions(spans: dict) -> dict:
    return {k: float(union_length(np.array([s for s, _ in v]), np.array([e for _, e in v]))) for k, v in spans.items()}


def _told(arrivals, per_step, held, where, matched: int) -> Waits:
    out = Waits(matched=matched)
    for rank in arrivals:
        mine = [ns for (r, _), ns in per_step.items() if r == rank]
        out.per_rank[rank] = statistics.median(mine) / 1000 if mine else 0.0
    total: dict[int, float] = {}
    for (_, f, _), ns in held.items():
        total[f] = total.get(f, 0.0) + ns
    if not total:
        return out
    out.for_rank = max(total, key=lambda r: (total[r], -r))
    others = [r for r in arrivals if r != out.for_rank]
    typical = [
        statistics.median([held.get((r, out.for_rank, s), 0.0) for (w, s) in per_step if w == r]) for r in others
    ]
    out.for_rank_us = statistics.median(typical) / 1000 if typical else 0.0
    out.collective = max(((n, ns) for (f, n), ns in where.items() if f == out.for_rank), key=lambda kv: kv[1])[0]
    return out
