"""The rows of torch's prof.key_averages(), computed from a trace with torch's own rules.

Followed from torch/autograd/profiler.py (_parse_kineto_results) and profiler_util.py:
- events named [memory], [OutOfMemory], profiler::_record_function_enter(_new)/_exit,
  aten::is_leaf, aten::output_nr and aten::_version are dropped before anything else;
- ProfilerStep#N is renamed ProfilerStep*;
- host events nest per thread by time containment (see nesting.py); which host events torch sees, and
  where it puts Python frames, async collectives, events still open at the window's end, and runtime calls
  and CUPTI overhead events linked to no op (on the thread that stopped the profiler), is op_events.py's;
- a child with its parent's name, when it is the parent's only child, is removed: the
  parent takes its children and its kernels (_remove_dup_nodes);
- each frontend event (a host event not linked to an op) gets, as kernels, the device
  events whose linked correlation id (the trace's External id) is its id (an op's External id;
  for an event linked to no op, see op_events.frontend_ids): kernels, copies, sets and syncs. A GPU annotation (gpu_user_annotation) is never one: Kineto links it to no
  op, so the record_function block and the step it mirrors count only the work launched under
  them. Device time total = own kernels + children's;
- device events (kernels, memcpy, memset, GPU annotations, syncs) are rows of their own, the
  ones linked to no op too (a kernel left running from warm-up counts in its kernel's row);
- rows are keyed by (name, host/device, user annotation[, input shapes]), in order of
  first appearance; the footers sum self CPU, and self device time of non-annotation
  device rows;
- the times are torch's floats: each event's start and end in us from the profiler's start (ns / 1000), a
  duration one less the other, and every sum added in torch's order (events by start, then longest first). A
  figure on an exact half of its last printed digit (two calls of 245.221 us: 122.6105) prints as torch's float
  lands, 122.610 there; from whole nanoseconds it printed 122.611 (torch_origin, torch_us).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import orjson

from ..cats import GPU_CATS, Cat, of_cats
from ..links import link
from ..nesting import Nesting, children_total, levels, nearest_kept, nest, visiting_order
from ..sets import distinct
from ..threads import side_by_side
from ..trace import TraceColumns, keyed, rank_of_events
from .op_events import OpEvents, op_events, torch_ends
from .op_memory import loose_memory, memory_records, memory_usage

FILTERED = {
    "[memory]",
    "[OutOfMemory]",
    "profiler::_record_function_enter",
    "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "aten::is_leaf",
    "aten::output_nr",
    "aten::_version",
}
_STEP = re.compile(r"^ProfilerStep#\d+$")


@dataclass
class OpRow:
    """One row of the table; times in microseconds."""

    name: str
    count: int
    self_cpu_us: float
    cpu_total_us: float
    self_device_us: float
    device_total_us: float
    is_device: bool
    is_annotation: bool
    input_shapes: str | None = None
    is_python: bool = False  # a Python frame (with_stack): a row only in the table with frames (python_frames)
    is_async: bool = False  # torch keeps its events out of the tree (a collective's annotation): self CPU 0
    cpu_mem: int = 0  # bytes allocated (net) during the calls, children included
    self_cpu_mem: int = 0
    device_mem: int = 0
    self_device_mem: int = 0

    @property
    def is_gpu_annotation(self) -> bool:
        """A GPU-side annotation row (ProfilerStep*, a record_function block): its CUDA time is the span it covers
        on the GPU, over kernels that are rows of their own."""
        return self.is_device and self.is_annotation

    @property
    def cpu_avg_us(self) -> float:
        return self.cpu_total_us / self.count if self.count else 0.0

    @property
    def device_avg_us(self) -> float:
        return self.device_total_us / self.count if self.count else 0.0


@dataclass
class OpsTable:
    """The rows plus the two footers of key_averages().table() (the footers count every row, frames too)."""

    rows: list[OpRow]
    self_cpu_total_us: float
    self_device_total_us: float
    device_link: str = "External id"  # or "launch call" for traces whose GPU events name no op
    has_memory: bool = False  # profile_memory was on: the table gets torch's memory columns
    python_frames: bool = False  # Python frames and events open at the window's end are rows (torch 2.12, 2.13)
    frame_events: int = 0  # Python frames in the trace (with_stack): rows only with python_frames
    open_events: int = 0  # events still open when the window closed: rows only with python_frames
    torch: str = ""  # the torch that wrote the trace, where the file says so

    @property
    def has_device_memory(self) -> bool:
        return any(r.self_device_mem > 0 for r in self.rows)

    @property
    def has_device(self) -> bool:
        return any(r.self_device_us > 0 for r in self.rows)

    @property
    def has_python(self) -> bool:
        return any(r.is_python for r in self.rows)

    @property
    def spans(self) -> list[OpRow]:
        """The GPU-side annotation rows with a span: their Self CUDA is that span, over kernels counted in their rows."""
        return [r for r in self.rows if r.is_gpu_annotation and r.self_device_us > 0]


def table_name(name: str) -> str:
    return "ProfilerStep*" if _STEP.match(name) else name


def of_shapes(trace: TraceColumns, events: np.ndarray, shapes: str) -> np.ndarray:
    """The events whose input shapes read `shapes` as this table groups them (shape_label; "[]": none recorded)."""
    labels = ["[]"] + [shape_label(s) for s in trace.shapes]  # shape id -1 (none) first
    wanted = np.array([label == shapes for label in labels])
    return events[wanted[trace.x.shape[events].astype(np.int64) + 1]]


def shape_label(raw: str) -> str:
    """Input Dims text as torch prints it (Python's list repr)."""
    try:
        return str(orjson.loads(raw))
    except orjson.JSONDecodeError:
        return raw


def torch_origin(trace: TraceColumns) -> np.ndarray | np.int64:
    """Where torch's clock starts (ns): each rank's profiler start, the span Kineto writes as `PyTorch Profiler (0)`
    (cat Trace), else the rank's first event. One value for one rank, else one per event."""
    x = trace.x
    if not trace.n:
        return np.int64(0)
    ranks = np.array([t.rank for t in trace.tracks] or [0], np.int64)
    rank_ids, of_track = np.unique(ranks, return_inverse=True)
    profiler = x.cat == int(Cat.TRACE)
    if len(rank_ids) == 1:
        return np.int64(x.ts[profiler].min() if profiler.any() else x.ts.min())
    rank = of_track[x.track]
    none = np.iinfo(np.int64).max
    first, started = np.full(len(rank_ids), none), np.full(len(rank_ids), none)
    np.minimum.at(first, rank, x.ts)
    np.minimum.at(started, rank[profiler], x.ts[profiler])
    return np.where(started < none, started, first)[rank]


def torch_us(trace: TraceColumns, idx: np.ndarray, end: np.ndarray, origin: np.ndarray | np.int64) -> np.ndarray:
    """The durations (us) of events idx, ending at end (aligned with idx), as torch's FunctionEvent has them: its end
    less its start, each made a float of us from the profiler's start (_parse_kineto_results: start_us = (start_ns -
    trace_start_ns) / 1000), not (end - start) / 1000: the two can differ in the last bit, which decides the printed
    digit of a figure on an exact half. origin: torch_origin's."""
    at = origin[idx] if isinstance(origin, np.ndarray) else origin
    return (end - at) / 1000.0 - (trace.x.ts[idx] - at) / 1000.0


@dataclass
class OpTimes:
    """Per event of the table (host and device events, `order`), what key_averages sums (us, bytes), after torch's
    filtering and dup removal.

    Both the ops table and the ops table by input shape aggregate these; they are computed once. The times are in
    us, as torch's floats (torch_us).
    """

    host: np.ndarray
    device: np.ndarray
    order: np.ndarray  # the host and device events in torch's order, (start, -end, index): rows appear in it
    names: np.ndarray  # the table name of every name id (ProfilerStep#N reads ProfilerStep*)
    cols: dict[str, np.ndarray]  # aligned with order
    device_link: str
    has_memory: bool
    host_roots: np.ndarray  # host events under no other: every host event lies within one of them
    python_frames: bool = False  # as OpsTable's
    frame_events: int = 0
    open_events: int = 0

    @property
    def other_differs(self) -> bool:
        """Would the table of the other choice of python_frames differ (the trace has frames or open events)?"""
        return bool(self.frame_events or self.open_events)


def op_times(
    trace: TraceColumns, launcher: np.ndarray | None = None, shown: Nesting | None = None, python_frames: bool = False
) -> OpTimes:
    """The per-event quantities; launcher and the display nesting are reused when the caller has them.

    python_frames: the table of torch 2.12 and 2.13 (Python frames and events open at the window's end are
    rows); else torch's intended one, as 2.11 prints it (see op_events.py).
    """
    x = trace.x
    names = np.array([table_name(n) for n in trace.names] + [""], dtype=object)
    keep_name = np.array([n not in FILTERED for n in trace.names] + [True])
    name_ok = keep_name[x.name]
    ev = op_events(trace, name_ok, python_frames)
    device = of_cats(x.cat, GPU_CATS) & name_ok
    end = torch_ends(trace, ev) if python_frames else x.ts + x.dur
    work = device & (x.cat != int(Cat.GPU_ANNOTATION))  # linked to no op by Kineto: never an op's device time
    origin = torch_origin(trace)
    (parent, depth), kernels, memory, order = side_by_side(  # the sums by External id and time read no nesting
        lambda: host_parent(trace, ev, end, shown),
        lambda: _kernel_sums(trace, ev, work, origin),
        lambda: memory_usage(trace, ev.host, end),
        # the rows' events (the columns are theirs alone, not every event's) in torch's order: its sums add in it
        lambda: visiting_order(x.ts, end, None, np.flatnonzero(ev.host | device)),
    )
    roots = np.flatnonzero(ev.host & (parent < 0))
    kernels, device_link = _device_time(trace, work, origin, kernels, parent, launcher)
    rows = _Rows(trace, ev, device, order, names, end, parent, depth, origin)
    cols, alive, parent = _times(rows, kernels[order])
    _memory_columns(cols, rows, [m[order] for m in memory], alive, parent)
    has_memory = bool(trace.flags.get("profile_memory")) or bool(len(memory_records(trace)))
    frames = int(np.count_nonzero(x.cat == int(Cat.PYTHON)))
    times = OpTimes(ev.host, device, order, names, cols, device_link, has_memory, roots)
    times.python_frames, times.frame_events, times.open_events = python_frames, frames, int(ev.unfinished.sum())
    return times


def ops_table(trace: TraceColumns, times: OpTimes, group_by_shape: bool = False) -> OpsTable:
    """Aggregate a trace the way key_averages() aggregates the same run."""
    end = trace.x.ts + trace.x.dur
    rows = _aggregate(trace, times.order, times.names, times.host, times.cols, group_by_shape)
    rows += _memory_row(trace, times.host_roots, end)
    self_cpu, self_dev = footer_totals(rows)
    table = OpsTable(rows, self_cpu, self_dev, times.device_link, times.has_memory, times.python_frames)
    table.frame_events, table.open_events = times.frame_events, times.open_events
    table.torch = str((trace.ranks[0] if trace.ranks else {}).get("torch") or "")  # where the file names it
    return table


def footer_totals(rows: list[OpRow]) -> tuple[float, float]:
    """torch's two footers, Self CPU and Self CUDA time total, added up over the rows in the order given: torch's
    table adds them in the order it prints them (its sort), which decides a total on an exact half (2268.5 us in
    the rows' order of appearance prints 2.268ms, sorted by CUDA total 2.269ms, as torch printed it)."""
    self_cpu = self_dev = 0.0
    for r in rows:
        self_cpu += r.self_cpu_us
        if r.is_device and not r.is_annotation:
            self_dev += r.self_device_us
    return float(self_cpu), float(self_dev)


def host_parent(
    trace: TraceColumns, ev: OpEvents, end: np.ndarray, shown: Nesting | None
) -> tuple[np.ndarray, np.ndarray]:
    """Each host event's parent when host events alone are nested per thread, as torch nests them.

    The events torch keeps out of the tree (ev.loose) have none and are none's; the events Kineto collected linked to
    no op (ev.detached) nest on the thread torch gives them (ev.thread). The display nesting (time only, before
    Python ids re-hang frames) already holds the rest, except on a track where an event torch leaves out closes a
    host event by a partial overlap while host events start (see _tree_parent), and the tracks detached events
    leave or join: such tracks are nested again.
    Returns the parents and each event's depth in that nesting.
    """
    tree = ev.host & ~ev.loose
    parent, depth = _tree_parent(trace, tree, end, shown, ev.thread)
    parent[ev.loose] = -1
    return parent, depth


def _tree_parent(
    trace: TraceColumns, host: np.ndarray, end: np.ndarray, shown: Nesting | None, thread: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The parents and depths of the host events nested per thread (from the display nesting where it holds).

    thread: the track each event is nested on (its own when None). Leaving out the events torch leaves out (Python
    frames, the ops it filters) moves no host event, except where one of them closed a host event by a partial
    overlap and host events start while that one would still be open (see _closed_by_left_out): elsewhere a host
    event's parent is its nearest host ancestor in the display nesting, and the display depths still grow from
    parent to child. Those tracks, any with a host event the display nesting left out, and those that events
    nested on another thread leave or join, are nested again."""
    x = trace.x
    thread = x.track if thread is None else thread
    if shown is None or not np.array_equal(end, x.ts + x.dur):
        alone = nest(x.ts, end, thread, host)
        return alone.parent.copy(), alone.depth.copy()
    in_shown = np.zeros(trace.n, bool)
    in_shown[shown.order] = True
    unshown = host & ~in_shown
    moved = host & (thread != x.track)
    redo = np.zeros(int(max(x.track.max(initial=0), thread.max(initial=0))) + 1, bool)
    redo[x.track[unshown | moved]] = True
    redo[thread[moved]] = True
    redo[_closed_by_left_out(x, host, end, shown)] = True
    again = host & (redo[x.track] | redo[thread])
    read_off = host & ~again
    parent = np.full(trace.n, -1, shown.time_parent.dtype)
    if read_off.any():
        parent[read_off] = nearest_kept(shown.time_parent, host, shown.depth)[read_off]
    depth = shown.depth.copy()
    if again.any():  # host events are all in the display nesting's visiting order, unless one was left out or moved
        order = shown.order[again[shown.order]] if not (unshown | moved).any() else None
        fresh = nest(x.ts, end, thread, again, order)
        parent[again] = fresh.parent[again]
        depth[again] = fresh.depth[again]
    return parent, depth


def _closed_by_left_out(x, host: np.ndarray, end: np.ndarray, shown: Nesting) -> np.ndarray:
    """The tracks where an event left out of torch's tree closed a host event j by a partial overlap (at its start
    s) while a host event starts in [s, j's end): the host events alone would have kept j open for it."""
    victims = np.flatnonzero(shown.killed_by >= 0)
    killers = shown.killed_by[victims]
    by_left_out = host[victims] & ~host[killers]
    victims, killers = victims[by_left_out], killers[by_left_out]
    if not len(victims):
        return np.empty(0, np.int64)
    hosts = shown.order[host[shown.order]]  # by (track, start)
    host_tracks = x.track[hosts]
    spoiled = []
    for t in distinct(x.track[victims]).tolist():
        lo, hi = np.searchsorted(host_tracks, [t, t + 1])
        starts = x.ts[hosts[lo:hi]]
        mine = x.track[victims] == t
        first = np.searchsorted(starts, x.ts[killers[mine]], "left")
        if (np.searchsorted(starts, end[victims[mine]], "left") > first).any():
            spoiled.append(t)
    return np.array(spoiled, np.int64)


class _Rows:
    """The host and device events of the table (`order`), with what the time and memory sums read of them: their
    host parents as positions in order (after dup removal, _times), depths, table-name labels and spans."""

    host: np.ndarray
    device: np.ndarray
    loose: np.ndarray
    parent: np.ndarray  # position in order of the host parent (-1: none)
    depth: np.ndarray
    label: np.ndarray  # equal table names, equal labels
    span: np.ndarray  # end - start, as torch reads the end (us, torch_us)

    def __init__(self, trace: TraceColumns, ev: OpEvents, device, order, names, end, parent, depth, origin) -> None:
        x = trace.x
        self.host, self.device, self.loose = ev.host[order], device[order], ev.loose[order]
        at = np.full(trace.n, -1, np.int64)
        at[order] = np.arange(len(order))
        up = parent[order]
        self.parent = np.where(up >= 0, at[np.maximum(up, 0)], -1)  # a host parent is a host event: in order
        self.depth = depth[order]
        self.label = np.unique(names, return_inverse=True)[1].astype(np.int32)[x.name[order]]
        self.span = torch_us(trace, order, end[order], origin)  # a device event's is its duration as written


def _memory_columns(cols: dict, rows: _Rows, memory, alive, parent) -> None:
    """The memory columns: net bytes inside each host event, and its own (less its children's, after dup removal).
    An event torch keeps out of its tree (ev.loose) has no self memory, as it has no self time."""
    cpu_mem, dev_mem = memory
    cols["cpu_mem"], cols["dev_mem"] = cpu_mem, dev_mem
    self_cpu = cpu_mem - children_total(parent, np.where(alive, cpu_mem, 0))
    self_dev = dev_mem - children_total(parent, np.where(alive, dev_mem, 0))
    cols["self_cpu_mem"] = np.where(rows.loose, 0, self_cpu)
    cols["self_dev_mem"] = np.where(rows.loose, 0, self_dev)


def _device_time(trace: TraceColumns, work, origin, kernels, parent, launcher) -> tuple[np.ndarray, str]:
    """Each op's device time (us, per event) and how it was linked: by External id (kernels, from _kernel_sums),
    else by the op enclosing each kernel's launch call, for traces whose External ids name no op."""
    if work.any() and launcher is None:
        launcher = link(trace).launcher
    if work.any() and not _external_ids_name_ops(trace, work, parent, launcher):
        return _kernel_sums_by_launch(trace, work, origin, parent, launcher), "launch call"
    return kernels, "External id"


def _times(rows: _Rows, kernels: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """The time columns of the table's events, which host events stay after dup removal, and their parents then
    (positions in order). kernels: each one's device time (changed here). The depths grow from parent to child (the
    nesting's depth before folding does). An async event (loose) has torch's times: no self CPU, its span as CPU
    total, no device time."""
    host = rows.host
    kernels[rows.loose] = 0
    parent = rows.parent.copy()
    alive = _remove_dup_nodes(parent, rows.label, kernels, host)
    dur = np.where(alive & host, rows.span, 0.0)
    parent = np.where(alive, parent, -1)
    dev_total, below = _device_totals(parent, np.where(alive | ~host, kernels, 0.0), rows.depth)
    cols = {
        "alive": alive,
        "loose": rows.loose,
        "self_cpu": np.where(rows.loose, 0.0, dur - children_total(parent, dur)),
        "cpu_total": dur,
        "dev_total": np.where(host, dev_total, np.where(rows.device, rows.span, 0.0)),
        "self_dev": np.where(host, dev_total - below, np.where(rows.device, rows.span, 0.0)),
    }
    return cols, alive, parent


def _device_totals(parent: np.ndarray, own: np.ndarray, depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each host event's CUDA total as torch's FunctionEvent.device_time_total adds it, its own kernels' time plus
    the sum of its children's (own + (c1 + c2 + ...), children in torch's order), and that sum of the children's.
    Its self CUDA is the one less the other, as torch subtracts (not own: the float sums can differ in the last bit)."""
    below = np.zeros(len(own))
    for level in levels(depth)[:0:-1]:  # deepest first: a level's sums are whole before it is added up
        level = level[parent[level] >= 0]  # a depth is the display's: a root of torch's tree can be deep in it
        np.add.at(below, parent[level], own[level] + below[level])  # in position order: torch's order
    return own + below, below


def _kernel_sums(trace: TraceColumns, ev: OpEvents, device, origin) -> np.ndarray:
    """Device time (us) of the events whose External id equals each frontend event's id (torch's, ev.ids), added
    in the order of the file (torch's of its kernels)."""
    x, rank = trace.x, rank_of_events(trace)
    ids = keyed(rank, ev.ids)
    frontend = ev.host & (ids >= 0)
    dev = np.flatnonzero(device & (x.ext >= 0))
    out = np.zeros(trace.n)
    if not len(dev):
        return out
    keys, inverse = np.unique(keyed(rank, x.ext)[dev], return_inverse=True)
    sums = np.bincount(inverse, weights=torch_us(trace, dev, x.ts[dev] + x.dur[dev], origin))
    fe = np.flatnonzero(frontend)
    pos = np.clip(np.searchsorted(keys, ids[fe]), 0, len(keys) - 1)
    hit = keys[pos] == ids[fe]
    out[fe[hit]] = sums[pos[hit]]
    return out


def _external_ids_name_ops(trace: TraceColumns, device, parent: np.ndarray, launcher: np.ndarray) -> bool:
    """Do GPU events' External ids name an op enclosing their launch, as torch assumes?

    In 2021 and 2024+ traces they do. Some 2022-2023 builds wrote the correlation there
    instead, which names no op or, worse, an unrelated op whose id happens to be equal.
    """
    ext = trace.x.ext
    dev = np.flatnonzero(device & (launcher >= 0) & (ext >= 0))
    if not len(dev):
        return True
    want = ext[dev]
    cur = parent[launcher[dev]]
    hit = np.zeros(len(dev), bool)
    for _ in range(64):
        live = cur >= 0
        if not live.any():
            break
        hit |= live & (ext[np.maximum(cur, 0)] == want)
        cur = np.where(live, parent[np.maximum(cur, 0)], -1)
    return hit.mean() >= 0.5


def _kernel_sums_by_launch(trace: TraceColumns, device, origin, parent: np.ndarray, launcher: np.ndarray) -> np.ndarray:
    """Fallback: give each GPU event's time (us) to the op enclosing the call that launched it."""
    x = trace.x
    out = np.zeros(trace.n)
    dev = np.flatnonzero(device & (launcher >= 0))
    owner = parent[launcher[dev]]
    dev, owner = dev[owner >= 0], owner[owner >= 0]
    np.add.at(out, owner, torch_us(trace, dev, x.ts[dev] + x.dur[dev], origin))
    return out


def _remove_dup_nodes(parent: np.ndarray, names: np.ndarray, kernels: np.ndarray, host) -> np.ndarray:
    """torch's _remove_dup_nodes: fold an only child that has its parent's name (parent and kernels in place).

    torch repeats a pass until nothing changes; folding never makes a new fold possible, so the
    folded set is known up front: the only children named like their parent. Each chain of them
    folds into its top, which takes the children and the kernels of the chain's bottom.
    """
    kids = np.bincount(parent[parent >= 0], minlength=len(parent))
    up = np.maximum(parent, 0)
    folded = host & (parent >= 0) & (kids[up] == 1) & (names == names[up])
    if not folded.any():
        return host.copy()
    top = parent.copy()  # nearest ancestor that stays, by pointer jumping over folded ones
    while True:
        hop = (top >= 0) & folded[np.maximum(top, 0)]
        if not hop.any():
            break
        top[hop] = parent[top[hop]]
    bottoms = np.flatnonzero(folded)
    bottoms = bottoms[~np.isin(bottoms, parent[folded])]  # folded, with no folded child
    kernels[top[bottoms]] = kernels[bottoms]
    survivors = ~folded
    parent[survivors] = top[survivors]
    parent[folded] = -1
    return host & survivors


def _aggregate(trace: TraceColumns, idx, names, host, t, group_by_shape: bool) -> list[OpRow]:
    """Rows keyed by (table name, host/device, annotation[, shapes]) in order of first appearance (idx: the events
    whose columns t holds, in that order)."""
    x = trace.x
    cat = x.cat[idx]
    is_dev = ~host[idx]
    is_ann = (cat == int(Cat.USER_ANNOTATION)) | (cat == int(Cat.GPU_ANNOTATION))
    at = np.flatnonzero(t["alive"] | is_dev)  # positions in t's columns
    idx, is_dev, is_ann = idx[at], is_dev[at], is_ann[at]
    shapes = _shape_keys(trace, idx, is_dev) if group_by_shape else np.zeros(len(idx), np.int64)
    label, name_id = np.unique(names, return_inverse=True)  # ProfilerStep#N all read ProfilerStep*
    kind = name_id[x.name[idx]].astype(np.int64) * 4 + is_dev * 2 + is_ann
    key = kind * (len(trace.shapes) + 2) + shapes + 1 if group_by_shape else kind
    group, heads = _groups(key, idx, x.ts, x.ts + x.dur)
    keys = [
        (str(label[name_id[x.name[i]]]), bool(is_dev[k]), bool(is_ann[k]), int(shapes[k]))
        for i, k in zip(idx[heads].tolist(), heads.tolist(), strict=True)
    ]
    rows = _rows(keys, group, at, t, trace if group_by_shape else None)
    for row, i, k in zip(rows, idx[heads].tolist(), at[heads].tolist(), strict=True):
        row.is_python = int(x.cat[i]) == int(Cat.PYTHON)
        row.is_async = bool(t["loose"][k])
    return rows


def _groups(key: np.ndarray, idx: np.ndarray, ts: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each position's group, groups numbered in order of first appearance by (start, -end, index), and the
    position of each group's first event: no sort of the events, only of the few that start a group first."""
    dense, count = _dense(key)
    start = ts[idx]
    first_ts = np.full(count, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(first_ts, dense, start)
    cand = np.flatnonzero(start == first_ts[dense])  # the events starting when their group first starts
    cand = cand[np.lexsort((cand, -end[idx[cand]], dense[cand]))]  # within a group: the longest, then the first
    lead = np.ones(len(cand), bool)
    lead[1:] = dense[cand[1:]] != dense[cand[:-1]]
    heads = cand[lead]  # one per group, by group number
    by_first = np.lexsort((heads, -end[idx[heads]], start[heads]))
    rank = np.empty(count, np.int64)
    rank[by_first] = np.arange(count)
    return rank[dense], heads[by_first]


def _dense(key: np.ndarray) -> tuple[np.ndarray, int]:
    """Keys renumbered 0..count-1 (any order): by a table of the keys' range when it is small, else by sorting."""
    if not len(key):
        return key, 0
    low, high = int(key.min()), int(key.max())
    if high - low > max(4 * len(key), 1 << 20):
        uniq, inverse = np.unique(key, return_inverse=True)
        return inverse.reshape(-1), len(uniq)
    present = np.zeros(high - low + 1, bool)
    present[key - low] = True
    number = np.cumsum(present) - 1
    return number[key - low], int(number[-1]) + 1


def _shape_keys(trace: TraceColumns, idx, is_dev) -> np.ndarray:
    shape = trace.x.shape[idx].astype(np.int64)
    return np.where(is_dev, -1, shape)


def _rows(keys: list[tuple], group, at, t, trace: TraceColumns | None) -> list[OpRow]:
    def total(col):  # the events in torch's order: each row's sum is torch's `+=`, to the last bit
        return np.bincount(group, weights=t[col][at], minlength=len(keys))

    def total_bytes(col):
        return np.bincount(group, weights=t[col][at], minlength=len(keys)).astype(np.int64)

    counts = np.bincount(group, minlength=len(keys))
    self_cpu, cpu_total, self_dev, dev_total = (total(c) for c in ("self_cpu", "cpu_total", "self_dev", "dev_total"))
    mem = [total_bytes(c) for c in ("cpu_mem", "self_cpu_mem", "dev_mem", "self_dev_mem")]
    rows = []
    for g, (name, is_dev, is_ann, shape) in enumerate(keys):
        shapes = None
        if trace is not None:
            shapes = shape_label(trace.shapes[shape]) if shape >= 0 else "[]"
        row = OpRow(name, int(counts[g]), self_cpu[g], cpu_total[g], self_dev[g], dev_total[g], is_dev, is_ann, shapes)
        row.cpu_mem, row.self_cpu_mem, row.device_mem, row.self_device_mem = (int(m[g]) for m in mem)
        rows.append(row)
    return rows


def _memory_row(trace: TraceColumns, roots, end) -> list[OpRow]:
    """torch's [memory] row: the allocations and frees outside every host event (none when there are none)."""
    count, cpu, device = loose_memory(trace, roots, end)
    if not count:
        return []
    row = OpRow("[memory]", count, 0.0, 0.0, 0.0, 0.0, False, False)
    row.cpu_mem = row.self_cpu_mem = cpu
    row.device_mem = row.self_device_mem = device
    return [row]
