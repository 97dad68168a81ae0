"""Compare two traces: ops, kernels, steps and summaries side by side.

Ops and kernels are matched by name, less what differs from run to run in the same code: an object's
address (`<built-in method append of list object at 0x7fdb…>` reads `… at 0x…>`), and a Triton kernel's
trailing _N counter (triton_poi_fused_add_0 and triton_poi_fused_add_3 are the same kernel). Rows whose
names differ only there are one row. Ops are the key_averages host rows, compared by self CPU time (which
adds up to the total).
Steps are paired in order (the first profiled step of A with the first of B), each with its CPU span,
the device work it launched and how long the user waited for it (steps.py); the typical step is
steps.typical_step (the median wait, cold steps left out). A change of the typical step no larger than the runs'
own spread (the larger of the two captures' step-to-step spreads, steps.spread) is noise: within_spread, and the
regression gate (--fail-if-slower) passes it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ..steps import Step, TypicalStep
from .results import Results
from .summary import Summary

TRITON_COUNTER = re.compile(r"_\d+$")
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def kernel_key(name: str) -> str:
    """The name ops and kernels are matched by: the same code reads the same in any run (see the docstring)."""
    name = ADDRESS.sub(" at 0x…", name)
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

    @property
    def spread(self) -> float | None:
        """The runs' own spread, a share: the larger of A's and B's step-to-step spreads (None: neither has two
        steps to tell it)."""
        return runs_spread(
            self.summary_a.typical if self.steps_a else None, self.summary_b.typical if self.steps_b else None
        )

    @property
    def within_spread(self) -> bool:
        """Is the change of the typical step no larger than the runs' own spread (noise, not a change)?"""
        return self.spread is not None and abs(self.slower_pct) <= 100.0 * self.spread

    def gate(self, limit_pct: float) -> bool:
        """Does B pass --fail-if-slower limit_pct: no slower than the limit, or than the runs' own spread?"""
        return self.slower_pct <= max(limit_pct, 100.0 * (self.spread or 0.0))


def runs_spread(*typical: TypicalStep | None) -> float | None:
    """The larger of the captures' step-to-step spreads (steps.spread), None when none has one. The larger, not a
    mean: each typical step is only known to within its own spread."""
    known = [t.spread for t in typical if t is not None and t.spread is not None]
    return max(known) if known else None


def _typical(steps: list[Step], s: Summary) -> float:
    return s.typical.us if steps else s.wall_us


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
    return _by_key((r.name, r.count, r.self_cpu_us) for r in a.ops.rows if not r.is_device)


def _kernel_times(a: Results) -> dict[str, tuple[int, float]]:
    return _by_key((r.name, r.count, r.total_us) for r in a.kernels)


def _by_key(rows: Iterable[tuple[str, int, float]]) -> dict[str, tuple[int, float]]:
    """Calls and time summed per matching name (kernel_key)."""
    out: dict[str, tuple[int, float]] = {}
    for name, count, time in rows:
        calls, total = out.get(kernel_key(name), (0, 0.0))
        out[kernel_key(name)] = (calls + count, total + time)
    return out


def _pair(a: dict[str, tuple[int, float]], b: dict[str, tuple[int, float]]) -> list[DiffRow]:
    """One row per name seen in either side, largest absolute change first."""
    rows = []
    for name in {**a, **b}:
        (count_a, time_a), (count_b, time_b) = a.get(name, (0, 0.0)), b.get(name, (0, 0.0))
        rows.append(DiffRow(name, count_a, count_b, float(time_a), float(time_b)))
    return sorted(rows, key=lambda r: -abs(r.delta_us))
