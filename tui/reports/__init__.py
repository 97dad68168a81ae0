"""Headless reports: the tables of tui.tables as text (rich), CSV, JSON or markdown.

Each renderer is imported on first use: a command pays only for its own report.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .breakdown import render_breakdown
    from .critical import render_critical
    from .diff import render_diff
    from .explain import render_explain
    from .memory import render_memory
    from .op_kernels import render_op_kernels
    from .queues import render_queues
    from .ranks import render_ranks
    from .roofline import render_roofline
    from .sequences import render_sequences
    from .steps import render_steps
    from .summary import render_summary
    from .tables import render_code, render_kernels, render_ops

HOMES = {
    "render_breakdown": "breakdown",
    "render_op_kernels": "op_kernels",
    "render_queues": "queues",
    "render_critical": "critical",
    "render_code": "tables",
    "render_diff": "diff",
    "render_explain": "explain",
    "render_kernels": "tables",
    "render_memory": "memory",
    "render_ops": "tables",
    "render_ranks": "ranks",
    "render_roofline": "roofline",
    "render_sequences": "sequences",
    "render_steps": "steps",
    "render_summary": "summary",
}
__all__ = [
    "render_breakdown",
    "render_op_kernels",
    "render_queues",
    "render_critical",
    "render_code",
    "render_diff",
    "render_explain",
    "render_kernels",
    "render_memory",
    "render_ops",
    "render_ranks",
    "render_roofline",
    "render_sequences",
    "render_steps",
    "render_summary",
]


def __getattr__(name: str) -> Any:
    if name not in HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{HOMES[name]}", __name__), name)
