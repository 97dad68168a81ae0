"""Profiler steps: one rule to find them and one rule for a slow (cold) step, for every view.

A step is a ProfilerStep#N event on a CPU thread, whatever its category (user_annotation since
2022, Operator or cpu_op in 2021 builds). The copy Kineto writes on the GPU (gpu_user_annotation) is
not a second step. A step is slow when it takes at least SLOW_FACTOR times the typical step (the
median of the others) and at least SLOW_MIN_EXCESS_US more: the first step, slow, is a cold start.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

import numpy as np

from .cats import GPU_CATS
from .trace import Trace

STEP_NAME = re.compile(r"^ProfilerStep#(\d+)$")
SLOW_FACTOR = 1.5
SLOW_MIN_EXCESS_US = 100.0


@dataclass
class Step:
    name: str
    dur_us: float
    start_us: float


def step_events(trace: Trace, rank: int | None = None) -> np.ndarray:
    """The ProfilerStep#N events on CPU threads (of one rank, if given), in time order."""
    ids = [k for k, n in enumerate(trace.names) if STEP_NAME.match(n)]
    x = trace.x
    on_cpu = np.array([t.kind == "cpu" and (rank is None or t.rank == rank) for t in trace.tracks] or [False])
    sel = np.flatnonzero(np.isin(x.name, ids) & ~np.isin(x.cat, [int(c) for c in GPU_CATS]) & on_cpu[x.track])
    return sel[np.argsort(x.ts[sel], kind="stable")]


def steps(trace: Trace, t0: int, rank: int | None = None) -> list[Step]:
    """The steps in step order, starting times relative to t0."""
    x = trace.x
    number = {n: int(m.group(1)) for n in trace.names if (m := STEP_NAME.match(n))}
    out = [Step(trace.name_of(i), x.dur[i] / 1000.0, (x.ts[i] - t0) / 1000.0) for i in step_events(trace, rank)]
    return sorted(out, key=lambda s: (number[s.name], s.start_us))


def typical(durations: list[float]) -> float:
    """The typical step: the median (0 without steps)."""
    return statistics.median(durations) if durations else 0.0


def is_slow(dur_us: float, typical_us: float) -> bool:
    """The one criterion for a slow step, shared by the overview's bars, explain and the readings."""
    return typical_us > 0 and dur_us >= SLOW_FACTOR * typical_us and dur_us - typical_us >= SLOW_MIN_EXCESS_US


def cold_first(durations: list[float]) -> float | None:
    """How many times a typical step the first one took, when it is slow (a cold start); else None."""
    if len(durations) < 2:
        return None
    usual = typical(durations[1:])
    return durations[0] / usual if is_slow(durations[0], usual) else None


def step_starts(trace: Trace, rank: int | None = None) -> dict[int, int]:
    """ProfilerStep number -> start (ns) on the CPU (of one rank, if given); the first of a number wins."""
    out: dict[int, int] = {}
    for i in step_events(trace, rank).tolist():
        m = STEP_NAME.match(trace.name_of(i))
        if m:
            out.setdefault(int(m.group(1)), int(trace.x.ts[i]))
    return out


def align_on_steps(starts: dict[int, dict[int, int]]) -> tuple[str, dict[int, int]]:
    """Shifts (ns) per rank that line the ranks up on the first ProfilerStep#N they all have (the lowest rank
    stays put), and the method: "ProfilerStep#N", or "raw clock" (no shifts) without a common step."""
    common = set.intersection(*(set(s) for s in starts.values())) if len(starts) > 1 else set()
    if not common:
        return "raw clock", {r: 0 for r in starts}
    n = min(common)
    ref = starts[min(starts)][n]
    return f"ProfilerStep#{n}", {r: ref - s[n] for r, s in starts.items()}
