"""What-if `graphs`: the window re-solved as if a region ran as one CUDA graph replay.

A replay takes away all the CPU work of the captured region (Python, the dispatcher, the compiled graph's
wrapper, every launch call) and puts one graph launch in its place; the region's kernels then run back to back
on their streams in their recorded order and durations. So, per instance of the region (a CPU span on one
thread):
- its CPU stretches, and those of everything under it, take no time; its first stretch takes the graph launch's
  CPU cost instead;
- a kernel it launched starts no earlier than the replay's launch delay after that, and no earlier than a
  replay's gap after the kernel before it on its stream, when that one is the region's too;
- everything else keeps what it took (the rest of the step as recorded).
The costs come from the trace's own graph launches where it has some (the median cudaGraphLaunch, the median
delay from a graph launch to its first kernel, the median gap between a replay's kernels on one stream), else
from the defaults below, measured on the H200 series' reduce-overhead captures (sample_traces/cuda-h200). A
compiled graph replayed by torch.compile's mode="reduce-overhead" costs more CPU than its graph launch: the
CUDA-graph trees check and copy the inputs and launch the graph from Python, about 0.1 ms a call warm on the H200
(100 us for matmul_add, 168 us for mlp_fwd); a trace that has such replays gives its own median. Inputs that are
not static (not parameters or buffers) are also copied into the graph's own memory before each replay, on the
GPU: the trace of the compiled run does not say which inputs those are, so the prediction leaves that copy out
(benchmarks/RESULTS.md measures it).
The region defaults to the compiled graphs (`## Call CompiledFxGraph … ##`) when the window has them, else the
step's forward and backward: all of its CPU work but the optimizer's (`Optimizer.step#…`, `Optimizer.zero_grad#…`)
and data loading. A region that synchronizes with the device cannot be captured: the what-if says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ...analysis import Analysis
from ...cats import Cat
from ...sets import distinct
from ..compiling import GRAPH as COMPILED_GRAPH
from ..graphs.replay import GRAPH_LAUNCH
from ..launches import blocking_copies, launch_calls, slow_launches
from .classes import DATA_LOADER, Edge
from .graph import Graph

NOT_CAPTURED = re.compile(r"^Optimizer\.(step|zero_grad)#|^ProfilerStep#")
LAUNCH_CPU_NS = 10_000  # one cudaGraphLaunch's CPU time when the trace has none to measure (10 us)
TREES_CALL_NS = 100_000  # one warm call of a compiled graph under reduce-overhead, graph launch included (0.1 ms)
LAUNCH_DELAY_NS = 5_000  # from a graph launch to its first kernel's start (5 us)
REPLAY_GAP_NS = 1_500  # between two kernels of one replay on a stream (1.5 us)
ALREADY = "already replayed: {n:,} graph launch{es}"  # what a graphs what-if matched where the region replays already


@dataclass
class Replayed:
    """The edges a graphs what-if re-weights, their new weights, the regions it took, and what it noticed."""

    edges: np.ndarray
    weights: np.ndarray
    regions: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    syncs: int = 0  # blocking calls inside the regions: a graph could not capture them
    cpu_ns: int = 0  # the CPU time each replay takes instead of the region's
    measured: bool = False  # cpu_ns comes from the trace's own replays (else a default)
    compiled: bool = False  # the regions are compiled graphs (replayed by torch.compile's CUDA-graph trees)
    already: int = 0  # graph launches in the instances left out: they replay CUDA graphs already
    one_time: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # the region's outlier launches


def costs(a: Analysis, compiled: bool) -> tuple[int, int, int, bool]:
    """(CPU per replay, launch delay, replay gap) in ns and whether the CPU figure was measured here: the trace's own
    graph replays' medians, else the defaults; a compiled graph's replay costs a call of torch.compile's CUDA-graph
    trees (compiled: the region is made of compiled graphs)."""
    x = a.trace.x
    launches = np.flatnonzero(
        (x.cat == int(Cat.RUNTIME))
        & np.isin(x.name, [k for k, n in enumerate(a.trace.names) if GRAPH_LAUNCH.search(n)])
    )
    call = _trees_call(a, launches) if compiled else 0
    if not len(launches):
        return call or (TREES_CALL_NS if compiled else LAUNCH_CPU_NS), LAUNCH_DELAY_NS, REPLAY_GAP_NS, bool(call)
    owner = a.graph_owner if hasattr(a, "graph_owner") else np.full(a.trace.n, -1)
    delays, gaps = [], []
    for launch in launches.tolist():
        mine = np.flatnonzero(owner == launch)
        if not len(mine):
            continue
        mine = mine[np.lexsort((x.ts[mine], x.track[mine]))]
        delays.append(int(x.ts[mine].min()) - int(x.ts[launch]))
        same = x.track[mine][1:] == x.track[mine][:-1]
        gaps += (x.ts[mine][1:] - (x.ts + x.dur)[mine][:-1])[same].tolist()
    delay = int(np.median(delays)) if delays else LAUNCH_DELAY_NS
    gap = int(np.median([g for g in gaps if g >= 0])) if any(g >= 0 for g in gaps) else REPLAY_GAP_NS
    cpu = call or (TREES_CALL_NS if compiled else int(np.median(x.dur[launches])))
    return cpu, max(delay, 0), gap, bool(call) or not compiled


def _trees_call(a: Analysis, launches: np.ndarray) -> int:
    """The median CPU time of the trace's compiled graphs that replay a CUDA graph (0: none do)."""
    if not len(launches):
        return 0
    x, parent = a.trace.x, a.nesting.time_parent
    calls = []
    for launch in launches.tolist():
        up = int(parent[launch])
        while up >= 0 and not COMPILED_GRAPH.match(a.trace.name_of(up)):
            up = int(parent[up])
        if up >= 0:
            calls.append(int(x.dur[up]))
    return int(np.median(calls)) if calls else 0


def regions(a: Analysis, g: Graph, pattern: str, event: int = -1) -> np.ndarray:
    """The CPU spans of the window the replay would take: the event, those named by pattern, or the default."""
    x, names = a.trace.x, a.trace.names
    cpu = distinct(g.e.owner[(g.e.rule == int(Edge.CPU)) & (g.e.owner >= 0)])
    if event >= 0:
        return np.array([event], np.int64) if _under(a.nesting.time_parent, cpu, np.array([event])).any() else cpu[:0]
    if pattern:
        rx = re.compile(pattern)
        return _outermost(a, cpu[[bool(rx.search(names[int(x.name[i])])) for i in cpu]])
    compiled = cpu[[bool(COMPILED_GRAPH.match(names[int(x.name[i])])) for i in cpu]]
    if len(compiled):
        return _outermost(a, compiled)
    skip = np.array([bool(NOT_CAPTURED.search(n) or DATA_LOADER.search(n)) for n in names] or [False])
    parent = a.nesting.time_parent
    top = cpu[(parent[cpu] < 0) | _is_step(a, parent[cpu])]
    return top[~skip[x.name[top]]]


def _is_step(a: Analysis, ev: np.ndarray) -> np.ndarray:
    names = a.trace.names
    ok = ev >= 0
    out = np.zeros(len(ev), bool)
    out[ok] = [names[int(a.trace.x.name[i])].startswith("ProfilerStep#") for i in ev[ok]]
    return out


def _outermost(a: Analysis, spans: np.ndarray) -> np.ndarray:
    """The spans not inside another of them."""
    parent = a.nesting.time_parent
    return spans[~_under(parent, parent[spans].astype(np.int64), spans)] if len(spans) else spans


def replayed(a: Analysis, g: Graph, pattern: str, event: int = -1) -> Replayed:
    """The region's edges re-weighted as one graph replay per instance (an empty result: no region found). An
    instance that launches a CUDA/HIP graph already replays: it is left as recorded (its replays' launch delays,
    gaps and CPU are what a replay costs), and counted in already."""
    spans = regions(a, g, pattern, event)
    replaying, already = _replaying(a, g, spans)
    default_step = not pattern and event < 0 and not any(COMPILED_GRAPH.match(a.trace.name_of(int(i))) for i in spans)
    # the step's own work as one replay: a step that launches a graph replays already (its other top-level spans
    # are the eager work around the graph, not instances of a replay of their own)
    spans = spans[:0] if default_step and already else spans[~replaying]
    if not len(spans):
        said = [ALREADY.format(n=already, es="" if already == 1 else "es")] if already else []
        return Replayed(np.empty(0, np.int64), np.empty(0), names=said, already=already)
    compiled = all(COMPILED_GRAPH.match(a.trace.name_of(int(i))) for i in spans)
    launch_cpu, delay, gap, measured = costs(a, compiled)
    e, parent = g.e, a.nesting.time_parent
    inside = _under(parent, e.owner, spans)
    cpu = (e.rule == int(Edge.CPU)) & inside
    weights = np.full(len(e), np.nan)
    weights[cpu] = 0.0
    first = _first_edges(g, spans)
    weights[first] = launch_cpu
    calls = distinct(e.owner[cpu])
    launched = (e.rule == int(Edge.LAUNCH)) & np.isin(_launch_call(a, g), calls)
    weights[launched] = delay
    mine_dev = distinct(e.owner[launched])
    stream = (e.rule == int(Edge.STREAM)) & np.isin(e.owner, mine_dev) & np.isin(g.event[e.src], mine_dev)
    weights[stream] = gap
    hit = np.flatnonzero(~np.isnan(weights))
    syncs = int(((e.rule == int(Edge.SYNC)) & inside).sum())
    names = [a.trace.name_of(int(i)) for i in spans[:5]]
    found = Replayed(hit, weights[hit], spans.tolist(), names, syncs, launch_cpu, measured, compiled, already)
    found.one_time = _one_time_launches(a, calls)
    return found


def _one_time_launches(a: Analysis, calls: np.ndarray) -> np.ndarray:
    """The region's launch calls far slower than the trace's others, as the summary leaves them out (lazy module
    loading on a kernel's first use, a full queue): a replay takes them away, but a warm step pays none either."""
    trace, launcher = a.trace, a.links.launcher
    launch = launch_calls(trace, launcher, a.graph_owner if hasattr(a, "graph_owner") else None)
    timed = np.flatnonzero(launch & ~blocking_copies(trace, launcher, launch))
    return np.intersect1d(distinct(timed[slow_launches(trace, timed)]), distinct(calls), assume_unique=True)


def _replaying(a: Analysis, g: Graph, spans: np.ndarray) -> tuple[np.ndarray, int]:
    """Per span: does a graph launch run under it? And how many graph launches run under them all."""
    out = np.zeros(len(spans), bool)
    if not len(spans):
        return out, 0
    x, names = a.trace.x, a.trace.names
    calls = distinct(g.e.owner[(g.e.rule == int(Edge.CPU)) & (g.e.owner >= 0)])
    calls = calls[x.cat[calls] == int(Cat.RUNTIME)]
    graph_ids = [k for k, n in enumerate(names) if GRAPH_LAUNCH.search(n)]
    launches = calls[np.isin(x.name[calls], graph_ids)] if graph_ids else calls[:0]
    parent, index = a.nesting.time_parent, {int(sp): k for k, sp in enumerate(spans.tolist())}
    count = 0
    for launch in launches.tolist():
        up, hit = int(parent[launch]), -1
        while up >= 0:
            hit = index.get(up, hit)
            up = int(parent[up])
        if hit >= 0:
            out[hit] = True
            count += 1
    return out, count


def _under(parent: np.ndarray, owner: np.ndarray, spans: np.ndarray) -> np.ndarray:
    """Per edge owner: is it one of the spans, or inside one?"""
    hit = np.isin(owner, spans) & (owner >= 0)
    up = np.where(owner >= 0, parent[np.maximum(owner, 0)], -1)
    while (up >= 0).any():
        hit |= np.isin(up, spans) & (up >= 0)
        up = np.where(up >= 0, parent[np.maximum(up, 0)], -1)
    return hit


def _first_edges(g: Graph, spans: np.ndarray) -> np.ndarray:
    """Per region instance: the CPU stretch that starts at its start (where the graph launch goes)."""
    e = g.e
    start_nodes = np.flatnonzero(np.isin(g.event, spans) & (np.arange(len(g.ts)) < len(g.ts) - 1))
    first_of: dict[int, int] = {}
    for node in start_nodes.tolist():
        ev = int(g.event[node])
        if ev not in first_of or g.ts[node] < g.ts[first_of[ev]]:
            first_of[ev] = node
    nodes = np.array(list(first_of.values()), np.int64)
    return np.flatnonzero((e.rule == int(Edge.CPU)) & np.isin(e.src, nodes))


def _launch_call(a: Analysis, g: Graph) -> np.ndarray:
    """Per edge: for a launch edge, the call at its start (-1 for the others)."""
    e = g.e
    out = np.full(len(e), -1, np.int64)
    launch = e.rule == int(Edge.LAUNCH)
    out[launch] = g.event[e.src[launch]]
    return out
