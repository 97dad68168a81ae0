"""Explain rules about communication: collectives that launched nothing (world size 1, or a backend that moves CUDA
tensors through the host), from the summary's count (host_collectives.py); notes in tui/tables/explain.py."""

from __future__ import annotations

from ...analysis import Analysis
from ..summary import Summary
from .findings import Figure, Finding, Rule, us


def collectives_without_kernels(a: Analysis, s: Summary) -> list[Finding]:
    """A GPU run's collective calls that launched no collective kernel: the run looks distributed and is not."""
    h = s.host_collectives
    if not h.calls:
        return []
    figures: dict[str, Figure] = {
        "calls": h.calls,
        "names": ", ".join(f"{name} ×{n:,}" for name, n in h.names),
        "cpu": us(h.cpu_us),
        "world_size": h.world_size,
        "backend": h.backend,
        "copies": h.copies,
    }
    why = "no-kernel-one-rank" if h.world_size == 1 else "no-kernel-host" if h.backend == "gloo" or h.copies else ""
    parts = ["no-kernel"] + ([why] if why else ["no-kernel-unknown"])
    title = "Collectives that launched nothing"
    return [Finding("collective-no-kernel", title, figures, h.events, parts, h.calls)]


COMMS_RULES = [Rule("collective-no-kernel", collectives_without_kernels)]
