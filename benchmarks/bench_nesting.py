"""The nesting of a big trace, in numpy's passes against the compiled walk (numba), each in fresh processes.

Each round runs, in turn, one process per side: it opens the trace from tracetui's cache (written once before the
rounds), then times the display nesting the ops table reads (`Analysis.time_nesting`: visiting order, the pieces
nested side by side in threads, the arrays by event), on arrays touched for the first time, as a first `summary`
meets them. The compiled side imports numba before the clock starts (the compiled scan's process has). Prints the
medians of wall and CPU time per side and their ratio, per round and over the rounds.
Run: python benchmarks/bench_nesting.py TRACE [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ONE = """
import json, sys, time
from tui.process.heap import for_big_arrays
for_big_arrays()
import tui.model.nesting as nesting
from tui.model import load_trace
from tui.model.analysis import Analysis
if sys.argv[2] == "compiled":
    import numba  # noqa: F401 - as the compiled scan's process has
    nesting.compiled_module().warm()  # loaded from numba's cache
else:
    nesting._compiled = lambda: None
a = Analysis(load_trace(sys.argv[1]))
wall, cpu = time.perf_counter(), time.process_time()
nested = len(a.time_nesting.order)
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu, "nested": nested}))
"""


def once(trace: Path, side: str, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", ONE, str(trace), side], env=env, cwd=ROOT, capture_output=True)
    if out.returncode:
        raise SystemExit(out.stderr.decode()[-2000:])
    return json.loads(out.stdout.decode().splitlines()[-1])


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("trace", type=Path)
    opts.add_argument("--rounds", type=int, default=5)
    args = opts.parse_args()
    env = {**os.environ, "TRACETUI_CACHE_DIR": tempfile.mkdtemp(prefix="tracetui-nesting-"), "PYTHONPATH": str(ROOT)}
    once(args.trace, "passes", env)  # writes the cache, uncounted
    sides: dict[str, list[dict]] = {"passes": [], "compiled": []}
    for k in range(args.rounds):
        for side in sides if k % 2 == 0 else reversed(list(sides)):
            sides[side].append(once(args.trace, side, env))
        p, c = sides["passes"][-1], sides["compiled"][-1]
        print(
            f"round {k + 1}: passes {p['wall']:.3f} s (CPU {p['cpu']:.3f}), compiled {c['wall']:.3f} s "
            f"(CPU {c['cpu']:.3f}), compiled / passes {c['wall'] / p['wall']:.3f}"
        )
    med = {
        side: {key: statistics.median(r[key] for r in runs) for key in ("wall", "cpu")} for side, runs in sides.items()
    }
    ratios = [c["wall"] / p["wall"] for p, c in zip(sides["passes"], sides["compiled"], strict=True)]
    print(f"{sides['passes'][0]['nested']:,} events nested; medians of {args.rounds} rounds:")
    for side, m in med.items():
        print(f"  {side:9s} {m['wall']:.3f} s wall, {m['cpu']:.3f} s CPU")
    print(f"  compiled / passes: wall {statistics.median(ratios):.3f} (per round {min(ratios):.3f}-{max(ratios):.3f})")


if __name__ == "__main__":
    main()
