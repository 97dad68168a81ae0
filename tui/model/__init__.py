"""The trace model: loading, columns, tracks, nesting, links and analyses (no Textual, no torch)."""

from .errors import TraceError
from .load import load_trace
from .trace import Trace

__all__ = ["Trace", "TraceError", "load_trace"]
