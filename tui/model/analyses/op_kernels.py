"""Each op's kernel sequence and its launch delays (HTA's get_aten_op_kernels_and_delay).

Every launch call belongs to the innermost aten op around it on its thread (as HTA finds it, but by the nesting,
never an op of another thread that happens to span it); a launch under no aten op belongs to the innermost CPU op
around it (a Triton kernel's, a custom op's), which HTA leaves out. An op's sequence is the device activities its
launches put on the device, in launch order: kernels, and the copies and sets HTA leaves out (nonzero's copy to
the host is what makes it wait). Graph launches are left out: one replays a whole graph. Per (op, sequence): how
many op calls launched exactly that, the mean delay from the op's start to its first launch call's start, and
from that call's start to its activity's start (HTA's runtime delay).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cats import Cat
from ..trace import TraceColumns
from .graphs.replay import graph_owner

MAX_UP = 64  # how far up the nesting a launch call's op is looked for


@dataclass
class OpKernels:
    """One op and one kernel sequence it launched: how often, its delays (mean, ns) and its device time per call."""

    op: str
    kernels: list[str]
    count: int
    op_to_launch_ns: float  # the op's start to its first launch call's start
    launch_to_start_ns: float  # that call's start to its activity's start
    device_ns: float  # the sequence's device time (the sum of its activities)
    example: int  # one op call that launched it (an event id)


def op_kernels(trace: TraceColumns, launcher: np.ndarray, parent: np.ndarray) -> list[OpKernels]:
    """Per (op, kernel sequence), the most frequent first (then the most device time)."""
    x = trace.x
    act = np.flatnonzero((launcher >= 0) & (graph_owner(trace) < 0))
    call = launcher[act].astype(np.int64)
    op = _ops(trace, call, parent)
    act, call, op = act[op >= 0], call[op >= 0], op[op >= 0]
    if not len(op):
        return []
    order = np.lexsort((x.ts[act], x.ts[call], op))
    act, call, op = act[order], call[order], op[order]
    firsts = np.flatnonzero(np.r_[True, op[1:] != op[:-1]])
    groups: dict[tuple[str, tuple[str, ...]], list[tuple[int, int, int, int]]] = {}
    for a, b in zip(firsts.tolist(), [*firsts[1:].tolist(), len(op)], strict=True):
        o, c, k = int(op[a]), int(call[a]), int(act[a])
        key = (trace.name_of(o), tuple(trace.name_of(int(i)) for i in act[a:b]))
        device = int(x.dur[act[a:b]].sum())
        groups.setdefault(key, []).append((int(x.ts[c] - x.ts[o]), int(x.ts[k] - x.ts[c]), device, o))
    rows = [_row(name, seq, calls) for (name, seq), calls in groups.items()]
    rows.sort(key=lambda r: (-r.count, -r.device_ns * r.count, r.op))
    return rows


def _row(name: str, seq: tuple[str, ...], calls: list[tuple[int, int, int, int]]) -> OpKernels:
    delays = np.array([c[:3] for c in calls], np.float64)
    mean = delays.mean(axis=0)
    return OpKernels(name, list(seq), len(calls), float(mean[0]), float(mean[1]), float(mean[2]), calls[0][3])


def _ops(trace: TraceColumns, call: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Per launch call: the innermost aten op above it, else the innermost CPU op (-1: none)."""
    x = trace.x
    is_aten = np.array([n.startswith("aten::") for n in trace.names] or [False])
    aten, any_op = np.full(len(call), -1), np.full(len(call), -1)
    j = parent[call].astype(np.int64)
    for _ in range(MAX_UP):
        live = j >= 0
        if not live.any():
            break
        k = np.maximum(j, 0)
        here = live & (x.cat[k] == int(Cat.CPU_OP))
        any_op = np.where(here & (any_op < 0), j, any_op)
        aten = np.where(here & is_aten[x.name[k]] & (aten < 0), j, aten)
        j = np.where(live & (aten < 0), parent[k], -1)
    return np.where(aten >= 0, aten, any_op)
