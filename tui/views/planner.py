"""The one planner of background work: which results to compute, on which nesting, in which order.

Phases go in order (structure, link, aggregate); within a phase, what the first view shown needs
comes first, then what the other views need in the registry's order, then what the details panel
and the explain notes need. Each result is computed once: the order only says which is ready first.
"""

from __future__ import annotations

from ..model.analyses.results import Results
from ..model.analysis import PHASES, Analysis, derived
from .registry import MAIN, ViewSpec

STRUCTURE: tuple[derived, ...] = (Analysis.child_index, Analysis.self_ns, Analysis.launches_below, Analysis.gpu_below)
DETAILS: tuple[derived, ...] = (Analysis.child_index, Analysis.self_ns, Analysis.launches_below)
EXTRA: tuple[derived, ...] = (
    Results.links,
    Results.memory_curves,
    Results.launch_queues,
    Results.findings,
    Results.notes,
)


def plan(results: Results, shown: Analysis, first: ViewSpec) -> list[tuple[Analysis, derived]]:
    """(where, what) pairs to compute: the shown nesting's structure, then every view's results."""
    wanted: list[tuple[Analysis, derived]] = [(shown, r) for r in STRUCTURE]
    if shown is not results:  # the tables, the code view and the details' code stack nest with the frames
        # asked for by name: the tables and gpu_below read back from a cache entry never nest the frames, and the
        # details panel shows "your code" only once this nesting is ready (details_side.py)
        wanted += [(results, Analysis.nesting), (results, Analysis.gpu_below)]
    for spec in (first, *MAIN):
        wanted += [(shown if spec.on_structure else results, r) for r in spec.needs]
    wanted += [(results, r) for r in EXTRA]
    unique: list[tuple[Analysis, derived]] = []
    for pair in wanted:
        if not any(pair[0] is a and pair[1] is r for a, r in unique):
            unique.append(pair)
    return sorted(unique, key=lambda pair: PHASES.index(pair[1].phase))  # stable: the order above within a phase
