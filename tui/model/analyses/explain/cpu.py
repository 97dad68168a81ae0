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
from .savings import verdict_path

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
        "path_op": _op_on_path(a),  # the op a fix speeds up (fixes.py)
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
    longest = calls[np.argsort(-a.trace.x.dur[calls], kind="stable")][:MARKED]  # the calls marked
    rank = {name: k for k, (name, _) in enumerate(marked)}  # listed by their op's rank in the note (its names' order)
    by_op = np.argsort(np.array([rank[a.trace.name_of(int(e))] for e in longest], np.int64), kind="stable")
    return [Finding("cpu-time", TITLES[part], figures, longest[by_op].tolist(), parts, total=len(calls))]


def _op_on_path(a: Analysis) -> str:
    """The op with the most time on the verdict's path, the typical step's, where a fix's saving is solved ("":
    none): the window's top op by self time can be another, its time in a cold first step (a fresh-eyes run:
    aten::addmm 2x faster saved 7% of the typical step, aten::mm, first on its path, 10%)."""
    path = verdict_path(a)
    on_path: dict[str, int] = {}
    for item in path.items if path is not None else ():
        if item.kind == "cpu_op":
            on_path[item.name] = on_path.get(item.name, 0) + item.dur_ns
    return max(on_path, key=lambda name: on_path[name]) if on_path else ""


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
