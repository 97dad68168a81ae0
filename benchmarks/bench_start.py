"""How fast the command line starts: --version, --help and a cached summary, this checkout against earlier commits.

Each round runs every command once per side, in fresh processes and in turn (`python -c pass` first, the
interpreter's own start), each side from its own tree (an earlier commit in a git worktree) with its own cache,
written by an uncounted summary first; so the machine's drift falls on every side alike. Prints the median wall
time and CPU time (user + system: steadier on a shared machine) of each, and their ratios to the first side (the
oldest base).
Run: python benchmarks/bench_start.py [--base REV ...] [--rounds 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_views import worktree  # noqa: E402
from benchmarks.probe import ROOT, environment, run  # noqa: E402

TRACES = {"bert": "sample_traces/h100-bert-small.json.gz", "a100": "sample_traces/a100-train-control.json.gz"}
COMMANDS = {
    "--version": ["--version"],
    "--help": ["--help"],
    "summary bert, cached": ["summary", TRACES["bert"]],
    "summary a100 (1.7 MB), cached": ["summary", TRACES["a100"]],
}


def measure(sides: dict[str, Path], scratch: Path) -> dict[str, tuple[float, float]]:
    """One round: the interpreter, then each command on each side; (wall, CPU) seconds by 'side: command'."""
    alone = run([sys.executable, "-c", "pass"])
    got = {"python -c pass": (alone.seconds, alone.cpu)}
    for name, argv in COMMANDS.items():
        for side, tree in sides.items():  # -m runs the side's tree: the working directory comes first on sys.path
            env = {**environment(scratch / f"cache-{side}"), "PYTHONPATH": str(tree)}
            done = run([sys.executable, "-m", "tui", *argv], env, cwd=tree)
            got[f"{side}: {name}"] = (done.seconds, done.cpu)
    return got


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("--base", nargs="*", default=["ec6da83", "9d8736d"], help="the commits to compare with")
    opts.add_argument("--rounds", type=int, default=15)
    args = opts.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="tracetui-start-"))
    sides = {rev: worktree(rev, scratch / rev) for rev in args.base} | {"now": ROOT}
    try:
        for side, tree in sides.items():  # each side's cache, written once (uncounted)
            env = {**environment(scratch / f"cache-{side}"), "PYTHONPATH": str(tree)}
            for trace in TRACES.values():
                run([sys.executable, "-m", "tui", "summary", trace], env, cwd=tree)
        rounds = [measure(sides, scratch) for _ in range(args.rounds)]
    finally:
        for rev in args.base:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(sides[rev])], check=False)
    report(rounds, list(sides))


def report(rounds: list[dict[str, tuple[float, float]]], sides: list[str]) -> None:
    for which, fact in (("wall", 0), ("CPU", 1)):

        def ms(key: str, fact: int = fact) -> float:
            return statistics.median(r[key][fact] for r in rounds) * 1000

        base = ms("python -c pass")
        print(f"{which} ms, median of {len(rounds)} rounds (ratio to {sides[0]}); python -c pass: {base:.0f} ms")
        print(f"{'command':32s}" + "".join(f"{side:>18s}" for side in sides))
        for name in COMMANDS:
            first = ms(f"{sides[0]}: {name}")
            cells = [f"{ms(f'{side}: {name}'):7.0f} ({ms(f'{side}: {name}') / first:4.2f}x)" for side in sides]
            print(f"{name:32s}" + "".join(f"{cell:>18s}" for cell in cells))


if __name__ == "__main__":
    main()
