"""Collectives that launched nothing: calls of a GPU run that moved no data on the device.

A process group of one rank has nothing to exchange: NCCL returns at once (or copies in place), so the trace shows
c10d::allreduce_ and nccl:all_reduce but no ncclKernel. The gloo backend given CUDA tensors copies them to the host,
reduces there and copies back: memcpys under the call, no collective kernel. Either way the run looks distributed
and is not, and the time is CPU time (and host copies), not communication. Found when the trace has device work,
collective calls, and not one collective kernel anywhere (kernel_roles.classify names them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..cats import BUSY_CATS, Cat, of_cats
from ..sets import distinct
from ..trace import TraceColumns
from .comm_names import COLLECTIVE_CALL
from .kernel_roles import role

NAMED = 4  # call names listed, the most first
MARKED = 10_000  # calls kept to mark on the timeline, at most


@dataclass
class HostCollectives:
    """Collective calls that launched no collective kernel (calls 0: there are none, or they did launch)."""

    calls: int = 0  # outermost collective calls
    cpu_us: float = 0.0  # their CPU time
    names: list[tuple[str, int]] = field(default_factory=list)  # (outermost call, count), the most first
    world_size: int = 0  # from distributedInfo (0: not recorded)
    backend: str = ""  # from distributedInfo, else the backend's span names (nccl:, gloo:)
    copies: int = 0  # memcpys launched beneath the calls (gloo on CUDA tensors: to the host and back)
    events: list[int] = field(default_factory=list)  # the outermost calls (the first MARKED)


def host_collectives(trace: TraceColumns, parent: np.ndarray | None, launcher: np.ndarray) -> HostCollectives:
    """The collective calls of a GPU run that launched no collective kernel anywhere (empty when there are none)."""
    x = trace.x
    busy = of_cats(x.cat, BUSY_CATS)
    if not busy.any() or _collective_kernels(trace, busy):
        return HostCollectives()
    calls = collective_calls(trace)
    if not len(calls):
        return HostCollectives()
    mine = np.zeros(trace.n + 1, bool)
    mine[calls] = True
    outer = calls[~_under(parent[calls], mine, parent)] if parent is not None else calls
    copies = np.flatnonzero(x.cat == int(Cat.MEMCPY))
    below = _under(launcher[copies], mine, parent) if parent is not None else copies[:0]
    info = trace.ranks[0] if trace.ranks else {}
    names, counts = np.unique(x.name[outer], return_counts=True)
    order = np.argsort(-counts, kind="stable")[:NAMED]
    return HostCollectives(
        calls=len(outer),
        cpu_us=float(x.dur[outer].sum()) / 1000.0,
        names=[(trace.names[int(names[k])], int(counts[k])) for k in order.tolist()],
        world_size=int(info["world_size"]) if isinstance(info.get("world_size"), int) else 0,
        backend=str(info.get("backend") or _backend(trace, calls)),
        copies=int(below.sum()),
        events=outer[:MARKED].tolist(),
    )


def _collective_kernels(trace: TraceColumns, busy: np.ndarray) -> bool:
    kernels = distinct(trace.x.name[busy & (trace.x.cat == int(Cat.KERNEL))])
    return any(role(trace.names[int(n)]) == "collective" for n in kernels.tolist())


def collective_calls(trace: TraceColumns) -> np.ndarray:
    """The host events a collective call records (c10d::..., record_param_comms, nccl:..., gloo:...)."""
    x = trace.x
    named = np.array([bool(COLLECTIVE_CALL.search(n)) for n in trace.names] or [False])
    host = of_cats(x.cat, (Cat.CPU_OP, Cat.USER_ANNOTATION))
    return np.flatnonzero(named[x.name] & host)


def _under(start: np.ndarray, mine: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Per start event: is it, or an event above it, one of mine? (-1 starts: no)"""
    up = start.astype(np.int64)
    hit = np.zeros(len(up), bool)
    for _ in range(64):
        live = up >= 0
        if not live.any():
            break
        hit |= live & mine[np.maximum(up, 0)]
        up = np.where(live, parent[np.maximum(up, 0)], -1)
    return hit


def _backend(trace: TraceColumns, calls: np.ndarray) -> str:
    spans = {trace.name_of(int(i)).partition(":")[0] for i in calls.tolist()}
    return next((b for b in ("nccl", "gloo", "ucc", "mpi", "xccl", "hccl") if b in spans), "")
