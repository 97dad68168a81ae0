"""Where a cached `summary` spends its time, phase by phase in the order the command line spends it.

Each run is a fresh process (bytecode written, as on a user's machine) that sets the allocators and the BLAS
threads (tui/process/heap.py) and imports numpy, then the command line and parses the arguments, then the loader
(tui/model/load), then the model and the summary's report, opens the trace from its cache and renders the summary:
the milliseconds of each phase, medians over the runs. The trace must be in the cache already (run `tracetui
summary TRACE` once with the same TRACETUI_CACHE_DIR). --tree runs an earlier checkout (a git worktree, or
`git archive REV | tar -x -C DIR`) for a side-by-side breakdown; the interpreter's own start is not counted.
Run: python benchmarks/cached_phases.py TRACE [--runs 7] [--tree DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.probe import ROOT  # noqa: E402

PHASES = """
import json, sys, time
marks = [("start", time.perf_counter())]
from tui.process.heap import for_big_arrays
for_big_arrays()  # as main() does first for a command that loads a trace
import numpy
marks.append(("heap settings, import numpy", time.perf_counter()))
import tui.cli.commands as commands
args = commands.build_parser("summary").parse_args(["summary", sys.argv[1]])
marks.append(("command line: import, parse", time.perf_counter()))
import tui.model.load.behind
marks.append(("loader: import (tui/model/load)", time.perf_counter()))
import tui.model.loading
from tui.cli.options import load
from tui.reports import render_summary
marks.append(("model and report: import", time.perf_counter()))
results = load(args.trace, False)
marks.append(("open from the cache", time.perf_counter()))
render_summary(results, "text")
marks.append(("read the values, render", time.perf_counter()))
print(json.dumps({b[0]: (b[1] - a[1]) * 1000 for a, b in zip(marks, marks[1:])}))
"""


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("trace")
    opts.add_argument("--runs", type=int, default=7)
    opts.add_argument("--tree", type=Path, default=ROOT, help="the checkout to run (default: this one)")
    args = opts.parse_args()
    # bytecode written, as on a user's machine (probe.environment), and the cache TRACETUI_CACHE_DIR names
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(args.tree)}
    runs = []
    for _ in range(args.runs):
        done = subprocess.run(
            [sys.executable, "-c", PHASES, args.trace], env=env, cwd=args.tree, capture_output=True, text=True
        )
        if done.returncode:
            raise SystemExit(f"the run failed: {done.stderr.strip()[-500:]}")
        runs.append(json.loads(done.stdout))
    print(f"{args.tree}: ms, median of {len(runs)} fresh processes")
    for phase in runs[0]:
        print(f"  {phase:34s}{statistics.median(r[phase] for r in runs):7.1f}")
    print(f"  {'all of them':34s}{statistics.median(sum(r.values()) for r in runs):7.1f}")


if __name__ == "__main__":
    main()
