"""Loading: bytes (mmap or gunzip) → chunks → typed decode → columns → Trace, through the on-disk cache.

load_trace is read lazily, so importing a light module of the package (cachedir, to find a file's cache entry)
imports neither numpy nor the decode."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .loader import load_trace

__all__ = ["load_trace"]


def __getattr__(name: str) -> Any:
    if name != "load_trace":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .loader import load_trace

    return load_trace
