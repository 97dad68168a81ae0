"""The command line's manners: --version, each command's --help epilog, and help that fits 80 columns."""

from __future__ import annotations

import argparse
import shutil
import textwrap
from typing import TYPE_CHECKING

from .options import LATER

if TYPE_CHECKING:
    from pathlib import Path

HELP_WIDTH = 80  # no help line is wider (a narrower terminal gets narrower ones)

EPILOGS = {
    "open": (
        "opens the viewer (no output); a folder of ranks opens as one job, a folder of captures on its newest",
        "none",
        "tracetui open traces/mlp/64x128x768x3072_bf16_warm_eager.json",
    ),
    "summary": (
        "the wall time, GPU busy time and utilization, launches, the verdict and why, and the step times",
        "--format text; on a folder of captures, the newest (its JSON adds capture and other_captures)",
        "tracetui summary trace.json.gz --format json",
    ),
    "steps": (
        "one row per ProfilerStep#N: its start, CPU span, GPU busy time, when it ended, elapsed time, launches",
        "--format text; times from the trace's first event; the same rows as SQL's steps table",
        "tracetui steps trace.json.gz --format csv",
    ),
    "ops": (
        "torch's key_averages() table from the trace: one row per op, self and total CPU and device time",
        "sorted by device total (CPU total on CPU-only traces), every row (--limit 0), --format text",
        "tracetui ops trace.json --sort self_cpu --limit 20",
    ),
    "kernels": (
        "one row per GPU kernel: calls, total, mean, std, min and max time, share of GPU time; --queues: one row per "
        "stream; --sequences: the kernel sequences ops launch again and again, and what fusing each saves",
        "sorted by total time, every row (--limit 0), --format text",
        "tracetui kernels trace.json --sequences --top 10",
    ),
    "code": (
        "time per function at its def line (Python frames of a with_stack trace), with the device time launched from it",
        "sorted by self device time (a CPU-only capture: self CPU), library frames folded into your code's (--all-frames: not), every row",
        "tracetui code traces/step/cold_eager_stack.json --limit 15",
    ),
    "memory": (
        "peak memory per device, the ops that allocate most, and what is never freed",
        "--format text; needs a trace captured with profile_memory=True",
        "tracetui memory trace.json --format json",
    ),
    "ranks": (
        "one row per rank of a folder of per-rank traces: step time, busy, collectives, the stragglers",
        "a local process pool, one process per core (--workers N), --format text",
        "tracetui ranks job_traces/ --format csv",
    ),
    "diff": (
        "A and B side by side: summary, steps, then the ops and kernels that changed most",
        "the 20 rows that changed most (--limit 0: all); DIR alone compares its newest two captures",
        "tracetui diff before.json after.json --fail-if-slower 5",
    ),
    "explain": (
        "what the patterns in a trace mean: cold start, launch overhead, idle GPU, kernel names, with the evidence",
        "--format text",
        "tracetui explain trace.json",
    ),
    "roofline": (
        "per op: FLOPs and bytes from the recorded shapes, achieved FLOP/s and GB/s against the GPU's roofs",
        "the roofs of the trace's GPU (deviceProperties; --gpu or --peaks to choose), every row, --format text",
        "tracetui roofline trace.json --limit 20",
    ),
    "workloads": ("the built-in workloads of tracetui profile, one line each", "none", "tracetui workloads"),
}


def version() -> str:
    """tracetui's version from the installed package's metadata (the source's when it is not installed)."""
    from importlib import metadata  # here, not at the top: 20 ms of every start, for --version only

    try:
        return metadata.version("tracetui")
    except metadata.PackageNotFoundError:
        from .. import __version__

        return __version__


def versions() -> str:
    """--version: tracetui's version (the package's metadata), the Python running it, and the torch that
    `tracetui profile` would import in this Python: found and read from its metadata, never imported (that takes seconds)."""
    import platform
    import sys

    return "\n".join(
        [f"tracetui {version()}", f"Python {platform.python_version()} ({sys.executable})", torch_version()]
    )


def torch_version() -> str:
    """The torch this Python would import: its version, what it was built for, where it is; or that there is none."""
    from importlib import metadata, util
    from pathlib import Path

    spec = util.find_spec("torch")  # the first torch on sys.path, as `import torch` finds it, not imported
    if spec is None or not spec.origin:
        return "torch: not installed in this Python (only tracetui profile needs it)"
    folder = Path(spec.origin).parent
    try:
        number = metadata.version("torch")
    except metadata.PackageNotFoundError:
        number = "of unknown version"
    return f"torch {number}{_built_for(folder)} ({folder}): what tracetui profile runs"


def _built_for(folder: Path) -> str:
    """', CUDA 12.4' (or ROCm, XPU, CPU only) from the torch/version.py beside the package, '' when unreadable."""
    import re

    try:
        text = (folder / "version.py").read_text("utf-8")
    except OSError:
        return ""
    builds = dict(re.findall(r"^(cuda|hip|xpu)\b[^=\n]*=\s*'([^']+)'", text, re.MULTILINE))
    names = {"cuda": "CUDA", "hip": "ROCm (HIP)", "xpu": "XPU"}
    return ", " + (", ".join(f"{names[k]} {v}" for k, v in builds.items()) or "CPU only")


class Help(argparse.RawDescriptionHelpFormatter):
    """argparse's help, at most HELP_WIDTH columns; descriptions and epilogs are wrapped line by line, so their
    layout (prints:, defaults:, example:) stays and a wrapped line is indented under its label."""

    def __init__(self, prog: str) -> None:
        width = min(HELP_WIDTH, shutil.get_terminal_size((HELP_WIDTH, 24)).columns)
        super().__init__(prog, width=width, max_help_position=30)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        """An option's help, its {} filled in now where it has a LATER (options.table_opts: a table's sort keys)."""
        text = super()._get_help_string(action)
        later = getattr(action, LATER, None)
        return text.format(later()) if text and later is not None else text

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        lines = []
        for para in _paragraphs(text):
            label = para.split(" ", 1)[0].endswith(":")
            lines += textwrap.wrap(para, width, initial_indent=indent, subsequent_indent=indent + "  " * label) or [""]
        return "\n".join(lines)


def _paragraphs(text: str) -> list[str]:
    """Lines joined into paragraphs: a new one at each `label:` line (prints:, defaults:, example:) or blank line."""
    out: list[str] = []
    for line in text.splitlines():
        words = line.strip()
        if not words or not out or words.split(" ", 1)[0].endswith(":") or not out[-1]:
            out.append(words)
        else:
            out[-1] += " " + words
    return out


def add_epilogs(sub) -> None:
    """Give each command's --help what it prints, its defaults and one example (commands with their own keep it),
    all of it within HELP_WIDTH columns."""
    for name, parser in sub.choices.items():
        parser.formatter_class = Help
        if name not in EPILOGS or parser.epilog:
            continue
        prints, defaults, example = EPILOGS[name]
        parser.epilog = f"prints: {prints}\ndefaults: {defaults}\nexample: {example}"
