"""The first load against a base revision: `summary --no-cache` of this tree and of the base, alternately.

For each trace, in rounds: the floor (`open().read()` + `bytes.count`, as bench_floor.py), then the base tree's and
this tree's `summary --no-cache` in fresh processes (each with its own empty cache), the order swapped every round
so neither always runs second. The base is `git archive REV` in a scratch folder, run from there (`python -m tui`
puts it first on the path, and the decode workers inherit the path). Prints the CPU seconds of each process tree
(steadier than wall time on a shared host) and its wall seconds, min and median over rounds, the new/base ratio
of the CPU, and the CPU over the floor; the two outputs must be equal, else it stops.
Run: python benchmarks/bench_build.py TRACE [TRACE ...] [--base REV] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_floor import FLOOR  # noqa: E402
from benchmarks.probe import environment, python, run  # noqa: E402
from benchmarks.tile import ROOT  # noqa: E402


def export(rev: str, into: Path) -> Path:
    """The tree of rev, unpacked under into."""
    tree = into / "base"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def first_load(tree: Path, trace: Path, cache: Path) -> tuple[float, float, str]:
    """CPU s of the process tree, wall s, and the output of one `summary --no-cache` run from tree."""
    env = {**environment(cache), "PYTHONPATH": str(tree)}
    r = run([sys.executable, "-m", "tui", "summary", str(trace), "--no-cache"], env, cwd=tree)
    return r.cpu, r.seconds, r.out


def compare(trace: Path, trees: dict[str, Path], scratch: Path, rounds: int) -> None:
    cpu: dict[str, list[float]] = {side: [] for side in trees}
    wall: dict[str, list[float]] = {side: [] for side in trees}
    floors = []
    for k in range(rounds):
        floors.append(_floor(trace))
        outs = {}
        for side in list(trees)[:: 1 if k % 2 == 0 else -1]:
            c, w, outs[side] = first_load(trees[side], trace, scratch / f"cache-{side}-{k}")
            cpu[side].append(c)
            wall[side].append(w)
        if len(set(outs.values())) != 1:
            raise SystemExit(f"{trace.name}: the base and this tree print different summaries")
    print(f"\n{trace.name} ({trace.stat().st_size / 1e6:.0f} MB), {rounds} rounds; floor {min(floors):.2f} s (min)")
    for side in trees:
        c, w = cpu[side], wall[side]
        print(
            f"  {side:4}  CPU s min {min(c):6.2f} median {statistics.median(c):6.2f}   wall s min {min(w):6.2f} "
            f"median {statistics.median(w):6.2f}   CPU / floor (median of rounds) "
            f"{statistics.median(x / f for x, f in zip(c, floors, strict=True)):5.1f}x"
        )
    ratio = [n / b for n, b in zip(cpu["new"], cpu["base"], strict=True)]
    print(
        f"  new / base CPU, per round: {', '.join(f'{r:.3f}' for r in ratio)} (median {statistics.median(ratio):.3f})"
    )


def _floor(trace: Path) -> float:
    return float(python(FLOOR.replace("sys.argv[1]", repr(str(trace)))).out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+", type=Path)
    ap.add_argument("--base", default="HEAD", help="the revision to compare with (default: HEAD, the last commit)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        scratch = Path(tmp)
        trees = {"base": export(args.base, scratch), "new": ROOT}
        print(f"base {args.base} against the working tree {ROOT}")
        for trace in args.traces:
            compare(trace, trees, scratch, args.rounds)


if __name__ == "__main__":
    main()
