"""The roofline: per (op, input shapes, dtype), its FLOPs and bytes, achieved TFLOP/s and GB/s against the GPU's roofs.

Which calls make a row: every op with a model (flops.MODELS) and recorded shapes, outermost first: an op
under another modelled op is part of that op's work (aten::addmm under aten::linear is counted once, as
addmm: linear and matmul are wrappers, modelled only when nothing modelled runs beneath them). Device time
is all device work launched from beneath the call (Analysis.gpu_below, through the launch links); a trace
without device activity (a CPU capture) uses the ops' own durations. Device work no row covers is counted
and listed as not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..analysis import Analysis
from ..cats import BUSY_CATS, Cat
from ..load import args as lazy_args
from ..trace import Trace
from .flops import MODELS, WRAPPERS, OpArgs, Unmodelled, Work, model
from .ops import shape_label
from .peaks import Device, detect, gpu_name, peak

SAMPLE = 8  # calls of one (op, shapes) whose args are read; all of them when these disagree
NO_SHAPES = (
    "this trace has no input shapes; capture it with torch.profiler.profile(record_shapes=True), "
    "or with `tracetui profile`, which records them"
)
UNIT_WORDS = {"matrix": "tensor-core", "vector": "vector"}


@dataclass
class RooflineRow:
    """One (op, input shapes, dtype): totals over its calls (FLOPs, bytes, device time in us)."""

    name: str
    input_shapes: str
    dtype: str  # the roof's precision: bf16, fp32, ... (int: integer data, memory roof only)
    family: str  # gemm, attention, conv, elementwise, reduce, softmax, norm
    unit: str  # matrix (tensor / matrix cores) or vector
    count: int
    device_us: float
    flops: float
    bytes: float
    example: int  # one call, to show on the timeline
    bmnk: list[int] = field(default_factory=list)  # a GEMM's B, M, N, K
    trace_flops: float | None = None  # the flops arg of one call (with_flops), to check our count
    bound: str = ""  # compute or memory ('' without peaks)
    peak_tflops: float | None = None  # the compute roof of this unit and dtype
    roof_tflops: float | None = None  # the roof at this intensity: min(peak, intensity x bandwidth)
    pct_of_roof: float | None = None

    @property
    def intensity(self) -> float | None:
        return self.flops / self.bytes if self.bytes else None

    @property
    def tflops(self) -> float | None:
        return self.flops / (self.device_us * 1e6) if self.device_us > 0 else None

    @property
    def gbps(self) -> float | None:
        return self.bytes / (self.device_us * 1e3) if self.device_us > 0 else None


@dataclass
class NotModelled:
    """Device work no row covers, by the op that launched it ('(no op)' for work launched outside any op)."""

    name: str
    count: int
    device_us: float


@dataclass
class Roofline:
    rows: list[RooflineRow]
    device: Device | None  # None: the GPU is not in the table (or a CPU capture)
    gpu: str  # what the trace calls its device ('CPU' for a capture without device activity)
    has_shapes: bool
    on_cpu: bool
    not_modelled: list[NotModelled] = field(default_factory=list)

    @property
    def not_modelled_ops(self) -> int:
        return sum(n.count for n in self.not_modelled)

    @property
    def not_modelled_us(self) -> float:
        return sum(n.device_us for n in self.not_modelled)


def roofline(a: Analysis) -> Roofline:
    """The rows of a trace against the GPU its deviceProperties name (see with_device for another)."""
    t = a.trace
    on_cpu = not bool(np.isin(t.x.cat, [int(c) for c in BUSY_CATS]).any())
    gpu = "CPU" if on_cpu else gpu_name(t.devices)
    has_shapes = bool(len(t.shapes)) and bool((t.x.shape >= 0).any())
    if not has_shapes:
        return Roofline([], None, gpu, False, on_cpu)
    time_ns = t.x.dur if on_cpu else a.gpu_below
    chosen = _chosen(a, time_ns)
    rows, covered = _rows(t, chosen, time_ns)
    result = Roofline(rows, None, gpu, True, on_cpu, _not_modelled(a, covered, on_cpu))
    return with_device(result, None if on_cpu else detect(t.devices))


def _chosen(a: Analysis, time_ns: np.ndarray) -> np.ndarray:
    """The calls that make rows: modelled, with shapes and device time, not under another modelled call."""
    t, parent = a.trace, a.nesting.parent
    names = t.names
    modelled = np.array([n in MODELS for n in names] + [False])[t.x.name]
    wrapper = np.array([n in WRAPPERS for n in names] + [False])[t.x.name]
    cand = modelled & (t.x.cat == int(Cat.CPU_OP)) & (t.x.shape >= 0)
    primary = cand & ~wrapper
    under_primary, above_any = _ancestry(parent, primary, cand)
    keep = (primary & ~under_primary) | (cand & wrapper & ~under_primary & ~above_any)
    return np.flatnonzero(keep & (time_ns > 0))


def _ancestry(parent: np.ndarray, primary: np.ndarray, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per event: has it a primary ancestor; is it the ancestor of any candidate (by walking up, <= 256 levels)."""
    n = len(parent)
    under = np.zeros(n, bool)
    above = np.zeros(n, bool)
    idx = np.flatnonzero(cand)
    cur = parent[idx]
    for _ in range(256):
        live = cur >= 0
        if not live.any():
            break
        idx, cur = idx[live], cur[live]
        under[idx[primary[cur]]] = True
        above[cur] = True
        cur = parent[cur]
    return under, above


def _rows(t: Trace, chosen: np.ndarray, time_ns: np.ndarray) -> tuple[list[RooflineRow], np.ndarray]:
    """Rows per (op, shapes, types, arguments), in order of device time; and the calls they cover."""
    rows: list[RooflineRow] = []
    covered: list[np.ndarray] = []
    key = t.x.name[chosen].astype(np.int64) * (len(t.shapes) + 1) + t.x.shape[chosen]
    order = np.argsort(key, kind="stable")
    cuts = np.flatnonzero(np.diff(key[order])) + 1
    for group in np.split(chosen[order], cuts):
        for events, args, raw in _by_arguments(t, group):
            row = _row(t, events, args, raw, time_ns)
            if row is not None:
                rows.append(row)
                covered.append(events)
    rows.sort(key=lambda r: -r.device_us)
    return rows, np.concatenate(covered) if covered else np.empty(0, np.int64)


def _by_arguments(t: Trace, group: np.ndarray) -> list[tuple[np.ndarray, OpArgs, dict]]:
    """The calls of one (op, shapes) split by their dtypes and arguments (read for a sample, all if they differ)."""
    sample = group[:SAMPLE]
    read = events_args(t, sample)
    keys = [_args_key(read[int(e)]) for e in sample]
    if len(set(keys)) > 1 or (len(group) > SAMPLE and keys and _varies(t, group, keys[0])):
        read = events_args(t, group)
        keys = [_args_key(read[int(e)]) for e in group]
    else:
        keys = keys + [keys[0]] * (len(group) - len(sample)) if keys else []
    out = []
    for k in dict.fromkeys(keys):
        members = group[[i for i, kk in enumerate(keys) if kk == k]]
        raw = read[int(members[0])]
        out.append(
            (members, OpArgs(_list(raw, "Input Dims"), _list(raw, "Input type"), _list(raw, "Concrete Inputs")), raw)
        )
    return out


def _varies(t: Trace, group: np.ndarray, first: tuple) -> bool:
    """Do the calls past the sample disagree with it? Checked on the last few calls, which are cheap to read."""
    tail = group[-SAMPLE:]
    read = events_args(t, tail)
    return any(_args_key(read[int(e)]) != first for e in tail)


def _args_key(raw: dict) -> tuple:
    return (repr(raw.get("Input type")), repr(raw.get("Concrete Inputs")))


def _list(raw: dict, key: str) -> list:
    value = raw.get(key)
    return value if isinstance(value, list) else []


def _row(t: Trace, events: np.ndarray, args: OpArgs, raw: dict, time_ns: np.ndarray) -> RooflineRow | None:
    name = t.names[int(t.x.name[events[0]])]
    try:
        work: Work = model(name, args)
    except Unmodelled:
        return None
    n = len(events)
    flops_arg = raw.get("flops")
    return RooflineRow(
        name=name,
        input_shapes=shape_label(t.shapes[int(t.x.shape[events[0]])]),
        dtype=work.dtype,
        family=work.family,
        unit=work.unit,
        count=n,
        device_us=float(time_ns[events].sum()) / 1000,
        flops=float(work.flops) * n,
        bytes=float(work.bytes) * n,
        example=int(events[0]),
        bmnk=list(work.bmnk or ()),
        trace_flops=float(flops_arg) if isinstance(flops_arg, int | float) else None,
    )


def events_args(t: Trace, events: np.ndarray) -> dict[int, dict]:
    """The args of many events, each chunk of the file decoded once."""
    out: dict[int, dict] = {}
    chunk_of = t.x.chunk[events]
    for c in np.unique(chunk_of).tolist():
        start, end, _first, src = (int(v) for v in t.chunks[c])
        try:
            data = lazy_args._bytes(t, src, start, end)
        except OSError:
            data = b""
        for e in events[chunk_of == c].tolist():
            out[e] = _item_args(data, int(t.x.pos[e]))
    return out


def _item_args(data: bytes, pos: int) -> dict:
    try:
        item = lazy_args._decode(data, pos)
    except (ValueError, IndexError):
        return {}
    found = item.get("args") if isinstance(item, dict) else None
    return found if isinstance(found, dict) else {}


def _not_modelled(a: Analysis, covered: np.ndarray, on_cpu: bool) -> list[NotModelled]:
    """Device work (CPU captures: leaf ops' time) outside every row, by the op it was launched from."""
    t, parent = a.trace, a.nesting.parent
    inside = np.zeros(t.n + 1, bool)
    inside[covered] = True
    if on_cpu:
        ops = np.flatnonzero(t.x.cat == int(Cat.CPU_OP))
        kids = np.bincount(parent[ops][parent[ops] >= 0], minlength=t.n)
        units = ops[kids[ops] == 0]
        start, dur = units, t.x.dur[units]
    else:
        units = np.flatnonzero(np.isin(t.x.cat, [int(c) for c in BUSY_CATS]))
        start, dur = a.links.launcher[units], t.x.dur[units]
    hit, op = _covered_and_op(t, parent, inside, start)
    keep = ~hit
    return _by_op(t, op[keep], dur[keep])


def _covered_and_op(t: Trace, parent: np.ndarray, inside: np.ndarray, start: np.ndarray):
    """Per unit: is it at or under a covered call; the nearest CPU op at or above its start (-1: none)."""
    is_op = t.x.cat == int(Cat.CPU_OP)
    hit = np.zeros(len(start), bool)
    op = np.full(len(start), -1, np.int64)
    cur = start.astype(np.int64).copy()
    for _ in range(256):
        live = cur >= 0
        if not live.any():
            break
        at = np.maximum(cur, 0)
        hit |= live & inside[at]
        found = live & (op < 0) & is_op[at]
        op[found] = cur[found]
        cur = np.where(live, parent[at], -1)
    return hit, op


def _by_op(t: Trace, op: np.ndarray, dur: np.ndarray) -> list[NotModelled]:
    names = np.where(op >= 0, t.x.name[np.maximum(op, 0)], -1)
    out = []
    for name in np.unique(names).tolist():
        mask = names == name
        calls = len(np.unique(op[mask])) if name >= 0 else int(mask.sum())
        label = t.names[name] if name >= 0 else "(no op)"
        out.append(NotModelled(label, calls, float(dur[mask].sum()) / 1000))
    return sorted(out, key=lambda n: -n.device_us)


def with_device(r: Roofline, device: Device | None) -> Roofline:
    """The same rows measured against another device's roofs (None: rates only, no bound or percentage)."""
    return replace(r, device=device, rows=[_against(row, device) for row in r.rows])


def _against(row: RooflineRow, device: Device | None) -> RooflineRow:
    if device is None or row.tflops is None:
        return replace(row, bound="", peak_tflops=None, roof_tflops=None, pct_of_roof=None)
    compute = peak(device, row.unit, row.dtype)
    bw = device.peak_gbps
    memory_roof = row.intensity * bw / 1000 if row.intensity is not None and bw else None
    roofs = [r for r in (compute, memory_roof) if r is not None]
    if not roofs:
        return replace(row, bound="", peak_tflops=None, roof_tflops=None, pct_of_roof=None)
    roof = min(roofs)
    bound = "compute" if compute is not None and roof == compute else "memory"
    return replace(row, bound=bound, peak_tflops=compute, roof_tflops=roof, pct_of_roof=100 * row.tflops / roof)


def ridge(device: Device, unit: str, dtype: str) -> float | None:
    """The intensity (FLOP/byte) where the compute roof of a unit and dtype meets the memory roof."""
    compute = peak(device, unit, dtype)
    return compute * 1000 / device.peak_gbps if compute and device.peak_gbps else None
