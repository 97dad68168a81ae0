"""Headless reports: the tables of tui.tables as text (rich), CSV, JSON or markdown."""

from .diff import render_diff
from .explain import render_explain
from .memory import render_memory
from .ranks import render_ranks
from .summary import render_summary
from .tables import render_code, render_kernels, render_ops

__all__ = [
    "render_code",
    "render_diff",
    "render_explain",
    "render_kernels",
    "render_memory",
    "render_ops",
    "render_ranks",
    "render_summary",
]
