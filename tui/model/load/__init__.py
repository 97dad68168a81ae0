"""Loading: bytes (mmap or gunzip) → chunks → typed decode → columns → Trace, through the on-disk cache."""

from .loader import load_trace

__all__ = ["load_trace"]
