"""Capture torch.profiler traces of built-in workloads or user code (the only torch importer)."""
