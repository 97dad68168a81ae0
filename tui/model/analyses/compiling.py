"""torch.compile compiling inside the window: how long, how many frames and graphs, recompiles, which steps.

Dynamo and Inductor record their work as spans (`dynamo`, `entire_frame_compile`, `compile_attempt_0`,
`backend_compile`, `… (dynamo_timed)`; COMPILE names them), on the thread that called the
compiled function, and on the autograd engine's thread for a backward compiled on first use. The compiled code
running (`Torch-Compiled Region: 0/1`, `CompiledFunction`, `## Call CompiledFxGraph … ##`) is not compiling.
A frame compile is an outermost compile span that is one of Dynamo's frame spans; a recompile is a frame compile
whose frame then runs as a second (or later) compiled version (`Torch-Compiled Region: F/K`, K ≥ 1); graphs are the
distinct compiled graphs the window calls. A step compiled when a compile span overlaps it: such steps are left
out of the typical step, as a cold first step is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..cats import GPU_CATS, of_cats
from ..sets import distinct
from ..trace import TraceColumns

# torch.compile compiling (Dynamo's and Inductor's spans; not the compiled code running: Torch-Compiled Region,
# CompiledFunction, ## Call CompiledFxGraph ... ## are the graph running)
COMPILE = re.compile(
    r"^(dynamo|entire_frame_compile|compile_attempt_\d+|backend_compile|inductor_compile|compile_fx_inner)$"
    r"| \(dynamo_timed\)$"
)
FRAME = re.compile(r"^(dynamo|entire_frame_compile|_compile\.compile_inner \(dynamo_timed\))$")
REGION = re.compile(r"^Torch-Compiled Region: (\d+)/(\d+)$")
GRAPH = re.compile(r"^## Call CompiledFxGraph (\w+) ##$")


@dataclass
class Compiling:
    """What torch.compile compiled in the trace; times in microseconds (0 and empty lists: nothing compiled)."""

    us: float = 0.0  # the compile spans' union, per rank, overlaps counted once
    frames: int = 0  # frame compiles (recompiles included)
    recompiles: int = 0
    graphs: int = 0  # distinct compiled graphs called in the trace
    spans: list[int] = field(default_factory=list)  # the outermost compile spans (event ids), in time order
    steps: list[int] = field(default_factory=list)  # the ProfilerStep events a compile span overlaps

    @property
    def compiled(self) -> bool:
        return bool(self.spans)


def compiling(trace: TraceColumns, parent: np.ndarray, steps: list[int]) -> Compiling:
    """The compile spans of the trace (parent: the nesting, to keep the outermost) and the steps they overlap."""
    x = trace.x
    hit = np.array([bool(COMPILE.search(n)) for n in trace.names] or [False])
    cpu = ~of_cats(x.cat, GPU_CATS)
    spans = np.flatnonzero(hit[x.name] & cpu)
    up = parent[spans]
    outer = spans[(up < 0) | ~hit[x.name[np.maximum(up, 0)]]]
    outer = outer[np.argsort(x.ts[outer], kind="stable")]
    found = Compiling(spans=outer.tolist(), graphs=_graphs(trace))
    if not len(outer):
        return found
    found.us = _union_us(trace, outer)
    frames = [int(i) for i in outer if FRAME.match(trace.name_of(int(i)))]
    found.frames = len(frames)
    found.recompiles = sum(_version_after(trace, i) >= 1 for i in frames)
    ends = x.ts[outer] + x.dur[outer]
    found.steps = [s for s in steps if ((x.ts[outer] < x.ts[s] + x.dur[s]) & (ends > x.ts[s])).any()]
    return found


def _graphs(trace: TraceColumns) -> int:
    return len({m.group(1) for n in trace.names if (m := GRAPH.match(n))})


def _union_us(trace: TraceColumns, spans: np.ndarray) -> float:
    x = trace.x
    rank = np.array([t.rank for t in trace.tracks] or [0])[x.track[spans]]
    total = 0
    for r in distinct(rank).tolist():
        mine = spans[rank == r]
        order = np.argsort(x.ts[mine], kind="stable")
        s, e = x.ts[mine][order], (x.ts[mine] + x.dur[mine])[order]
        run = np.maximum.accumulate(e)
        new = np.r_[True, s[1:] > run[:-1]]
        total += int((np.maximum.reduceat(run, np.flatnonzero(new)) - s[new]).sum())
    return total / 1000.0


def _version_after(trace: TraceColumns, span: int) -> int:
    """The compiled version (K of F/K) the first compiled region on the span's thread after it runs (-1: none)."""
    x = trace.x
    ids = [k for k, n in enumerate(trace.names) if REGION.match(n)]
    if not ids:
        return -1
    end = x.ts[span] + x.dur[span]
    after = np.flatnonzero(np.isin(x.name, ids) & (x.track == x.track[span]) & (x.ts >= end))
    if not len(after):
        return -1
    first = after[np.argmin(x.ts[after])]
    m = REGION.match(trace.name_of(int(first)))
    return int(m.group(2)) if m else -1
