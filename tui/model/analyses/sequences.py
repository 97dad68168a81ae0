"""Recurring kernel sequences: the ops whose launches put the same kernels on the device, in the same order, again
and again (HTA's get_frequent_cuda_kernel_sequences): candidates for fusion or for a CUDA graph.

What HTA 0.5 does (hta/analyzers/cuda_kernel_analysis.py): it takes the CPU ops whose name holds a given
operator name, keeps the shallowest of them with at least min_pattern_len kernels, and keys each by its name and
the names of the GPU events under it in its call graph, in start order; per key, the count, the kernels' summed
duration and the ops' summed duration.

Here no operator name is needed: every op, annotation and module frame (`nn.Module: ...`) is a root (another Python
frame is not: it is the stack an op is found in). A root's sequence is the device activities its own launches and those of everything under it on its
thread put on the device, in launch order (kernels, copies and sets, as `ops --kernels` reads them; graph launches
left out: one replays a whole graph). Of the roots with exactly the same launches (aten::linear over aten::matmul
over aten::mm), the outermost stands for them all, so an occurrence is counted once. A sequence is keyed by its
root's name (any ProfilerStep#N as ProfilerStep*, a module by its class) and its activities' names; it recurs when two roots or more have
it. Nested sequences are all kept: a layer's and each of its ops'.

How, without a loop per event: the nesting lays every thread's events out in visiting order, so a root's subtree
is one run of positions (Nesting.pos to span_end), and the activities sorted by their launch call's position make
each root's sequence one run of them too. Two polynomial hashes of the name ids over each run (prefix sums, mod
2**64) with the run's length and the root's name key the sequences; np.unique groups them. A step is the exception:
its work is all its rank launched while it ran, from every thread (the autograd thread's backward too, as HTA's call
graph counts it), a run of the activities sorted by (rank, call start); a step whose work is one annotation's or
op's, as often, gives way to it (that one names the work). Module frames are keyed by their class: torch's Python tracer names a module's frame
`nn.Module: CLASS_N`, N counting the instances of the class, so a model's 24 decoder layers are one key.

A CUDA graph's replayed kernels have no op of their own: one graph launch puts them all on the device. Within each
launch's replay (its activities in start order) the run of names that repeats back to back over the most activities
is found (the period p whose longest stretch of names equal to those p later covers the most: SGLang's decode
replays 48 layers of 14 kernels), and kept as a sequence keyed by the launch's name, one occurrence a repeat;
launches that replay the same names are one graph, searched once, their repeats counted together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..cats import Cat
from ..nesting import Nesting
from ..sets import distinct
from ..trace import TraceColumns, rank_of_events, ranks_at
from .graphs.replay import graph_owner

ROOT_CATS = (int(Cat.CPU_OP), int(Cat.USER_ANNOTATION))
SHORTEST = 2  # the shortest sequence kept (a report asks for longer ones: HTA's default is 3)
_STEP = re.compile(r"^ProfilerStep#\d+$")
STEP_NAME = "ProfilerStep*"  # torch's table names every step so
_MODULE = re.compile(r"^(nn\.Module: .*)_\d+$")  # torch's Python tracer names a module's frame CLASS_INSTANCE
_BASES = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F))  # odd: invertible mod 2**64


@dataclass
class KernelSequence:
    """One recurring sequence: its root op, the stack above it, its activities, and how often and how long (ns)."""

    op: str  # the root's name (ProfilerStep* for any step)
    stack: list[str]  # the ops and annotations above the root (outermost first), on its first occurrence
    kernels: list[str]  # the device activities in launch order
    count: int  # its occurrences
    device_ns: int  # the activities' summed duration over every occurrence
    cpu_ns: int  # the root ops' summed duration over every occurrence
    occurrences: list[int] = field(default_factory=list)  # the root events, in time order
    activities: list[int] = field(default_factory=list)  # every occurrence's device activities (event ids)
    graph: bool = False  # repeats within a graph's replay: occurrences are each repeat's first activity

    @property
    def length(self) -> int:
        return len(self.kernels)

    @property
    def mean_ns(self) -> float:
        return self.device_ns / self.count if self.count else 0.0


def kernel_sequences(trace: TraceColumns, launcher: np.ndarray, nesting: Nesting) -> list[KernelSequence]:
    """Every sequence of SHORTEST activities or more that recurs, the most device time first."""
    x = trace.x
    act = np.flatnonzero((launcher >= 0) & (graph_owner(trace) < 0))
    act = act[nesting.pos[launcher[act]] >= 0]  # launched from a thread's nested call
    names = _keyed_names(trace)
    roots = np.flatnonzero((np.isin(x.cat, ROOT_CATS) | _modules(trace)) & (nesting.pos >= 0))
    step = names[x.name[roots]] == len(trace.names)
    ops = _grouped(trace, nesting, names, *_thread_runs(trace, launcher, nesting, act, roots[~step]))
    steps = _grouped(trace, nesting, names, *_step_runs(trace, launcher, act, roots[step]))
    same = {(tuple(s.kernels), s.count) for s in ops}  # a step that is one annotation's or op's work gives way to it
    out = ops + [s for s in steps if (tuple(s.kernels), s.count) not in same] + graph_sequences(trace, nesting)
    out.sort(key=lambda s: (-s.device_ns, -s.count, s.op, s.kernels))
    return out


Runs = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # (activities in order, roots, run starts, run ends)


MOST_PERIOD = 512  # the longest repeat looked for within a replay


def graph_sequences(trace: TraceColumns, nesting: Nesting) -> list[KernelSequence]:
    """The runs of kernels that repeat back to back within a graph's replay, one row per graph and run."""
    x, owner = trace.x, graph_owner(trace)
    replayed = np.flatnonzero(owner >= 0)
    if not len(replayed):
        return []
    replayed = replayed[np.lexsort((x.ts[replayed], owner[replayed]))]
    launches, starts = np.unique(owner[replayed], return_index=True)
    ends = [*starts[1:].tolist(), len(replayed)]
    found: dict[tuple, tuple[int, int, int] | None] = {}  # per launch name and replayed names: _repeated_run
    rows: dict[tuple, KernelSequence] = {}
    for launch, a, b in zip(launches.tolist(), starts.tolist(), ends, strict=True):
        acts = replayed[a:b]
        key = (int(x.name[launch]), tuple(x.name[acts].tolist()))
        if key not in found:
            found[key] = _repeated_run(x.name[acts])
        run = found[key]
        if run is not None:
            _add_repeats(trace, nesting, rows, launch, acts, *run)
    return list(rows.values())


def _repeated_run(names: np.ndarray) -> tuple[int, int, int] | None:
    """(start, period, repeats) of the run of names repeated back to back over the most of them (SHORTEST names a
    repeat at least, two repeats at least), or None."""
    n, best = len(names), None
    for period in range(SHORTEST, min(n // 2, MOST_PERIOD) + 1):
        same = np.diff(np.r_[0, (names[:-period] == names[period:]).astype(np.int8), 0])
        lo, hi = np.flatnonzero(same == 1), np.flatnonzero(same == -1)
        if not len(lo):
            continue
        k = int(np.argmax(hi - lo))
        repeats = (int(hi[k] - lo[k]) + period) // period
        if repeats >= 2 and (best is None or repeats * period > best[1] * best[2]):
            best = (int(lo[k]), period, repeats)
    return best


def _add_repeats(
    trace: TraceColumns,
    nesting: Nesting,
    rows: dict[tuple, KernelSequence],
    launch: int,
    acts: np.ndarray,
    start: int,
    period: int,
    repeats: int,
) -> None:
    """One launch's repeats added to its graph's row (made on its first launch)."""
    x = trace.x
    run = acts[start : start + period * repeats]
    key = (int(x.name[launch]), tuple(x.name[run[:period]].tolist()))
    row = rows.get(key)
    if row is None:
        row = rows[key] = KernelSequence(
            op=trace.name_of(launch),
            stack=_stack(trace, nesting, launch),
            kernels=[trace.names[int(k)] for k in x.name[run[:period]]],
            count=0,
            device_ns=0,
            cpu_ns=0,
            graph=True,
        )
    row.count += repeats
    row.device_ns += int(x.dur[run].sum())
    row.cpu_ns += int(x.dur[launch])
    row.occurrences += run[::period].tolist()
    row.activities += run.tolist()


def replayed(owner: np.ndarray) -> tuple[int, int]:
    """(graph launches that replayed something, the device activities they replayed), from each event's graph owner:
    activities no op launched, so no sequence is keyed by them."""
    mine = owner[owner >= 0]
    return len(distinct(mine)), len(mine)


def _thread_runs(
    trace: TraceColumns, launcher: np.ndarray, nesting: Nesting, act: np.ndarray, roots: np.ndarray
) -> Runs:
    """Each root's activities: those launched under it on its thread (a run of the activities sorted by their call's
    position in the nesting), the outermost of the roots with the same run kept."""
    where = nesting.pos[launcher[act]]
    order = np.lexsort((trace.x.ts[act], where))
    act, where = act[order], where[order]
    lo = np.searchsorted(where, nesting.pos[roots], "left")
    hi = np.searchsorted(where, nesting.span_end[roots], "left")
    keep = hi - lo >= SHORTEST
    roots, lo, hi = _outermost(roots[keep], lo[keep], hi[keep], nesting.depth[roots[keep]])
    return act, roots, lo, hi


def _step_runs(trace: TraceColumns, launcher: np.ndarray, act: np.ndarray, steps: np.ndarray) -> Runs:
    """Each step's activities: those launched from any thread of its rank while it ran (the autograd thread's
    backward too), in launch order: the activities sorted by (rank, call start), one run per step."""
    x = trace.x
    rank = rank_of_events(trace)
    call = launcher[act]
    order = np.lexsort((x.ts[act], x.ts[call], ranks_at(rank, act)))
    act, call = act[order], call[order]
    act_rank, step_rank = np.asarray(ranks_at(rank, act)), np.asarray(ranks_at(rank, steps))
    lo, hi = np.zeros(len(steps), np.int64), np.zeros(len(steps), np.int64)
    for r in distinct(step_rank).tolist():  # one pass per rank
        a, b = np.searchsorted(act_rank, r, "left"), np.searchsorted(act_rank, r, "right")
        mine = step_rank == r
        starts = x.ts[call[a:b]]
        lo[mine] = a + np.searchsorted(starts, x.ts[steps[mine]], "left")
        hi[mine] = a + np.searchsorted(starts, x.ts[steps[mine]] + x.dur[steps[mine]], "left")
    keep = hi - lo >= SHORTEST
    return act, steps[keep], lo[keep], hi[keep]


def _grouped(
    trace: TraceColumns, nesting: Nesting, names: np.ndarray, act: np.ndarray, roots: np.ndarray, lo, hi
) -> list[KernelSequence]:
    """The roots grouped by their name's key and their run's names (its length and two hashes); those that recur."""
    if not len(roots):
        return []
    x = trace.x
    key = np.column_stack([names[x.name[roots]], hi - lo, *(_run_hash(x.name[act], lo, hi, b) for b in _BASES)])
    _, group, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    group = group.ravel()
    recur = counts[group] >= 2
    roots, lo, hi, group = roots[recur], lo[recur], hi[recur], group[recur]
    if not len(roots):
        return []
    by = np.lexsort((x.ts[roots], group))
    roots, lo, hi, group = roots[by], lo[by], hi[by], group[by]
    dur = np.concatenate([[0], np.cumsum(x.dur[act], dtype=np.int64)])
    device = dur[hi] - dur[lo]
    firsts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    ends = [*firsts[1:].tolist(), len(group)]
    return [
        _sequence(trace, nesting, act, roots[a:b], lo[a:b], hi[a:b], int(device[a:b].sum()))
        for a, b in zip(firsts.tolist(), ends, strict=True)
    ]


def _outermost(
    roots: np.ndarray, lo: np.ndarray, hi: np.ndarray, depth: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Of the roots with the same launches (the same run of activities), the shallowest by depth: a wrapper chain
    counts once."""
    if not len(roots):
        return roots, lo, hi
    order = np.lexsort((depth, hi, lo))
    roots, lo, hi = roots[order], lo[order], hi[order]
    first = np.r_[True, (lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1])]
    return roots[first], lo[first], hi[first]


def _keyed_names(trace: TraceColumns) -> np.ndarray:
    """Per name id, the id a root is keyed by: every ProfilerStep#N as one id past every name; every instance of a
    module class (nn.Module: Linear_0, _1, ...) as its first instance's."""
    ids = np.arange(len(trace.names) + 1, dtype=np.int64)
    ids[[k for k, n in enumerate(trace.names) if _STEP.match(n)]] = len(trace.names)
    first: dict[str, int] = {}
    for k, n in enumerate(trace.names):
        m = _MODULE.match(n)
        if m:
            ids[k] = first.setdefault(m.group(1), k)
    return ids


def _modules(trace: TraceColumns) -> np.ndarray:
    """Per event: is it a module's Python frame (nn.Module: NAME_N)?"""
    named = np.array([bool(_MODULE.match(n)) for n in trace.names] + [False])
    return named[trace.x.name] & (trace.x.cat == int(Cat.PYTHON))


def _run_hash(values: np.ndarray, lo: np.ndarray, hi: np.ndarray, base: np.uint64) -> np.ndarray:
    """A polynomial hash (mod 2**64) of values[lo:hi] for each run: sum of v[j] * base**(j - lo), from prefix sums
    of v[j] * base**j and the inverse of base**lo (base is odd, so it has one)."""
    n = len(values)
    with np.errstate(over="ignore"):
        powers = np.cumprod(np.r_[np.uint64(1), np.full(n, base, np.uint64)], dtype=np.uint64)
        inverse = np.uint64(pow(int(base), -1, 2**64))
        inverses = np.cumprod(np.r_[np.uint64(1), np.full(n, inverse, np.uint64)], dtype=np.uint64)
        terms = (values.astype(np.uint64) + np.uint64(1)) * powers[:n]
        prefix = np.concatenate([[np.uint64(0)], np.cumsum(terms, dtype=np.uint64)])
        return ((prefix[hi] - prefix[lo]) * inverses[lo]).view(np.int64)


def _sequence(
    trace: TraceColumns,
    nesting: Nesting,
    act: np.ndarray,
    roots: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    device: int,
) -> KernelSequence:
    """One group of occurrences as a row: named by its first occurrence."""
    x = trace.x
    first = int(roots[0])
    kernels = [trace.names[int(k)] for k in x.name[act[lo[0] : hi[0]]]]
    runs = np.concatenate([act[a:b] for a, b in zip(lo.tolist(), hi.tolist(), strict=True)])
    return KernelSequence(
        op=_shown(trace.name_of(first)),
        stack=_stack(trace, nesting, first),
        kernels=kernels,
        count=len(roots),
        device_ns=device,
        cpu_ns=int(x.dur[roots].sum()),
        occurrences=roots.tolist(),
        activities=runs[np.argsort(x.ts[runs], kind="stable")].tolist(),
    )


def _shown(name: str) -> str:
    """A root's name as a row gives it: any step as ProfilerStep*, a module as its class (nn.Module: Linear)."""
    if _STEP.match(name):
        return STEP_NAME
    m = _MODULE.match(name)
    return m.group(1) if m else name


def _stack(trace: TraceColumns, nesting: Nesting, event: int) -> list[str]:
    """The modules, ops and annotations above an event, outermost first (other Python frames left out)."""
    x, up, out = trace.x, int(nesting.time_parent[event]), []
    while up >= 0:
        if int(x.cat[up]) in ROOT_CATS or _MODULE.match(trace.name_of(up)):
            out.append(_shown(trace.name_of(up)))
        up = int(nesting.time_parent[up])
    return out[::-1]
