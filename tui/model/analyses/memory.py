"""Memory from the allocator's `[memory]` samples (profile_memory=True): per device, the curve of
allocated and reserved bytes, the peak and the op running at it, the ops that allocate the most, and
what is still allocated when the window ends (candidate leaks).

The peaks are the maxima of the samples' own `Total Allocated` and `Total Reserved` per (Device
Type, Device Id). Traces from before those fields (2021) get the running sum of `Bytes` from the
start of the window instead, and say so. A sample's op is the innermost CPU op on its thread that
spans it; a sample outside every op belongs to "(no op)".
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field

import numpy as np

from ..analysis import Analysis
from ..cats import Cat
from ..sets import distinct
from ..steps import STEP_NAME
from .code import frame_kind
from .details import python_stack

MEMORY = "[memory]"
_LINE = re.compile(r"^(?:.*/(?:site|dist)-packages/)?(?P<top>[^/<(]+?)(?:\.py)?[/(].*\(\d+\): ")
NOT_CODE = frozenset({"torch", "multiprocessing", "threading", "runpy"})
NO_OP = "(no op)"
TOP = 10
# torch's DeviceType numbers, as the profiler writes them (ROCm writes its GPUs as cuda).
DEVICE_TYPES = {0: "cpu", 1: "cuda", 6: "hip", 9: "xla", 12: "xpu", 13: "mps", 15: "hpu", 19: "mtia", 20: "privateuse1"}


@dataclass
class MemOp:
    """An op's allocations (or what it left allocated) from one place: bytes, how many, and where.

    module and line are the innermost nn.Module and source line above each of these allocations ("" without
    Python frames): the same op from two kinds of layer, or two lines, is two rows. module names the one
    instance (`Linear_3`) or the class and how many instances (`Linear ×4`).
    """

    op: str
    bytes: int
    count: int
    stack: list[str] = field(default_factory=list)  # your frames above the first of them, outermost first
    module: str = ""
    line: str = ""


@dataclass
class DeviceMemory:
    device: str  # cpu, cuda:0, ...
    peak_allocated_bytes: int
    peak_reserved_bytes: int  # -1: the trace does not write Total Reserved
    peak_ts_us: float  # from the trace's first event (its origin), as every time shown
    peak_op: str
    peak_top_op: str  # the outermost op around peak_op (the model's op that was running)
    allocs: int
    frees: int
    top_ops: list[MemOp]
    leaks: list[MemOp]  # allocations never freed in the window, by op (empty without Addr)
    leaked_bytes: int
    source: str  # "Total Allocated", or "running sum of Bytes" (older traces)


@dataclass
class Curve:
    """One device's allocated and reserved bytes after each sample (a step curve), for the timeline."""

    device: str
    ts: np.ndarray  # ns, raw clock
    allocated: np.ndarray
    reserved: np.ndarray  # -1 where unknown
    op: np.ndarray  # event index of each sample's op (-1: none)
    index: np.ndarray  # the samples (rows of trace.inst)


def samples(a: Analysis) -> np.ndarray:
    """Indices (into trace.inst) of the sound [memory] samples, in time order."""
    t = a.trace
    if MEMORY not in t.names or not len(t.inst.ts):
        return np.zeros(0, np.int64)
    inst = t.inst
    sel = np.flatnonzero((inst.name == t.names.index(MEMORY)) & (inst.bytes != 0) & (inst.dev_type >= 0))
    return sel[np.argsort(inst.ts[sel], kind="stable")]


def device_name(dev_type: int, dev_id: int) -> str:
    kind = DEVICE_TYPES.get(dev_type, f"device{dev_type}")
    return kind if kind == "cpu" or dev_id < 0 else f"{kind}:{dev_id}"


def curves(a: Analysis) -> list[Curve]:
    """The step curve of each device, CPU first."""
    inst, sel = a.trace.inst, samples(a)
    ops = sample_ops(a, sel)
    out = []
    keys = sorted({(int(d), int(k)) for d, k in zip(inst.dev_type[sel], inst.dev_id[sel], strict=True)})
    for dev_type, dev_id in keys:
        on = (inst.dev_type[sel] == dev_type) & (inst.dev_id[sel] == dev_id)
        idx = sel[on]
        totals = inst.total_alloc[idx]
        allocated = totals if len(idx) and (totals >= 0).all() else np.cumsum(inst.bytes[idx])
        name = device_name(dev_type, dev_id)
        out.append(Curve(name, inst.ts[idx], allocated, inst.total_reserved[idx], ops[on], idx))
    return out


def sample_ops(a: Analysis, sel: np.ndarray) -> np.ndarray:
    """The innermost CPU op on each sample's thread that spans its time (-1: none).

    The op that starts last before the sample, else its nearest enclosing op, and so on up: one
    vectorized step per nesting level, never a loop per sample.
    """
    x, inst = a.trace.x, a.trace.inst
    ops = np.flatnonzero(x.cat == int(Cat.CPU_OP))
    ops = ops[np.lexsort((x.ts[ops], x.track[ops]))]
    out = np.full(len(sel), -1, np.int64)
    if not len(ops) or not len(sel):
        return out
    base = int(x.ts[ops].min())
    keys = x.track[ops].astype(np.int64) << 40 | (x.ts[ops] - base)
    query = inst.track[sel].astype(np.int64) << 40 | np.maximum(inst.ts[sel] - base, 0)
    pos = np.searchsorted(keys, query, side="right") - 1
    cand = np.where(pos >= 0, ops[np.maximum(pos, 0)], -1)
    cand[(cand >= 0) & (x.track[np.maximum(cand, 0)] != inst.track[sel])] = -1
    ts, end = inst.ts[sel], a.end
    open_ = cand >= 0
    open_[open_] = end[cand[open_]] < ts[open_]  # ended before the sample: look further up
    while open_.any():
        cand[open_] = _enclosing_ops(a, cand[open_])
        still = cand >= 0
        open_ &= still
        open_[open_] = end[cand[open_]] < ts[open_]
    return cand


def _enclosing_ops(a: Analysis, events: np.ndarray) -> np.ndarray:
    """The nearest CPU op enclosing each event (-1: none): up the nesting, one vectorized step per level."""
    parent, cat = a.nesting.parent, a.trace.x.cat
    up = parent[events].astype(np.int64)
    pending = up >= 0
    pending[pending] = cat[up[pending]] != int(Cat.CPU_OP)
    while pending.any():
        up[pending] = parent[up[pending]]
        pending &= up >= 0
        pending[pending] = cat[up[pending]] != int(Cat.CPU_OP)
    return up


def memory_report(a: Analysis, cs: list[Curve] | None = None) -> list[DeviceMemory]:
    """Per device: the peak and its op, allocation counts, the top allocating ops and candidate leaks."""
    return [_device(a, c, a.trace.origin) for c in (curves(a) if cs is None else cs)]


def _device(a: Analysis, c: Curve, t0: int) -> DeviceMemory:
    inst, mine = a.trace.inst, c.index
    nbytes = inst.bytes[mine]
    k = int(np.argmax(c.allocated)) if len(c.allocated) else 0
    from_totals = bool(len(mine)) and bool((inst.total_alloc[mine] >= 0).all())
    reserved = int(c.reserved.max()) if len(c.reserved) and (c.reserved >= 0).all() else -1
    names = np.where(c.op >= 0, a.trace.x.name[np.maximum(c.op, 0)], -1)  # name ids; -1: no op
    unfreed = _unfreed(inst.addr[mine], nbytes)
    return DeviceMemory(
        device=c.device,
        peak_allocated_bytes=int(c.allocated[k]) if len(c.allocated) else 0,
        peak_reserved_bytes=reserved,
        peak_ts_us=(int(c.ts[k]) - t0) / 1000 if len(c.ts) else 0.0,
        peak_op=_op_name(a, int(c.op[k])) if len(c.op) else NO_OP,
        peak_top_op=_op_name(a, _outermost(a, int(c.op[k]))) if len(c.op) else NO_OP,
        allocs=int((nbytes > 0).sum()),
        frees=int((nbytes < 0).sum()),
        top_ops=_by_op(a, names, c.op, nbytes > 0, nbytes),
        leaks=_by_op(a, names, c.op, unfreed, nbytes),
        leaked_bytes=int(nbytes[unfreed].sum()),
        source="Total Allocated" if from_totals else "running sum of Bytes",
    )


def _outermost(a: Analysis, j: int) -> int:
    """The outermost CPU op above event j (j itself when none); a ProfilerStep#N (an op in 2021 traces) is not one."""
    top, cat, parent = j, a.trace.x.cat, a.nesting.parent
    while j >= 0:
        if cat[j] == int(Cat.CPU_OP) and not STEP_NAME.match(a.trace.name_of(j)):
            top = j
        j = int(parent[j])
    return top


def _op_name(a: Analysis, j: int) -> str:
    return a.trace.name_of(j) if j >= 0 else NO_OP


def _unfreed(addr: np.ndarray, nbytes: np.ndarray) -> np.ndarray:
    """Allocations whose address is not freed later in the window (none can be told without Addr)."""
    out = np.zeros(len(addr), bool)
    if not len(addr) or (addr < 0).all():
        return out
    order = np.lexsort((np.arange(len(addr)), addr))  # by address, then time
    same_next = np.zeros(len(order), bool)
    same_next[:-1] = addr[order[1:]] == addr[order[:-1]]
    freed_next = np.zeros(len(order), bool)
    freed_next[:-1] = same_next[:-1] & (nbytes[order[1:]] < 0)
    out[order] = (nbytes[order] > 0) & (addr[order] >= 0) & ~freed_next
    return out


def _by_op(a: Analysis, names: np.ndarray, ops: np.ndarray, mask: np.ndarray, nbytes: np.ndarray) -> list[MemOp]:
    """Bytes and count per (op, innermost module, innermost line of your code), the largest first."""
    if not mask.any():
        return []
    module, line = innermost_sites(a, ops[mask])
    kind = _module_kinds(a)
    name = a.trace.x.name
    site = np.stack(
        [names[mask].astype(np.int64), np.where(module >= 0, kind[_ids(name, module)], -1), _ids(name, line)], 1
    )
    keys, inverse = np.unique(site, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    total = np.bincount(inverse, nbytes[mask].astype(np.float64))
    count = np.bincount(inverse)
    first = np.full(len(keys), -1, np.int64)
    first[inverse[::-1]] = ops[mask][::-1]
    best = np.argsort(-total, kind="stable")[:TOP]
    return [
        MemOp(
            a.trace.names[int(keys[g, 0])] if keys[g, 0] >= 0 else NO_OP,
            int(total[g]),
            int(count[g]),
            python_stack(a, int(first[g])) if first[g] >= 0 else [],
            _module_label(a, module[inverse == g]),
            a.trace.names[int(keys[g, 2])] if keys[g, 2] >= 0 else "",
        )
        for g in best.tolist()
    ]


def _ids(name: np.ndarray, events: np.ndarray) -> np.ndarray:
    """The name id of each event (-1 stays -1)."""
    return np.where(events >= 0, name[np.maximum(events, 0)], -1).astype(np.int64)


_INSTANCE = re.compile(r"_\d+$")


def _module_kinds(a: Analysis) -> np.ndarray:
    """Per name id, an id of its nn.Module class (`nn.Module: Linear_3` and `_4` alike): rows group by class."""
    classes: dict[str, int] = {}
    ids = [classes.setdefault(_INSTANCE.sub("", n), len(classes)) for n in a.trace.names]
    return np.array(ids + [-1], np.int64)


def _module_label(a: Analysis, frames: np.ndarray) -> str:
    """The module of a row's allocations: its one instance (`Linear_3`), or its class and how many (`Linear ×26`)."""
    ids = distinct(a.trace.x.name[frames[frames >= 0]])
    names = sorted(a.trace.names[int(n)].removeprefix("nn.Module: ") for n in ids)
    if len(names) <= 1:
        return names[0] if names else ""
    return f"{_INSTANCE.sub('', names[0])} ×{len(names)}"


def innermost_sites(a: Analysis, events: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per event: the nearest nn.Module frame and the nearest frame of your code above it (-1: none).

    Up the nesting one vectorized step per level, as _enclosing_ops.
    """
    x, parent = a.trace.x, a.nesting.parent
    kinds = np.array([_site_kind(n) for n in a.trace.names] + [0], np.int8)
    python = x.cat == int(Cat.PYTHON)
    module = np.full(len(events), -1, np.int64)
    line = np.full(len(events), -1, np.int64)
    up = np.where(events >= 0, parent[np.maximum(events, 0)], -1).astype(np.int64)
    while True:
        live = up >= 0
        if not live.any():
            break
        j = np.maximum(up, 0)
        kind = np.where(live & python[j], kinds[x.name[j]], 0)
        module = np.where((module < 0) & (kind == 1), up, module)
        line = np.where((line < 0) & (kind == 2), up, line)
        up = np.where(live & ((module < 0) | (line < 0)), parent[j], -1)
    return module, line


def _site_kind(name: str) -> int:
    """1: an nn.Module frame, 2: a source line that is not torch's or the standard library's, 0: anything else.

    A model library's line (transformers/models/bert/modeling_bert.py(123): forward) says which layer
    called, where the innermost line of your own code is often only the training loop.
    """
    kind = frame_kind(name)
    if kind == "module":
        return 1
    m = _LINE.match(name)
    if kind == "user" or (m and m["top"] not in sys.stdlib_module_names and m["top"] not in NOT_CODE):
        return 2
    return 0


@dataclass
class MemoryAt:
    """A device's memory at a moment: what is allocated (and reserved), and the sample that set it."""

    device: str
    allocated: int
    reserved: int  # -1: unknown
    op: str  # the op of the last allocation or free before that moment
    change: int  # its bytes (+ allocation, - free)


def memory_at(a: Analysis, cs: list[Curve], t: int) -> list[MemoryAt]:
    """Each device's memory at time t (ns), for devices with a sample before t."""
    out = []
    for c in cs:
        k = int(np.searchsorted(c.ts, t, side="right")) - 1
        if k >= 0:
            change = int(a.trace.inst.bytes[c.index[k]])
            out.append(MemoryAt(c.device, int(c.allocated[k]), int(c.reserved[k]), _op_name(a, int(c.op[k])), change))
    return out
