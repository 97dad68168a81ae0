"""A job's critical path: each rank's path over one step, and which rank the others wait for in collectives.

Each rank's window is its own ProfilerStep#N (or the K-th span of an annotation, or its whole trace); the
ranks' clocks were lined up on load. A collective kernel launched in the window is matched to the same
collective on the other ranks by its sequence number (Kineto's Seq, on the kernel or on the op that launched
it) where the trace has one, else by its order among the window's collectives of its process group. The rank
whose kernel starts last arrived last: on every other rank, the collective's time until then is a wait for
it. The rank the others' paths wait for most bounds the job's step (without such waits, the longest path).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...analysis import Analysis
from ...cats import Cat
from ...load.args import event_args
from ...sets import distinct
from ...steps import STEP_NAME, step_starts
from ..comm_names import COLLECTIVE_CALL
from ..kernel_roles import role
from ..rank_waits import host_arrivals, last_arrival
from .path import CriticalPath, PathItem, critical_path
from .window import Window, WindowError, find_window, whole_trace

SEQ_ARGS = ("Seq", "seq", "Comms Id")
GROUP_ARGS = ("Process Group Name", "Process Group Description", "pg_name")
UP = 8  # enclosing ops looked at for a launch's sequence number


@dataclass
class Wait:
    """One rank's wait in a collective for the rank that arrived last (ns)."""

    rank: int
    for_rank: int
    collective: str
    event: int  # the waiting rank's collective kernel
    wait_ns: int  # from its kernel's start to the last arrival's start
    on_path_ns: int  # how much of that is on the waiting rank's critical path
    host: bool = False  # a collective on the host (gloo): event is its backend span, the wait a CPU thread's
    on_path_by: dict[str, int] = field(default_factory=dict)  # on_path_ns by the class the path gave it


@dataclass
class JobPath:
    """Every rank's path over one window, the waits between them, and the rank that bounds the job's step."""

    window: str
    paths: dict[int, CriticalPath]
    waits: list[Wait] = field(default_factory=list)
    left_out: dict[int, str] = field(default_factory=dict)  # rank -> why it has no path
    matched_by: str = ""  # "sequence numbers" or "order per process group"

    def held_ns(self) -> dict[int, int]:
        """Per rank: how long the other ranks' paths wait for it."""
        held = dict.fromkeys(self.paths, 0)
        for w in self.waits:
            held[w.for_rank] += w.on_path_ns
        return held

    @property
    def bound_rank(self) -> int:
        held = self.held_ns()
        if any(held.values()):
            return max(held, key=lambda r: (held[r], -r))
        return max(self.paths, key=lambda r: (self.paths[r].length_ns, -r))

    def own_breakdown(self, rank: int) -> dict[str, int]:
        """A rank's breakdown with its own waits for other ranks taken out of the classes they were in."""
        out = dict(self.paths[rank].breakdown)
        for w in self.waits:
            if w.rank == rank:
                for key, ns in w.on_path_by.items():
                    out[key] = max(out.get(key, 0) - ns, 0)
        return out


def job_path(
    a: Analysis,
    replayed_by: np.ndarray,
    step: int | None = None,
    annotation: str | None = None,
    instance: int = 0,
) -> JobPath:
    """Each rank's path over the same window, and the collectives' waits between the ranks."""
    first = find_window(a.trace, step, annotation, instance)
    job = JobPath(first.name if first.event >= 0 else "the whole trace", {})
    windows: dict[int, Window] = {}
    for rank in sorted({t.rank for t in a.trace.tracks if t.kind != "meta"}):
        try:
            windows[rank] = _window_of(a, first, rank, annotation, instance)
            job.paths[rank] = critical_path(a, windows[rank], replayed_by)
        except WindowError as exc:
            job.left_out[rank] = str(exc)
    if not job.paths:
        raise WindowError(f"no rank has {job.window}")
    found = {r: _collectives(a, windows[r]) for r in job.paths}
    host = not any(found.values())
    if host:  # no collective kernel: the host's collectives (gloo), matched as tracetui ranks matches them
        found = {r: _host_collectives(a, windows[r]) for r in job.paths}
    job.matched_by = (
        "calls in order per step (collectives on the host)"
        if host
        else "sequence numbers"
        if any(k[0] == "seq" for c in found.values() for k in c)
        else "order per process group"
    )
    job.waits = _waits(a, job, found, host)
    return job


def _host_collectives(a: Analysis, w: Window) -> dict[tuple, tuple[int, int, int]]:
    """The rank's host collectives that arrive in its window: key -> (backend span, arrival, completion)."""
    t = a.trace
    mine = np.array([tr.rank == w.rank and tr.kind != "meta" for tr in t.tracks] or [False])
    found = host_arrivals(t, mine[t.x.track], step_starts(t, w.rank))
    return {("host", key.split("|", 1)[1]): (span, s, e) for key, s, e, span in found if w.start <= s < w.end}


def _window_of(a: Analysis, first: Window, rank: int, annotation: str | None, instance: int) -> Window:
    if annotation is not None:
        return find_window(a.trace, annotation=annotation, instance=instance, rank=rank)
    m = STEP_NAME.match(first.name) if first.event >= 0 else None
    if m:
        return find_window(a.trace, step=int(m.group(1)), rank=rank)
    return whole_trace(a.trace, rank)


def _collectives(a: Analysis, w: Window) -> dict[tuple, tuple[int, int, int]]:
    """The collective kernels launched in a rank's window, by match key: (seq, group, n) or (order, group, k)."""
    x = a.trace.x
    gpu = np.array([t.kind == "gpu" and t.rank == w.rank for t in a.trace.tracks] or [False])
    names = distinct(x.name[gpu[x.track] & (x.cat == int(Cat.KERNEL))])
    comm = {int(k) for k in names if role(a.trace.names[int(k)]) == "collective"}
    ev = np.flatnonzero(gpu[x.track] & (x.cat == int(Cat.KERNEL)) & np.isin(x.name, list(comm)))
    launcher = a.links.launcher[ev]
    t = np.where(launcher >= 0, x.ts[np.maximum(launcher, 0)], x.ts[ev])
    ev = ev[(t >= w.start) & (t < w.end)]
    ev = ev[np.argsort(x.ts[ev], kind="stable")]
    out: dict[tuple, tuple[int, int, int]] = {}
    count: dict[str, int] = {}
    for i in ev.tolist():
        args = event_args(a.trace, i)
        group = str(next((args[k] for k in GROUP_ARGS if k in args), ""))
        seq = _seq(a, i, args)
        span = (i, int(x.ts[i]), int(x.ts[i] + x.dur[i]))
        if seq is not None:
            out[("seq", group, seq)] = span
        else:
            count[group] = count.get(group, 0) + 1
            out[("order", group, count[group])] = span
    return out


def _seq(a: Analysis, kernel: int, args: dict):
    """The collective's sequence number: on the kernel, or on an op above its launch (record_param_comms)."""
    for k in SEQ_ARGS:
        if k in args:
            return args[k]
    up = int(a.links.launcher[kernel])
    parent = a.nesting.time_parent
    for _ in range(UP):
        if up < 0:
            return None
        if "comms" in a.trace.name_of(up) or "nccl" in a.trace.name_of(up).lower():
            found = event_args(a.trace, up)
            for k in SEQ_ARGS:
                if k in found:
                    return found[k]
        up = int(parent[up])
    return None


def _waits(a: Analysis, job: JobPath, found: dict[int, dict[tuple, tuple[int, int, int]]], host: bool) -> list[Wait]:
    out = []
    for key in sorted({k for c in found.values() for k in c}, key=str):
        here = {r: c[key] for r, c in found.items() if key in c}
        if len(here) < 2:
            continue
        last, waited = _last(a, here, host)
        for r, (ev, start, end) in here.items():
            if r == last or waited[r] <= 0:
                continue
            until = min(start + waited[r], end)
            by = _on_path(a, job.paths[r], ev, start, until, host)
            out.append(Wait(r, last, a.trace.name_of(ev), ev, until - start, sum(by.values()), host, by))
    return out


def _last(a: Analysis, here: dict[int, tuple[int, int, int]], host: bool) -> tuple[int, dict[int, int]]:
    """The rank that arrived last and each rank's wait for it: on the device, by the kernels' starts on the lined
    up clocks; on the host, on the ranks' raw clocks (rank_waits.last_arrival says why)."""
    if host:
        shift = {int(i["rank"]): round(float(i.get("shift_us", 0.0)) * 1000) for i in a.trace.ranks}
        return last_arrival({r: (s - shift.get(r, 0), e - shift.get(r, 0)) for r, (_, s, e) in here.items()})
    last = max(here, key=lambda r: (here[r][1], -r))
    return last, {r: here[last][1] - start for r, (_, start, _) in here.items()}


def _on_path(a: Analysis, path: CriticalPath, ev: int, start: int, until: int, host: bool = False) -> dict[str, int]:
    """The time of [start, until) (ns, raw clock) the path spends in the kernel ev, by class; on the host, in the
    collective: its backend span ev, its call (c10d::allreduce_), or the hand-over between them."""
    o = a.trace.origin
    s, u = start - o, until - o
    items = path.items
    mine = [it.event == ev and (host or it.kind == "kernel") or host and _is_call(a, it.event) for it in items]
    if host:
        mine = [m or _hand_over(items, k, ev, u) for k, m in enumerate(mine)]
    out: dict[str, int] = {}
    for it, m in zip(items, mine, strict=True):
        ns = max(0, min(it.start_ns + it.dur_ns, u) - max(it.start_ns, s)) if m else 0
        if ns:
            out[it.bound_by] = out.get(it.bound_by, 0) + ns
    return out


def _hand_over(items: list[PathItem], k: int, ev: int, u: int) -> bool:
    """Is item k the wait of the backend's thread for the call to hand the collective over, ended before the last
    rank arrived (u)? The hand-over is the collective's own time: a backend thread slow to run (a loaded machine
    deschedules it) before the last rank arrives delays nothing, the rank waits for the last one either way. One
    that ends later is the rank's own delay, not a wait for another rank."""
    it = items[k]
    nxt = items[k + 1] if k + 1 < len(items) else None
    return it.kind == "wait" and nxt is not None and nxt.event == ev and it.start_ns + it.dur_ns <= u


def _is_call(a: Analysis, event: int) -> bool:
    return event >= 0 and bool(COLLECTIVE_CALL.search(a.trace.name_of(event)))
