"""What leaving without Python's teardown saves (tui/process/leave.py): a report command as the `tracetui` program
runs it, against the same command with the teardown kept, in one run.

Each round runs both sides once, in fresh processes and in turn, so the machine's drift falls on both: "kept" is
the program with leave.at_once replaced by a function that returns (Python then exits as it always did), "left"
the program as it ships. Prints each side's median wall time (process start to exit, as a shell sees it), the
time from the last byte of output to the exit, and the ratio left / kept.
Run: python benchmarks/bench_exit.py TRACE [--rounds 5] [--cached] [--command summary]
(TRACE: e.g. the 1 GB tile benchmarks/tile.py makes; without --cached each run is a first load, --no-cache; the
decode is msgspec's, as every probe's, unless TRACETUI_DECODE says: `native` for the compiled scan, compiled once)
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.probe import ROOT, environment  # noqa: E402

PROGRAM = (
    "import sys\n"
    "if sys.argv.pop(1) == 'kept':\n"
    "    import tui.process.leave as leave\n"
    "    leave.at_once = lambda code: None\n"
    "from tui.cli import main\n"
    "sys.exit(main())\n"
)


def timed(side: str, words: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds from start to exit, seconds from the output's end to the exit) of one run."""
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", PROGRAM, side, *words], stdout=subprocess.PIPE, env=env, cwd=ROOT)
    assert child.stdout is not None
    last = start
    while child.stdout.read1(1 << 16):  # type: ignore[attr-defined]
        last = time.perf_counter()
    child.wait()
    end = time.perf_counter()
    if child.returncode:
        raise SystemExit(f"{side}: {' '.join(words)} failed ({child.returncode})")
    return end - start, end - last


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cached", action="store_true", help="a cached command (the cache written first)")
    ap.add_argument("--command", default="summary")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-exit-") as cache:
        env = environment(Path(cache))
        words = [args.command, args.trace] + ([] if args.cached else ["--no-cache"])
        if args.cached:
            timed("left", [args.command, args.trace, "--format", "json"], env)  # writes the entry, not replayed after
        runs: dict[str, list[tuple[float, float]]] = {"kept": [], "left": []}
        for _ in range(args.rounds):
            for side in runs:
                runs[side].append(timed(side, words, env))
    medians = {side: [statistics.median(r[k] for r in rs) for k in (0, 1)] for side, rs in runs.items()}
    print(f"{' '.join(words)}: {args.rounds} rounds, each side in turn")
    for side, (wall, tail) in medians.items():
        print(f"  {side:5s} wall {wall:.3f} s (median)   output's end to exit {tail:.3f} s")
    print(f"  left / kept: {medians['left'][0] / medians['kept'][0]:.3f}")


if __name__ == "__main__":
    main()
