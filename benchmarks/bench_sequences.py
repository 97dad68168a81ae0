"""Recurring kernel sequences: `tracetui kernels --sequences` against HTA 0.5's get_frequent_cuda_kernel_sequences on
the same traces, each in a fresh process from the file (no cache), the best of --rounds.

tracetui finds every recurring sequence of every op, annotation and module, and solves what fusing each of the top
10 saves on the critical path; HTA finds those of the ops whose name holds one operator name (ProfilerStep here:
the one name every trace has) and writes the overlaid trace. HTA is run as shipped (its microsecond rounding on)
and, on a trace in nanoseconds, also with HTA_DISABLE_NS_ROUNDING=1.
Run: python benchmarks/bench_sequences.py --hta /tmp/hta-venv-i50/bin/python [--rounds 2] [TRACE ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "traces"
TRACES = [
    SHARED / "cuda-h200-series" / "attn_naive.json.gz",
    SHARED / "hta-2023-trace-filter-2rank",
    SHARED / "hta-2024-04-v100-ns-resolution",
]
HTA = """
import sys, tempfile, logging
from hta.trace_analysis import TraceAnalysis
logging.disable(logging.CRITICAL)
ta = TraceAnalysis(trace_dir=sys.argv[1])
df = ta.get_frequent_cuda_kernel_sequences(operator_name="ProfilerStep", output_dir=tempfile.mkdtemp(), visualize=False)
print(len(df))
"""


def timed(argv: list[str], env: dict | None = None) -> tuple[float, str]:
    t = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    said = done.stderr.strip().splitlines()[-1:]
    if done.returncode == 0:
        return time.perf_counter() - t, "ok"
    return time.perf_counter() - t, "FAILED: " + (said[0][:90] if said else "")


def hta_folder(trace: Path, keep: Path) -> Path:
    """HTA reads a folder: a file alone is linked into one of its own."""
    if trace.is_dir():
        return trace
    folder = keep / trace.stem
    folder.mkdir(exist_ok=True)
    link = folder / trace.name
    if not link.exists():
        link.symlink_to(trace)
    return folder


def best(argv: list[str], rounds: int, env: dict | None = None) -> str:
    runs = [timed(argv, env) for _ in range(rounds)]
    return f"{min(t for t, _ in runs):.2f} s ({runs[-1][1]})"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("traces", nargs="*", type=Path, default=TRACES)
    p.add_argument("--hta", required=True, metavar="PYTHON", help="an interpreter with HTA 0.5")
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    tracetui = [sys.executable, "-m", "tui.cli", "kernels"]
    with tempfile.TemporaryDirectory() as keep:
        for trace in args.traces:
            files = sorted(trace.glob("*.json.gz")) if trace.is_dir() else [trace]
            one = files[0] if len(files) == 1 else trace  # a folder of one file: that file (a folder is a job)
            ours = best([*tracetui, str(one), "--sequences", "--no-cache", "--format", "json"], args.rounds)
            folder = str(hta_folder(trace, Path(keep)))
            theirs = best([args.hta, "-c", HTA, folder], args.rounds)
            print(f"{trace.name}: tracetui {ours}; HTA {theirs}")
            if "ns-resolution" in trace.name:
                env = {**os.environ, "HTA_DISABLE_NS_ROUNDING": "1"}
                print(f"  HTA with HTA_DISABLE_NS_ROUNDING=1: {best([args.hta, '-c', HTA, folder], 1, env)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
