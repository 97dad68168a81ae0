"""Compare two traces: ops, kernels, steps and summaries side by side.

Kernels are matched by exact name, except Triton kernels, which are matched with their trailing
_N counter removed (triton_poi_fused_add_0 and triton_poi_fused_add_3 are the same kernel).
Ops are the key_averages host rows, compared by self CPU time (which adds up to the total).
Steps are paired in order (the first profiled step of A with the first of B), each with its CPU span,
the device work it launched and how long the user waited for it (steps.py); the median step is the
median of those waits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ..steps import Step, typical
from .results import Results
from .summary import Summary

TRITON_COUNTER = re.compile(r"_\d+$")


def kernel_key(name: str) -> str:
    """The name kernels are matched by."""
    return TRITON_COUNTER.sub("", name) if name.startswith("triton_") else name


DiffStatus = Literal["only A", "only B", "both"]


@dataclass
class DiffRow:
    name: str
    count_a: int
    count_b: int
    time_a_us: float
    time_b_us: float

    @property
    def delta_us(self) -> float:
        return self.time_b_us - self.time_a_us

    @property
    def status(self) -> DiffStatus:
        if not self.count_a:
            return "only B"
        return "only A" if not self.count_b else "both"


@dataclass
class Diff:
    ops: list[DiffRow]
    kernels: list[DiffRow]
    steps_a: list[Step]
    steps_b: list[Step]
    summary_a: Summary
    summary_b: Summary

    @property
    def step_time_a(self) -> float:
        return _typical(self.steps_a, self.summary_a)

    @property
    def step_time_b(self) -> float:
        return _typical(self.steps_b, self.summary_b)

    @property
    def cpu_only(self) -> bool:
        """Both traces are CPU only: the GPU rows (all zero) are left out."""
        return self.summary_a.cpu_only and self.summary_b.cpu_only

    @property
    def slower_pct(self) -> float:
        """How much slower B's typical step is than A's, in percent (negative: faster)."""
        a = self.step_time_a
        return 100.0 * (self.step_time_b - a) / a if a else 0.0


def _typical(steps: list[Step], s: Summary) -> float:
    return typical([st.elapsed_us for st in steps]) if steps else s.wall_us


def diff(a: Results, b: Results) -> Diff:
    return Diff(
        ops=_pair(_op_times(a), _op_times(b)),
        kernels=_pair(_kernel_times(a), _kernel_times(b)),
        steps_a=a.summary.steps,
        steps_b=b.summary.steps,
        summary_a=a.summary,
        summary_b=b.summary,
    )


def _op_times(a: Results) -> dict[str, tuple[int, float]]:
    return {r.name: (r.count, r.self_cpu_us) for r in a.ops.rows if not r.is_device}


def _kernel_times(a: Results) -> dict[str, tuple[int, float]]:
    out: dict[str, tuple[int, float]] = {}
    for r in a.kernels:
        count, total = out.get(kernel_key(r.name), (0, 0.0))
        out[kernel_key(r.name)] = (count + r.count, total + r.total_us)
    return out


def _pair(a: dict[str, tuple[int, float]], b: dict[str, tuple[int, float]]) -> list[DiffRow]:
    """One row per name seen in either side, largest absolute change first."""
    rows = []
    for name in {**a, **b}:
        (count_a, time_a), (count_b, time_b) = a.get(name, (0, 0.0)), b.get(name, (0, 0.0))
        rows.append(DiffRow(name, count_a, count_b, float(time_a), float(time_b)))
    return sorted(rows, key=lambda r: -abs(r.delta_us))
