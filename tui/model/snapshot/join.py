"""A profiler trace and a snapshot of the same run, joined: each allocation of the trace's memory lane gets the
snapshot's frames (where it was allocated, in Python and C++), matched by address and time.

The profiler writes a `[memory]` sample when the caching allocator hands out a block (its Addr, and Bytes the
block's size) or takes one back; the snapshot's history records the same alloc with the bytes asked for. Both
clocks are the process's Unix time (the trace's ts, µs from baseTimeNanoseconds, and the entry's time_us), so
a sample and its entry fall microseconds apart. Matching: for each allocation sample, the snapshot's
allocation at the same address whose start is nearest; the clocks' offset is the median of those gaps; a
match counts when its gap is within TOLERANCE_NS of the offset and the block can hold the request. When
nothing matches, `reason` says why (the two do not overlap in time, no Addr in the trace, another run).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from ..analyses.memory import DEVICE_TYPES, MEMORY, NO_OP, device_name
from ..analysis import Analysis
from .frames import Namer
from .report import DeviceMemory, label_of

TOLERANCE_NS = 200_000  # how far from the clocks' offset a sample may be from its entry
SEARCH_NS = 10**9  # the farthest a candidate may be before the offset is known
SLACK = 2 << 20  # a block is at most its request rounded, or an unsplit free block (under 1 MB more)


@dataclass
class Joined:
    """One device's allocation samples in the trace, each with its snapshot allocation (-1: none)."""

    device: str
    samples: np.ndarray  # rows of trace.inst: the device's allocation samples (Bytes > 0), in time order
    alloc: np.ndarray  # per sample, its row in the snapshot's Allocations (-1: unmatched)
    offset_ns: int  # snapshot time minus trace time, the median over the matches
    reason: str  # why none matched ("" when some did)

    @property
    def matched(self) -> int:
        return int((self.alloc >= 0).sum())


def join(a: Analysis, memories: dict[int, DeviceMemory]) -> list[Joined]:
    """Per CUDA device of the trace with memory samples: its allocations matched to the snapshot's."""
    inst, t = a.trace.inst, a.trace
    if MEMORY not in t.names or not len(inst.ts):
        return []
    mine = (inst.name == t.names.index(MEMORY)) & (inst.bytes > 0) & (inst.dev_type == _cuda())
    out = []
    for dev in sorted(set(inst.dev_id[mine].tolist())):
        rows = np.flatnonzero(mine & (inst.dev_id == dev))
        rows = rows[np.argsort(inst.ts[rows], kind="stable")]
        mem = memories.get(int(dev))
        name = device_name(_cuda(), int(dev))
        if mem is None:
            out.append(Joined(name, rows, np.full(len(rows), -1), 0, f"the snapshot has no device {dev}"))
            continue
        out.append(_match(name, inst.addr[rows], inst.ts[rows], inst.bytes[rows], rows, mem))
    return out


def _cuda() -> int:
    return next(k for k, v in DEVICE_TYPES.items() if v == "cuda")


def _match(
    name: str, addr: np.ndarray, ts: np.ndarray, nbytes: np.ndarray, rows: np.ndarray, mem: DeviceMemory
) -> Joined:
    al = mem.allocs
    none = np.full(len(rows), -1, np.int64)
    if (addr < 0).all():
        return Joined(name, rows, none, 0, "the trace's memory samples carry no Addr (a trace from before 2022)")
    known = np.flatnonzero(al.alloc_entry >= 0)  # allocations the history saw made (their start is a time)
    if not len(known):
        return Joined(name, rows, none, 0, "the snapshot has no history of allocations to match")
    order = known[np.lexsort((al.start_ns[known], al.addr[known]))]
    cand = _nearest(order, al.addr, al.start_ns, addr, ts)
    gap = np.where(cand >= 0, al.start_ns[np.maximum(cand, 0)] - ts, 0)
    fits = (cand >= 0) & (np.abs(gap) < SEARCH_NS) & _holds(nbytes, al.size[np.maximum(cand, 0)])
    if not fits.any():
        return Joined(name, rows, none, 0, _why(ts, al.start_ns[known]))
    offset = int(np.median(gap[fits]))
    ok = fits & (np.abs(gap - offset) <= TOLERANCE_NS)
    return Joined(name, rows, np.where(ok, cand, -1), offset, "")


def _nearest(
    order: np.ndarray, addr: np.ndarray, start: np.ndarray, q_addr: np.ndarray, q_ts: np.ndarray
) -> np.ndarray:
    """For each query, the allocation at its address whose start is nearest its time (-1: none there)."""
    keys_a, keys_t = addr[order], start[order]
    lo = np.searchsorted(keys_a, q_addr, side="left")
    hi = np.searchsorted(keys_a, q_addr, side="right")
    out = np.full(len(q_addr), -1, np.int64)
    for k in np.flatnonzero(hi > lo).tolist():
        times = keys_t[lo[k] : hi[k]]
        j = int(np.searchsorted(times, q_ts[k]))
        best = min((i for i in (j - 1, j) if 0 <= i < len(times)), key=lambda i: abs(int(times[i]) - int(q_ts[k])))
        out[k] = order[lo[k] + best]
    return out


def _holds(block: np.ndarray, requested: np.ndarray) -> np.ndarray:
    """Whether a block of the trace's Bytes can be the one handed out for the snapshot's request."""
    return (block >= requested) & (block <= np.maximum(2 * requested, requested + SLACK))


def _why(ts: np.ndarray, starts: np.ndarray) -> str:
    """Why no sample found its allocation: the two cover different times, or share no address."""
    t0, t1, s0, s1 = int(ts.min()), int(ts.max()), int(starts.min()), int(starts.max())
    if t1 < s0 or s1 < t0:
        return (
            f"the trace's allocations ({_clock(t0)} to {_clock(t1)}) and the snapshot's history ({_clock(s0)} to "
            f"{_clock(s1)}) do not overlap in time: record the history while the profiler runs, in the same process"
        )
    return "no allocation of the trace is at an address and time of the snapshot's: not the same run"


def _clock(ns: int) -> str:
    """A Unix time in ns as UTC wall-clock time to the ms (a small relative time as it is)."""
    if ns < 10**15:
        return f"{ns / 1e6:.3f} ms"
    return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


@dataclass
class JoinRow:
    """The trace's allocations of one op from one frame of the snapshot: the op the profiler saw running, the
    frame the snapshot recorded."""

    frame: str
    op: str
    bytes: int  # the trace's Bytes (the blocks' sizes)
    count: int


def by_frame(a: Analysis, j: Joined, mem: DeviceMemory, namer: Namer) -> list[JoinRow]:
    """The matched samples grouped by (snapshot frame, trace op), the most bytes first."""
    from ..analyses.memory import sample_ops

    hit = j.alloc >= 0
    if not hit.any():
        return []
    rows, allocs = j.samples[hit], j.alloc[hit]
    ops = sample_ops(a, rows)
    x, names = a.trace.x, a.trace.names
    groups: dict[tuple[str, str], list[int]] = {}
    for op, alloc, nbytes in zip(ops.tolist(), allocs.tolist(), a.trace.inst.bytes[rows].tolist(), strict=True):
        key = (label_of(mem.allocs, alloc, namer), names[int(x.name[op])] if op >= 0 else NO_OP)
        entry = groups.setdefault(key, [0, 0])
        entry[0] += int(nbytes)
        entry[1] += 1
    out = [JoinRow(frame, op, v[0], v[1]) for (frame, op), v in groups.items()]
    return sorted(out, key=lambda r: (-r.bytes, r.frame, r.op))
