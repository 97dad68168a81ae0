"""The trace model: loading, columns, tracks, nesting, links and analyses (no Textual, no torch).

The package's names are read lazily, so importing a light module of it (errors, for one) costs nothing more."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .errors import TraceError
    from .load import load_trace
    from .trace import TraceColumns

__all__ = ["TraceColumns", "TraceError", "load_trace"]
_HOMES = {"TraceColumns": ".trace", "TraceError": ".errors", "load_trace": ".load"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_HOMES[name], __name__), name)
