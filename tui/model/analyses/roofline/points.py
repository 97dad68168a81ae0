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

from ...analysis import Analysis
from ...cats import BUSY_CATS, Cat, of_cats
from ...load import args as lazy_args
from ...sets import distinct
from ...trace import TraceColumns
from ..ops import shape_label
from .flops import MODELS, WRAPPERS, OpArgs, Unmodelled, Work, model
from .links import link_kind, link_of
from .peaks import Device, detect, gpu_name, peak
from .units import roof_of, with_kernel_units

SAMPLE = 4  # the first and last calls of one (op, shapes) whose args are read; all of them when these disagree
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
    roof_dtype: str = ""  # the precision of the roof measured against: dtype, or tf32 for fp32 GEMMs on tensor cores
    roof_unit: str = (
        ""  # the unit of that roof: unit, or vector for a GEMM its kernels ran on the CUDA cores (units.py)
    )
    kernel_unit: str = ""  # the unit its kernels' names say they ran on (matrix, vector; "" where they do not say)
    kernel_dtype: str = ""  # ... and the dtype of that math
    link: str = ""  # host or peer: its device time is mostly copies over that link, its roof the link (links.py)
    link_bytes: float = 0.0  # ... the bytes that crossed it (the rest of bytes stayed in the GPU's memory)
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
class KernelShare:
    """The part of one row's calls that ran as one kernel name: calls (summed over its launches, each the
    kernel's duration over its call's device time, so a call's launches add up to 1) and their device time."""

    kernel: str
    row: int  # index in Roofline.rows
    calls: float
    device_us: float


@dataclass
class Attribution:
    """Which row each modelled call is in, and which call each piece of device work is part of: the lookups of
    the details panel (int64 / float64 arrays kept as bytes: plain data, read with np.frombuffer)."""

    calls: bytes = b""  # the calls the rows cover, sorted
    call_row: bytes = b""  # each call's row (index in Roofline.rows)
    call_us: bytes = b""  # each call's device time (a CPU capture: its duration)
    work: bytes = b""  # the device work launched under those calls, sorted
    work_call: bytes = b""  # its call (index in calls)
    work_share: bytes = b""  # its duration over its call's device time
    kernels: list[KernelShare] = field(default_factory=list)


@dataclass
class Roofline:
    rows: list[RooflineRow]
    device: Device | None  # None: the GPU is not in the table (or a CPU capture)
    gpu: str  # what the trace calls its device ('CPU' for a capture without device activity)
    has_shapes: bool
    on_cpu: bool
    not_modelled: list[NotModelled] = field(default_factory=list)
    attribution: Attribution = field(default_factory=Attribution)

    @property
    def not_modelled_ops(self) -> int:
        return sum(n.count for n in self.not_modelled)

    @property
    def not_modelled_us(self) -> float:
        return sum(n.device_us for n in self.not_modelled)


def roofline(a: Analysis) -> Roofline:
    """The rows of a trace against the GPU its deviceProperties name (see with_device for another)."""
    t = a.trace
    on_cpu = not bool(of_cats(t.x.cat, BUSY_CATS).any())
    gpu = "CPU" if on_cpu else gpu_name(t.devices)
    has_shapes = bool(len(t.shapes)) and bool((t.x.shape >= 0).any())
    if not has_shapes:
        return Roofline([], None if on_cpu else detect(t.devices), gpu, False, on_cpu)
    time_ns = t.x.dur if on_cpu else a.gpu_below
    chosen = _chosen(a, time_ns)
    rows, covered, row_of = _rows(t, chosen, time_ns)
    shares = _attribution(a, covered, row_of, time_ns, on_cpu)
    rows = with_links(t, with_kernel_units(rows, shares.kernels), shares)
    result = Roofline(rows, None, gpu, True, on_cpu, _not_modelled(a, covered, on_cpu), shares)
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


def _rows(t: TraceColumns, chosen: np.ndarray, time_ns: np.ndarray) -> tuple[list[RooflineRow], np.ndarray, np.ndarray]:
    """Rows per (op, shapes, types, arguments), in order of device time; the calls they cover, and each one's row."""
    key = t.x.name[chosen].astype(np.int64) * (len(t.shapes) + 1) + t.x.shape[chosen]
    order = np.argsort(key, kind="stable")
    groups = np.split(chosen[order], np.flatnonzero(np.diff(key[order])) + 1) if len(chosen) else []
    read = events_args(t, np.concatenate([_probe(g) for g in groups]) if groups else chosen)
    mixed = [g for g in groups if len({_args_key(read[int(e)]) for e in _probe(g)}) > 1]
    if mixed:
        read |= events_args(t, np.concatenate(mixed))
    mixed_ids = {id(g) for g in mixed}
    made: list[tuple[RooflineRow, np.ndarray]] = []
    for group in groups:
        for events, raw in _by_arguments(group, read, id(group) in mixed_ids):
            row = _row(t, events, raw, time_ns)
            if row is not None:
                made.append((row, events))
    made.sort(key=lambda m: -m[0].device_us)
    if not made:
        return [], np.empty(0, np.int64), np.empty(0, np.int64)
    row_of = np.repeat(np.arange(len(made)), [len(events) for _, events in made])
    return [row for row, _ in made], np.concatenate([events for _, events in made]), row_of


def _probe(group: np.ndarray) -> np.ndarray:
    """The calls of one (op, shapes) whose args are read first: the first and the last few."""
    return group if len(group) <= 2 * SAMPLE else np.concatenate([group[:SAMPLE], group[-SAMPLE:]])


def _by_arguments(group: np.ndarray, read: dict[int, dict], mixed: bool) -> list[tuple[np.ndarray, dict]]:
    """The calls of one (op, shapes) split by their dtypes and arguments (all read when the probe saw two kinds)."""
    if not mixed:
        return [(group, read[int(group[0])])]
    keys = [_args_key(read[int(e)]) for e in group.tolist()]
    out = []
    for k in dict.fromkeys(keys):
        members = group[[i for i, kk in enumerate(keys) if kk == k]]
        out.append((members, read[int(members[0])]))
    return out


def _args_key(raw: dict) -> tuple:
    return (repr(raw.get("Input type")), repr(raw.get("Concrete Inputs")))


def _list(raw: dict, key: str) -> list:
    value = raw.get(key)
    return value if isinstance(value, list) else []


def _row(t: TraceColumns, events: np.ndarray, raw: dict, time_ns: np.ndarray) -> RooflineRow | None:
    name = t.names[int(t.x.name[events[0]])]
    args = OpArgs(_list(raw, "Input Dims"), _list(raw, "Input type"), _list(raw, "Concrete Inputs"))
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


def events_args(t: TraceColumns, events: np.ndarray) -> dict[int, dict]:
    """The args of many events, each chunk of the file read and split once."""
    out: dict[int, dict] = {}
    chunk_of = t.x.chunk[events]
    for c in distinct(chunk_of).tolist():
        items = lazy_args.chunk_events(t, c)
        for e in events[chunk_of == c].tolist():
            out[e] = _item_args(t, items, e)
    return out


def _item_args(t: TraceColumns, items: tuple, e: int) -> dict:
    """One event's args from its chunk's items (a chunk that needed repairs: the slow path, event by event)."""
    pos = int(t.x.pos[e])
    item = lazy_args.read_event(items[pos]) if pos < len(items) else None
    if not isinstance(item, dict):
        return lazy_args.event_args(t, e)
    return lazy_args.args_of(item)


def _attribution(a: Analysis, calls: np.ndarray, row_of: np.ndarray, time_ns: np.ndarray, on_cpu: bool) -> Attribution:
    """Each modelled call's row and time; each piece of device work launched beneath one (through the launch links,
    as Analysis.gpu_below counts it) with its call and its share of the call's device time, and those shares
    summed per (kernel name, row). A call's FLOPs and bytes go to its device work in proportion to duration."""
    order = np.argsort(calls, kind="stable")
    calls, row_of = calls[order].astype(np.int64), row_of[order].astype(np.int64)
    call_ns = time_ns[calls].astype(np.float64)
    work = np.empty(0, np.int64) if on_cpu else np.flatnonzero(a.links.launcher >= 0)
    start = np.empty(0, np.int64) if on_cpu else a.links.launcher[work].astype(np.int64)
    owner = _owner(a.nesting.parent, calls, start, a.trace.n)
    work, owner = work[owner >= 0], owner[owner >= 0]
    dur = a.trace.x.dur[work].astype(np.float64)
    share = dur / call_ns[owner]
    return Attribution(
        calls.tobytes(),
        row_of.tobytes(),
        (call_ns / 1000).tobytes(),
        work.astype(np.int64).tobytes(),
        owner.astype(np.int64).tobytes(),
        share.tobytes(),
        _kernel_shares(a.trace, work, row_of[owner], share, dur),
    )


def _owner(parent: np.ndarray, calls: np.ndarray, start: np.ndarray, n: int) -> np.ndarray:
    """Per launch: the call (index in the sorted calls) at or above its launching event, -1 for none; the calls
    are never nested in one another, so the first one met walking up is the only one."""
    pos = np.full(n + 1, -1, np.int64)
    pos[calls] = np.arange(len(calls))
    owner = np.full(len(start), -1, np.int64)
    cur = start.copy()
    for _ in range(256):
        live = (cur >= 0) & (owner < 0)
        if not live.any():
            break
        at = np.maximum(cur, 0)
        owner = np.where(live, pos[at], owner)
        cur = np.where(live, parent[at], -1)
    return owner


def _kernel_shares(
    t: TraceColumns, work: np.ndarray, row: np.ndarray, share: np.ndarray, dur: np.ndarray
) -> list[KernelShare]:
    """The shares of calls and the device time per (kernel name, row)."""
    if not len(work):
        return []
    key = t.x.name[work].astype(np.int64) * (int(row.max()) + 1) + row
    keys, group = np.unique(key, return_inverse=True)
    calls = np.bincount(group, weights=share)
    us = np.bincount(group, weights=dur) / 1000
    base = int(row.max()) + 1
    return [
        KernelShare(t.names[int(k // base)], int(k % base), float(c), float(u))
        for k, c, u in zip(keys.tolist(), calls.tolist(), us.tolist(), strict=True)
    ]


def with_links(t: TraceColumns, rows: list[RooflineRow], shares: Attribution) -> list[RooflineRow]:
    """The rows whose device time is mostly host-device or peer copies, marked with that link, with the bytes that
    crossed it: the copies' own `bytes` args (the copy op's model counts the data read and written, as a copy inside
    HBM moves it; over a link it crosses once, so half of that where a copy records no bytes). The row's other calls
    (a DtoD copy of the same shape) keep the model's bytes, measured against the memory."""
    work = np.frombuffer(shares.work, np.int64)
    calls = np.frombuffer(shares.work_call, np.int64)
    copies = t.x.cat[work] == int(Cat.MEMCPY)
    if not copies.any():
        return rows
    work, calls = work[copies], calls[copies]
    row = np.frombuffer(shares.call_row, np.int64)[calls]
    kinds = {int(n): link_kind(t.names[int(n)]) for n in distinct(t.x.name[work]).tolist()}
    kind = np.array([kinds[int(n)] for n in t.x.name[work].tolist()])
    out = list(rows)
    for k, r in enumerate(rows):
        for link in ("host", "peer"):
            hit = (row == k) & (kind == link)
            if 2 * int(t.x.dur[work[hit]].sum()) >= r.device_us * 1000 > 0:
                out[k] = _link_row(t, r, link, work[hit], len(distinct(calls[hit])))
    return out


def _link_row(t: TraceColumns, r: RooflineRow, link: str, copies: np.ndarray, calls: int) -> RooflineRow:
    size = t.x.nbytes[copies]
    share = min(calls / r.count, 1.0)  # of the row's calls, those that copied over the link
    crossed = float(size.sum()) if (size >= 0).all() else r.bytes * share / 2
    return replace(r, link=link, link_bytes=crossed, bytes=crossed + r.bytes * (1 - share))


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
        units = np.flatnonzero(of_cats(t.x.cat, BUSY_CATS))
        start, dur = a.links.launcher[units], t.x.dur[units]
    hit, op = _covered_and_op(t, parent, inside, start)
    keep = ~hit
    return _by_op(t, op[keep], dur[keep])


def _covered_and_op(t: TraceColumns, parent: np.ndarray, inside: np.ndarray, start: np.ndarray):
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


def _by_op(t: TraceColumns, op: np.ndarray, dur: np.ndarray) -> list[NotModelled]:
    names = np.where(op >= 0, t.x.name[np.maximum(op, 0)], -1)
    out = []
    for name in distinct(names).tolist():
        mask = names == name
        calls = len(distinct(op[mask])) if name >= 0 else int(mask.sum())
        label = t.names[name] if name >= 0 else "(no op)"
        out.append(NotModelled(label, calls, float(dur[mask].sum()) / 1000))
    return sorted(out, key=lambda n: -n.device_us)


def with_device(r: Roofline, device: Device | None) -> Roofline:
    """The same rows measured against another device's roofs (None: rates only, no bound or percentage)."""
    return replace(r, device=device, rows=[_against(row, device) for row in r.rows])


def _against(row: RooflineRow, device: Device | None) -> RooflineRow:
    """Bound and % of roof as TraceLens has them: the roof's time for this work, max(FLOPs / peak, bytes / bandwidth),
    over the time it took; compute-bound when the compute time is the larger.

    The roof is that of the unit and dtype the row ran on (units.py: its kernels' names, or the model's unit).
    """
    bare = replace(row, bound="", roof_dtype="", roof_unit="", peak_tflops=None, roof_tflops=None, pct_of_roof=None)
    if device is None or row.device_us <= 0:
        return bare
    if row.link:
        return _against_link(bare, device)
    unit, dtype = roof_of(row, device)
    compute = peak(device, unit, dtype)
    bw = device.peak_gbps
    t_compute = row.flops / (compute * 1e6) if compute else None  # us
    t_memory = row.bytes / (bw * 1e3) if bw else None
    if t_compute is None and t_memory is None:
        return bare
    bound = "compute" if t_memory is None or (t_compute is not None and t_compute >= t_memory) else "memory"
    roof_us = max(t for t in (t_compute, t_memory) if t is not None)
    roof = row.flops / (roof_us * 1e6) if roof_us > 0 else compute
    pct = 100 * roof_us / row.device_us
    return replace(
        row, bound=bound, roof_dtype=dtype, roof_unit=unit, peak_tflops=compute, roof_tflops=roof, pct_of_roof=pct
    )


def _against_link(row: RooflineRow, device: Device) -> RooflineRow:
    """A copy row against its link: the time its bytes take at the link's rate, and its other bytes (calls that
    copied inside the GPU) at the memory's; no compute roof (a copy does no math worth one)."""
    link = link_of(device, row.link)
    if link is None:
        return row
    roof_us = row.link_bytes / (link.gbps * 1e3)
    rest = row.bytes - row.link_bytes
    if rest > 0 and device.peak_gbps:
        roof_us += rest / (device.peak_gbps * 1e3)
    return replace(row, bound="link", roof_dtype=row.dtype, pct_of_roof=100 * roof_us / row.device_us)


def roof_words(device: Device, unit: str, dtype: str) -> str:
    """What the roof is in words: 'tensor-core', or 'vector (CUDA-core)' for matrix work with no matrix rate."""
    if unit == "matrix" and f"matrix_{dtype}" not in device.peak_tflops:
        return "vector (CUDA-core)"
    return UNIT_WORDS[unit]


def ridge(device: Device, unit: str, dtype: str) -> float | None:
    """The intensity (FLOP/byte) where the compute roof of a unit and dtype meets the memory roof."""
    compute = peak(device, unit, dtype)
    return compute * 1000 / device.peak_gbps if compute and device.peak_gbps else None
