"""Explain rule for torch.compile compiling inside the window: how long, what it compiled, which steps it held."""

from __future__ import annotations

from ...analysis import Analysis
from ..summary import Summary
from .findings import Figure, Finding, Quantity, Rule, us


def compiling_rule(a: Analysis, s: Summary) -> list[Finding]:
    """torch.compile compiled for 8.4 s of the 9.5 s window: 2 frame compiles (1 recompile), 4 graphs."""
    c = s.compiling
    if not c.compiled:
        return []
    figures: dict[str, Figure] = {
        "us": us(c.us),
        "wall": us(s.wall_us),
        "share": Quantity(c.us / s.wall_us if s.wall_us else 0.0, "fraction"),
        "frames": c.frames,
        "recompiles": c.recompiles,
        "graphs": c.graphs,
        "steps": len(c.steps),
    }
    parts = ["compiling"] + (["compiling-recompiles"] if c.recompiles else [])
    parts += ["compiling-steps"] if c.steps else []
    return [Finding("compiling", "torch.compile compiling in the window", figures, c.spans[:1000], parts, len(c.spans))]


COMPILING_RULES = [Rule("compiling", compiling_rule)]
