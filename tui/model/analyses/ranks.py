"""A job of many ranks: one summary row per rank, and what they say together (stragglers, collectives).

Per rank (one file, or one rank of a merged folder): its copies per direction (copies.py, from rank_events), the window, the steps (each with its CPU span, the
device work it launched and how long the user waited for it: steps.py) and the typical (median) step, GPU busy, and the device time split into collectives (NCCL/RCCL/gloo kernels, or the
collective_comm category) and compute, how much of the collective time compute hides, and idle time.

The straggler rule: with two ranks or more, a rank is a straggler when its typical step is at least
STRAGGLER_PCT% longer than the median of the other ranks' typical steps, or when, with steps within
that margin (collectives make every rank wait for the slowest, which evens out step times), its
compute time is at least STRAGGLER_PCT% above the others' median while it spends less time in
collectives than they do: the others wait for it there.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

import numpy as np

from ..analysis import Analysis
from ..cats import BUSY_CATS, of_cats
from ..sets import distinct
from ..steps import Step, align_on_steps, step_starts, typical_step
from ..steps import steps as step_list
from ..words import duration
from .copy_row import CopyRow
from .kernel_roles import role
from .launches import device_callers
from .rank_waits import Arrival, Waits, host_comm, waits
from .summary import device_union

STRAGGLER_PCT = 10.0
KIND = re.compile(r"(all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|broadcast|send_?recv|reduce|send|recv)", re.I)
MAX_UP = 12  # how far up from a generic kernel's launch to look for the op that names its collective
KINDS = {
    k.lower(): k
    for k in ("AllReduce", "AllGather", "ReduceScatter", "AllToAll", "Broadcast", "SendRecv", "Reduce", "Send", "Recv")
}


@dataclass
class RankRow:
    """One rank's summary; times in microseconds."""

    rank: int
    file: str
    wall_us: float
    steps: list[Step]
    step_us: float  # the typical step (steps.typical_step: elapsed, cold ones left out), or the window without steps
    gpu_busy_us: float
    gpu_utilization: float
    comm_us: float
    compute_us: float
    overlap_us: float
    idle_us: float
    straggler: bool = False
    collectives: dict[str, float] = field(default_factory=dict)  # time per collective (ncclAllReduce, ...)
    rank_from: str = "file order"  # distributedInfo, the file name, or the file order
    world_size: int = 0
    gpus: list[str] = field(default_factory=list)  # device names, to warn about mixed models
    step_starts: dict[int, int] = field(default_factory=dict)  # ProfilerStep number -> start (ns, raw clock)
    clock: str = ""  # how timestamps are written (relative to a base, or absolute)
    verdict: str = ""  # the rank's own verdict, from its typical step's critical path ("" where not read)
    bound_by: str = ""
    host_comm: bool = False  # its collectives ran on the host (gloo on the CPU): the times above are the CPU's
    arrivals: list[Arrival] = field(default_factory=list)  # at its host collectives, to match the other ranks'
    wait_us: float = 0.0  # its typical step's wait for other ranks at host collectives (set by job())
    copies: list[CopyRow] = field(default_factory=list)  # its copies per direction and its sets (set by Results)


def collective_kind(name: str) -> str:
    """The collective a kernel or op name says (AllReduce, ...), "" when it says none (ncclDevKernel_Generic)."""
    m = KIND.search(name)
    return KINDS[m.group(1).lower().replace("_", "")] if m else ""


def collective_name(kernel: str, kind: str = "") -> str:
    """ncclDevKernel_AllGather_RING_LL -> ncclAllGather (the library and the collective); a generic kernel's
    collective comes from `kind` (the op that launched it), else it is "Collective"."""
    low = kernel.lower()
    lib = "rccl" if "rccl" in low else "gloo" if "gloo" in low else "nccl"
    return lib + (collective_kind(kernel) or kind or "Collective")


def rank_row(a: Analysis, rank: int | None = None, file: str = "") -> RankRow:
    """The summary row of one rank (all events when rank is None: a file of one rank)."""
    t, x = a.trace, a.trace.x
    own = rank_events(a, rank)
    t0 = int(x.ts[own].min()) if own.any() else 0
    wall = float(int((x.ts + x.dur)[own].max()) - t0) / 1000 if own.any() else 0.0
    steps = step_list(t, t0, rank, device_callers(t, a.links.launcher))
    busy, comm, compute, overlap, devices, per_kind = _device_time(a, own)
    info = t.ranks[0] if rank is None and t.ranks else next((r for r in t.ranks if r.get("rank") == rank), {})
    typical = typical_step(steps).us if steps else wall
    starts = step_starts(t, rank)
    shift = round(float(info.get("shift_us", 0.0)) * 1000)  # a merged folder's events were moved on load
    host = host_comm(t, own, starts, shift) if not comm else None
    if host is not None and host.arrivals:  # no collective on a device: the host's are the job's
        comm, compute, overlap, per_kind = host.comm_us, host.compute_us, host.overlap_us, host.per_kind
    return RankRow(
        rank=int(rank if rank is not None else (t.tracks[0].rank if t.tracks else 0)),
        file=file,
        wall_us=wall,
        steps=steps,
        step_us=float(typical),
        gpu_busy_us=busy,
        gpu_utilization=busy / (wall * max(devices, 1)) if wall else 0.0,
        comm_us=comm,
        compute_us=compute,
        overlap_us=overlap,
        idle_us=max(wall * max(devices, 1) - busy, 0.0) if devices else 0.0,
        collectives=per_kind,
        rank_from=str(info.get("rank_from", "distributedInfo" if "rank" in info else "file order")),
        world_size=int(info["world_size"]) if isinstance(info.get("world_size"), int) else 0,
        gpus=sorted({str(d.get("name", "")) for d in t.devices if isinstance(d, dict)} - {""}),
        step_starts=starts,
        clock=str(info.get("clock", "")),
        host_comm=host is not None and bool(host.arrivals),
        arrivals=host.arrivals if host is not None else [],
    )


def rank_events(a: Analysis, rank: int | None) -> np.ndarray:
    """A mask of the rank's events, on its tracks that are not metadata (every one when rank is None)."""
    t, x = a.trace, a.trace.x
    mine = np.array([rank is None or tr.rank == rank for tr in t.tracks] or [False])
    real = np.array([tr.kind != "meta" for tr in t.tracks] or [False])
    return mine[x.track] & real[x.track] if t.n else np.zeros(0, bool)


def _device_time(a: Analysis, own: np.ndarray) -> tuple[float, float, float, float, int, dict[str, float]]:
    """Busy, collective, compute and overlapped time (unions per device, summed), the device count, and time per collective."""
    t, x = a.trace, a.trace.x
    busy_mask = own & of_cats(x.cat, BUSY_CATS)
    named = np.zeros(len(t.names) + 1, bool)  # collective kernels, by the one classifier (kernel_roles.py)
    named[[n for n in distinct(x.name[busy_mask]).tolist() if role(t.names[n]) == "collective"]] = True
    category = np.array([c.lower() == "collective_comm" for c in t.cat_names] or [False])
    is_comm = busy_mask & (named[x.name] | category[x.cat_str])
    (busy_ns, devices), (comm_ns, _), (compute_ns, _) = (
        device_union(t, m) for m in (busy_mask, is_comm, busy_mask & ~is_comm)
    )
    per_kind: dict[str, float] = {}
    events = np.flatnonzero(is_comm)
    launched = _launched_by(a, events)
    labels = [collective_name(t.names[n], k) for n, k in zip(x.name[events].tolist(), launched, strict=True)]
    keys, inverse = np.unique(np.array(labels, dtype=str), return_inverse=True)
    for label, us in zip(keys.tolist(), np.bincount(inverse, x.dur[events] / 1000).tolist(), strict=False):
        per_kind[label] = per_kind.get(label, 0.0) + us
    overlap_ns = comm_ns + compute_ns - busy_ns  # on each device: comm and compute at once
    busy, comm, compute, overlap = (v / 1000 for v in (busy_ns, comm_ns, compute_ns, overlap_ns))
    return busy, comm, compute, overlap, devices, per_kind


def _launched_by(a: Analysis, kernels: np.ndarray) -> list[str]:
    """For each collective kernel, the collective named by the nearest op above its launch (c10d::allreduce_,
    nccl:all_reduce ...): what a generic kernel (ncclDevKernel_Generic) does. One vectorized step per level."""
    t, x = a.trace, a.trace.x
    if not len(kernels):
        return []
    kind_of = np.array([collective_kind(n) for n in t.names] or [""], dtype=object)
    found = np.full(len(kernels), "", dtype=object)
    j = a.links.launcher[kernels].astype(np.int64)
    for _ in range(MAX_UP):
        live = j >= 0
        if not live.any():
            break
        here = np.where(live, kind_of[x.name[np.maximum(j, 0)]], "")
        new = (found == "") & (here != "")
        found[new] = here[new]
        j = np.where(live & (found == ""), a.nesting.parent[np.maximum(j, 0)], -1)
    return found.tolist()


@dataclass
class Alignment:
    """How the ranks' clocks were put side by side."""

    method: str  # "ProfilerStep#N" or "raw clock"
    shifts_us: dict[int, float] = field(default_factory=dict)  # per rank: how far its events were moved


def alignment(rows: list[RankRow]) -> Alignment:
    """Line the ranks up on the first ProfilerStep#N they all have (the lowest rank stays put); else the raw clock."""
    method, shifts = align_on_steps({r.rank: r.step_starts for r in rows})
    return Alignment(method, {r: ns / 1000 for r, ns in shifts.items()} if method != "raw clock" else {})


@dataclass
class Job:
    """What the ranks say together."""

    ranks: int
    slowest_rank: int
    step_us_min: float
    step_us_median: float
    step_us_max: float
    top_collective: str
    top_collective_us: float
    comm_share: float  # collective time / GPU busy, over all ranks
    hidden_share: float  # collective time hidden behind compute / collective time
    stragglers: list[int]
    verdict: str
    straggler_rule: str
    alignment: Alignment
    warnings: list[str] = field(default_factory=list)
    waited_for: int = -1  # the rank the others waited for at host collectives (arrived last), -1: none matched
    waited_for_us: float = 0.0  # the other ranks' typical step's wait for it
    waited_in: str = ""  # the collective they waited in the most


RULE = (
    f"a rank is a straggler when its typical step is {STRAGGLER_PCT:.0f}% longer than the median of the other "
    f"ranks', or its compute time {STRAGGLER_PCT:.0f}% above theirs while it spends less time in collectives "
    "(the others wait for it)"
)
HOST_RULE = (
    "collectives on the host are matched across the ranks (step, name, order): a rank is a straggler when it "
    f"arrives last and the others wait for it {STRAGGLER_PCT:.0f}% of their typical step or more"
)


def job(rows: list[RankRow], warnings: list[str] | None = None) -> Job:
    """Mark the stragglers in rows and say what the job shows."""
    warnings = list(warnings or [])
    aligned = alignment(rows)
    waited = _host_waits(rows)
    for r in rows:
        r.wait_us = waited.per_rank.get(r.rank, 0.0)
        others = [o for o in rows if o is not r]
        r.straggler = _arrived_last(r, waited, others) if waited.matched else _is_straggler(r, others)
    steps = [r.step_us for r in rows] or [0.0]
    slowest = max(rows, key=lambda r: r.step_us) if rows else None
    kinds: dict[str, float] = {}
    for r in rows:
        for k, us in r.collectives.items():
            kinds[k] = kinds.get(k, 0.0) + us
    top = max(kinds.items(), key=lambda kv: kv[1]) if kinds else ("", 0.0)
    comm, busy, hidden = (sum(getattr(r, f) for r in rows) for f in ("comm_us", "gpu_busy_us", "overlap_us"))
    stragglers = [r.rank for r in rows if r.straggler]
    return Job(
        ranks=len(rows),
        slowest_rank=slowest.rank if slowest else -1,
        step_us_min=min(steps),
        step_us_median=statistics.median(steps),
        step_us_max=max(steps),
        top_collective=top[0],
        top_collective_us=top[1],
        comm_share=comm / busy if busy else 0.0,
        hidden_share=hidden / comm if comm else 0.0,
        stragglers=stragglers,
        verdict=_host_verdict(rows, waited, hidden / comm if comm else 0.0)
        if waited.matched
        else _verdict(rows, stragglers, comm / busy if busy else 0.0, hidden / comm if comm else 0.0),
        straggler_rule=HOST_RULE if waited.matched else RULE,
        alignment=aligned,
        warnings=warnings + job_warnings(rows),
        waited_for=waited.for_rank,
        waited_for_us=waited.for_rank_us,
        waited_in=waited.collective,
    )


def _host_waits(rows: list[RankRow]) -> Waits:
    """Who waited for whom at the host collectives (nothing when no two ranks have any)."""
    arrivals = {r.rank: r.arrivals for r in rows if r.arrivals}
    return waits(arrivals) if len(arrivals) > 1 else Waits()


def _arrived_last(r: RankRow, waited: Waits, others: list[RankRow]) -> bool:
    """The rank the others waited for at the collectives, when that wait is a fair part of their step."""
    if r.rank != waited.for_rank or not others:
        return False
    return waited.for_rank_us >= STRAGGLER_PCT / 100 * statistics.median([o.step_us for o in others])


def _host_verdict(rows: list[RankRow], waited: Waits, hidden: float) -> str:
    """What a job of host collectives shows: who the others waited for, how long, and how much the ranks hid."""
    comm, wall = sum(r.comm_us for r in rows), sum(r.wall_us for r in rows)
    kinds = sorted({k for r in rows for k in r.collectives})
    where = (
        f"collectives run on the host ({', '.join(kinds)}): {comm / wall if wall else 0:.0%} of the ranks' time, "
        f"{hidden:.0%} of it beside their own ops"
    )
    late = next((r for r in rows if r.straggler), None)
    if late is None:
        return f"the ranks arrive together at the collectives (no rank waits {STRAGGLER_PCT:.0f}% of a step); {where}"
    others = [r for r in rows if r is not late]
    step = statistics.median([o.step_us for o in others])
    return (
        f"rank {late.rank} arrives last at the collectives: the other ranks wait {duration(waited.for_rank_us)} a "
        f"step for it in {waited.collective} ({waited.for_rank_us / step if step else 0:.0%} of their typical "
        f"step), so every rank's step lasts as long as its own; {where}"
    )


def _is_straggler(r: RankRow, others: list[RankRow]) -> bool:
    if not others:
        return False
    margin = 1 + STRAGGLER_PCT / 100
    step = statistics.median([o.step_us for o in others])
    if step and r.step_us >= margin * step:
        return True
    compute = statistics.median([o.compute_us for o in others])
    comm = statistics.median([o.comm_us for o in others])
    return bool(compute) and r.compute_us >= margin * compute and r.comm_us < comm


def _verdict(rows: list[RankRow], stragglers: list[int], comm_share: float, hidden: float) -> str:
    if not rows:
        return "no ranks"
    where = (
        f"collectives take {comm_share:.0%} of the GPU busy time, {hidden:.0%} of them hidden behind compute"
        if comm_share
        else "no collective kernels on the devices"
    )
    if not stragglers:
        if len(rows) < 2:
            return f"one rank; {where}"
        return f"the ranks are balanced: typical steps within {STRAGGLER_PCT:.0f}% of each other's median; {where}"
    worst = max((r for r in rows if r.straggler), key=lambda r: r.step_us)
    others = [r for r in rows if not r.straggler] or [r for r in rows if r is not worst]
    median = statistics.median([o.step_us for o in others])
    slower = 100 * (worst.step_us - median) / median if median else 0.0
    waited = _waited_in(worst, others)
    more = f" (also {', '.join(str(s) for s in stragglers if s != worst.rank)})" if len(stragglers) > 1 else ""
    one = len(others) == 1  # two ranks: the other rank and its GPU, not "the others" and "their GPUs"
    if slower >= STRAGGLER_PCT:
        than = "the other rank's" if one else "the median"
        first, who = f"rank {worst.rank}'s steps are {slower:.0f}% slower than {than}{more}", "the other rank"
        who += " waits" if one else "s wait"
    else:  # on the devices: the others' collectives wait for it, whether or not their steps do (the path says)
        pct = _pct(worst.compute_us, [o.compute_us for o in others])
        steps = f"its steps {abs(slower):.1f}% {'longer' if slower >= 0 else 'shorter'}"
        than = "the other rank" if one else "the others"
        first = f"rank {worst.rank} computes {pct} longer on its GPU than {than}{more} ({steps})"
        who = "its GPU waits" if one else "their GPUs wait"
    return f"{first}; {who} for it" + (f" in {waited}" if waited else "") + f"; {where}"


def _waited_in(worst: RankRow, others: list[RankRow]) -> str:
    """The collective where the other ranks spend the most more time than the straggler: where they wait."""
    kinds = {k for o in others for k in o.collectives} | set(worst.collectives)
    extra = {
        k: statistics.median([o.collectives.get(k, 0.0) for o in others]) - worst.collectives.get(k, 0.0) for k in kinds
    }
    best = max(extra.items(), key=lambda kv: kv[1], default=("", 0.0))
    return best[0] if best[1] > 0 else ""


def _pct(value: float, others: list[float]) -> str:
    median = statistics.median(others) if others else 0.0
    return f"{100 * (value - median) / median:.0f}%" if median else "more"


def job_warnings(rows: list[RankRow]) -> list[str]:
    """World size and GPU model mismatches, and ranks a world size says are missing."""
    out = []
    sizes = {r.world_size for r in rows if r.world_size}
    if len(sizes) > 1:
        out.append(f"the ranks disagree on the world size ({', '.join(str(s) for s in sorted(sizes))})")
    elif sizes:
        size = sizes.pop()
        missing = sorted(set(range(size)) - {r.rank for r in rows})
        if missing:
            shown = ", ".join(str(m) for m in missing[:8]) + (
                f", … ({len(missing)} in all)" if len(missing) > 8 else ""
            )
            out.append(f"{len(rows)} of the world size's {size} ranks are here; missing: {shown}")
    models = {m for r in rows for m in r.gpus}
    if len(models) > 1:
        out.append(f"the ranks ran on different GPU models ({', '.join(sorted(models))})")
    clocks = {r.clock for r in rows if r.clock}
    if len(clocks) > 1:
        out.append(
            f"the ranks write their clocks differently ({', '.join(sorted(clocks))}): timestamps may not line up"
        )
    return out
