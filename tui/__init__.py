"""tracetui: a terminal viewer for PyTorch profiler traces."""

__version__ = "0.1.0"
