"""The viewer on a big cached trace, this checkout against an earlier commit, in one run: first paint,
steady RSS, and how long each key of a tour of the views held the UI.

Each side runs its own benchmarks/viewer_probe.py from its own tree (the earlier commit in a git worktree)
with its own cache, alternating sides for each round so that the machine's drift falls on both.
Run: python benchmarks/bench_views.py TRACE [--base REV] [--rounds 2]
(TRACE: e.g. the 1 GB file that `bench_big.py --keep DIR` leaves in DIR)
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

from benchmarks.probe import ROOT, environment, run  # noqa: E402


def probe(tree: Path, trace: Path, cache: Path) -> dict:
    """One cached viewer run of `tree`'s probe: paint, rss, and (key, frozen ms) in the tour's order."""
    env = {**environment(cache), "PYTHONPATH": str(tree)}
    out = run([sys.executable, str(tree / "benchmarks" / "viewer_probe.py"), str(trace), repr(time.time())], env).out
    facts: dict = {"keys": []}
    for line in out.splitlines():
        word, *rest = line.split()
        if word == "key":
            facts["keys"].append((rest[0], float(rest[3])))
        elif word in ("paint", "settled", "rss"):
            facts[word] = float(rest[0])
    return facts


def worktree(rev: str, where: Path) -> Path:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), rev], check=True, capture_output=True
    )
    return where


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("trace", type=Path)
    opts.add_argument("--base", default="25c595e", help="the commit to compare with")
    opts.add_argument("--rounds", type=int, default=2)
    args = opts.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="tracetui-ab-"))
    sides = {"base": worktree(args.base, scratch / "base"), "now": ROOT}
    try:
        for side, tree in sides.items():  # each side writes its own cache once, then every round reads it
            env = {**environment(scratch / f"cache-{side}"), "PYTHONPATH": str(tree)}
            run([sys.executable, "-m", "tui", "summary", str(args.trace)], env)
            probe(tree, args.trace, scratch / f"cache-{side}")
        got: dict[str, list[dict]] = {side: [] for side in sides}
        for _ in range(args.rounds):
            for side, tree in sides.items():
                got[side].append(probe(tree, args.trace, scratch / f"cache-{side}"))
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(sides["base"])], check=False)
    report(got, args.base)


def report(got: dict[str, list[dict]], base: str) -> None:
    def median(side: str, fact: str) -> float:
        return statistics.median(r[fact] for r in got[side])

    print(f"cached viewer, median of {len(got['now'])} rounds; base = {base}")
    for fact, unit, scale in (("paint", "s", 1.0), ("settled", "s", 1.0), ("rss", "GB", 1e-9)):
        b, n = median("base", fact) * scale, median("now", fact) * scale
        print(f"  {fact:8s} base {b:6.2f} {unit}  now {n:6.2f} {unit}  = {n / b:4.2f}x")
    print("  UI held per key (ms, worst of the rounds): key  base  now  ratio")
    tour = [k for k, _ in got["now"][0]["keys"]]
    if tour != [k for k, _ in got["base"][0]["keys"]]:
        raise SystemExit("the two probes toured different keys: compare their viewer_probe.py KEYS")
    for i, key in enumerate(tour):
        b = max(r["keys"][i][1] for r in got["base"])
        n = max(r["keys"][i][1] for r in got["now"])
        print(f"    {key:6s} {b:6.1f} {n:6.1f}  {n / b if b else float('nan'):5.2f}x")


if __name__ == "__main__":
    main()
