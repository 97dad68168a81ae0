"""What a trace without GPU activity says of the GPU, one sentence for every place that says it (explain, kernels,
the overview, the viewer's GPU views): a CPU-only run, or a file cut short whose GPU records may be in the lost part."""

from __future__ import annotations

from .summary import CUT_SHORT


def no_gpu(cut_short: bool) -> str:
    """No GPU activity: a CPU-only run, or, in a file cut short (torch writes the GPU records after the CPU ones),
    none in the part that was read. A sentence without its full stop."""
    if cut_short:
        return f"No GPU activity in the part of the file that was read; {CUT_SHORT}"
    return "No GPU activity in this trace: it ran on the CPU only"
