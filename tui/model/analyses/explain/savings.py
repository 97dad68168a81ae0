"""What each finding's fix would buy: its what-if (fixes.py) re-solved on the critical path of the verdict's step.

The window is chosen in one place (window()): the step the critical report reads by default. Its graph is built
once, each distinct spec solved once on it (critical/whatif.py), and each finding gets a Saving: the path before
and after, and, where it saves nothing or next to nothing, why (the GPU waits for the CPU, the CPU for the GPU, it is
not on the path, none of it runs in the step). Findings are then ordered: those that save something, the most first;
then the notes no what-if applies to, in rule order; last those that save nothing.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...analysis import Analysis
from ..critical import CriticalPath, WhatIfError, Window, WindowError, critical_path, find_window, parse_spec
from ..critical.whatif import recorded, what_if
from ..graphs.replay import graph_owner
from .findings import Finding, Saving
from .fixes import fix

LITTLE = 0.01  # a fix that saves less than this share of the path saves next to nothing: it sinks to the end
CPU_BOUND = 0.5  # the path says the GPU waits for the CPU when CPU work is at least this share of it
NO_WINDOW = "no-window"  # the trace has no path to solve (no events in the window)
JOB = "job"  # a folder of ranks: a what-if works on one rank's file
SAME_FIX = "same-fix"  # another finding tells the same change's saving
GPU_CLASSES = ("gpu_compute_bound", "gpu_communication_bound", "gpu_memcpy_bound")


def window(a: Analysis) -> Window:
    """The window every saving is solved in: the typical step, as the verdict and the critical report read it
    (Results.typical_window; a bare Analysis, the critical path's own default)."""
    typical = getattr(a, "typical_window", None)
    return typical if isinstance(typical, Window) else find_window(a.trace)


def verdict_path(a: Analysis) -> CriticalPath | None:
    """The critical path of that window (None: the trace has none): the cached one when it is the same window."""
    try:
        w = window(a)
        kept = getattr(a, "critical", None)  # Results keeps the default window's path
        if isinstance(kept, CriticalPath) and kept.event == w.event and kept.window == w.name:
            return kept
        return critical_path(a, w, graph_owners(a))
    except WindowError:
        return None


def cpu_bound_path(a: Analysis) -> CriticalPath | None:
    """The verdict's path when CPU work is CPU_BOUND of it or more: the GPU waits for the CPU (None otherwise)."""
    p = verdict_path(a)
    if p is None or p.length_ns <= 0 or p.breakdown.get("cpu_bound", 0) < CPU_BOUND * p.length_ns:
        return None
    return p


def with_savings(a: Analysis, findings: list[Finding]) -> list[Finding]:
    """The findings with what their fixes buy, ordered by it."""
    fixes = [fix(a, f) for f in findings]
    specs = sorted({spec for spec, _ in fixes if spec})
    if not specs:
        return order([replace(f, no_saving=why) for f, (_, why) in zip(findings, fixes, strict=True)])
    solved, failed = _solve(a, specs)
    told = _teller(findings, fixes)
    out = []
    for k, (f, (spec, why)) in enumerate(zip(findings, fixes, strict=True)):
        if spec in solved and told[spec] == k:
            out.append(replace(f, saving=solved[spec]))
        elif spec in solved:
            out.append(replace(f, no_saving=f"{SAME_FIX}:{findings[told[spec]].title}"))
        else:
            out.append(replace(f, no_saving=why or failed))
    return order(out)


def _teller(findings: list[Finding], fixes: list[tuple[str, str]]) -> dict[str, int]:
    """Per spec, the finding that tells its saving when several share it (a kernel-name note yields to the roofline
    finding about the same kernels); the others say it is the same change."""
    told: dict[str, int] = {}
    for k, (spec, _) in enumerate(fixes):
        if spec and (spec not in told or findings[told[spec]].rule.startswith("kernel-")):
            told[spec] = k
    return told


def _solve(a: Analysis, specs: list[str]) -> tuple[dict[str, Saving], str]:
    """Each spec's saving on the window's path (one graph for all), or why none could be solved."""
    if getattr(a.trace, "job", None):
        return {}, JOB
    try:
        w = window(a)
        base = recorded(a, w, graph_owners(a))
    except WindowError:
        return {}, NO_WINDOW
    before = base[1]
    out = {}
    for spec in specs:
        try:
            found = what_if(a, w, [parse_spec(spec)], graph_owners(a), base)
            out[spec] = replace(saving_of(spec, before, found.after, found.matched[0]), caveats=found.caveats)
        except WhatIfError:  # none of it runs in this window
            out[spec] = saving_of(spec, before, before, [], "absent")
    return out, ""


def saving_of(spec: str, before: CriticalPath, after: CriticalPath, matched: list[str], why: str = "") -> Saving:
    """What a change saves on the path, with why it saves next to nothing where it does (the fusion savings too)."""
    bound = before.bound_by
    share = before.breakdown.get(bound, 0) / before.length_ns if before.length_ns else 0.0
    s = Saving(spec, before.window, before.length_ns, after.length_ns, bound, after.bound_by, share, matched, why)
    return s if why or s.share >= LITTLE else replace(s, why=_why(spec, bound))


def _why(spec: str, bound: str) -> str:
    """Why a change saves next to nothing: the path runs through the other side, or the change is off it."""
    on_gpu = spec.startswith("kernel:")
    if on_gpu and bound == "cpu_bound":
        return "gpu-waits"
    if not on_gpu and bound in GPU_CLASSES:
        return "cpu-waits"
    return "off-path"


def order(findings: list[Finding]) -> list[Finding]:
    """Those that save anything, the most first (a 22 us saving before every note); then the notes no what-if applies
    to (rule order); last those that save nothing."""

    def key(f: Finding) -> tuple[int, int]:
        if f.saving is None:
            return (1, 0)
        if f.saving.saving_ns <= 0:
            return (2, 0)
        return (0, -f.saving.saving_ns)

    return sorted(findings, key=key)


def graph_owners(a: Analysis) -> np.ndarray:
    """Each event's graph owner (the launch that replays it), as the what-ifs take it."""
    kept = getattr(a, "graph_owner", None)  # Results keeps it
    return kept if isinstance(kept, np.ndarray) else graph_owner(a.trace)
