"""Explain rule for a CPU-only capture: where its CPU time goes (inside the ops, the top ones named, or between
them) and what to do, so explain says what the summary's verdict judged (it said only "no rule fired")."""

from __future__ import annotations

import numpy as np

from ...analysis import Analysis
from ...cats import Cat
from ..no_gpu import no_gpu
from ..summary import CPU_SHORT_OP_US, CPU_WORDS, Summary
from .findings import Figure, Finding, Quantity, Rule, us
from .readings import also_between, small_ops

MARKED = 200  # calls of the top ops marked on the timeline; the count says how many in all
TITLES = {  # as the overview's "The fix worth most ...: TITLE, which saves ..." reads them
    "cpu-in-ops": "CPU time in the ops' own work",
    "cpu-in-small-ops": "Small CPU ops whose fixed costs add up",
    "cpu-between-ops": "CPU time between the ops (Python, data loading)",
}


def cpu_time(a: Analysis, s: Summary) -> list[Finding]:
    """A CPU-only trace judged cpu-in-ops or cpu-between-ops: the verdict's reading, its figures, its top ops."""
    if not s.cpu_only or s.verdict not in CPU_WORDS:
        return []
    part = "cpu-between-ops" if s.verdict == "cpu-between-ops" else "cpu-in-small-ops" if small_ops(s) else "cpu-in-ops"
    figures: dict[str, Figure] = {
        "share": Quantity(s.cpu_in_ops_us / s.wall_us if s.wall_us else 0.0, "fraction"),
        "window": us(s.wall_us),
        "top": [us(t, name) for name, t in s.cpu_top_self],
        "op_avg": us(s.cpu_op_avg_us),
        "short_share": Quantity(s.cpu_short_op_share, "fraction"),
        "short_call": us(CPU_SHORT_OP_US),
        "short_top": [us(t, name) for name, t in s.cpu_short_top],
        "top_op": s.cpu_top_self[0][0] if s.cpu_top_self else "",
    }
    figures |= {"lead": _lead(s), "python": _python_hint(a, s)}
    between = max(s.wall_us - s.cpu_in_ops_us, 0.0)
    figures |= {
        "between": us(between),
        "between_share": Quantity(between / s.wall_us if s.wall_us else 0.0, "fraction"),
    }
    parts = [part] + (["cpu-also-between"] if part != "cpu-between-ops" and also_between(s) else [])
    marked = s.cpu_short_top if part == "cpu-in-small-ops" else s.cpu_top_self  # the ops the fix is about
    ids = [k for k, n in enumerate(a.trace.names) if n in {name for name, _ in marked}]
    calls = np.flatnonzero(np.isin(a.trace.x.name, ids)) if ids else np.zeros(0, np.int64)
    events = calls[np.argsort(-a.trace.x.dur[calls], kind="stable")][:MARKED].tolist()
    return [Finding("cpu-time", TITLES[part], figures, events, parts, total=len(calls))]


def _lead(s: Summary) -> str:
    """What the trace says of the GPU: nothing (a CPU run), or nothing in the part of a cut file that was read."""
    return no_gpu(s.cut_short) + "."


def _python_hint(a: Analysis, s: Summary) -> str:
    """Where the Python between the ops is: the code table when the trace has its frames, else how to record them
    (or, in a cut file, that they are written after the ops too)."""
    if (a.trace.x.cat == int(Cat.PYTHON)).any():
        return "tracetui code lists the Python between them per function."
    hint = "profile with --with-stack to see the Python code between them (tracetui code lists it per function)."
    return (
        f"If the run recorded its Python frames, they are in the lost part too; else {hint}"
        if s.cut_short
        else hint[0].upper() + hint[1:]
    )


CPU_RULES = [Rule("cpu-time", cpu_time)]
