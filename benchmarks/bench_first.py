"""The first load of a big trace, this checkout against an earlier commit and `orjson.loads`, in one run.

Each round runs, in fresh processes and in turn: orjson.loads of the file, then for each side
load_trace(no cache) alone and `tracetui summary --no-cache`, each side from its own tree (the earlier
commit in a git worktree), so that the machine's drift falls on all of them. Prints the medians of
wall time, CPU time (the process tree's user + system) and peak RSS of the tree, and the ratios.
Run: python benchmarks/bench_first.py TRACE [--base REV] [--rounds 3] [--cached]
(with TRACETUI_DECODE=native set, both sides read with the compiled scan, numba's compile done before the rounds)
(TRACE: e.g. the 1 GB file that `bench_big.py --keep DIR` leaves in DIR)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_views import worktree  # noqa: E402
from benchmarks.probe import ROOT, Run, environment, run  # noqa: E402

LOAD = "from tui.model import load_trace; t = load_trace({path!r}, use_cache=False); print(t.n)"
ORJSON = "import orjson; d = orjson.loads(open({path!r}, 'rb').read()); print(len(d['traceEvents']))"


def measure(sides: dict[str, Path], trace: Path, scratch: Path, cached: bool = False) -> dict[str, Run]:
    """One round: orjson, then each side's load alone and its first summary (with cached: then its cached summary
    and ops table, each side with its own cache, written by an uncounted `summary` and `ops` first)."""
    got = {"orjson.loads": run([sys.executable, "-c", ORJSON.format(path=str(trace))], environment(scratch))}
    for side, tree in sides.items():  # run from the side's tree: `-c` and `-m` put the working directory first
        env = {**environment(scratch / f"cache-{side}"), "PYTHONPATH": str(tree)}
        got[f"{side}: load_trace"] = run([sys.executable, "-c", LOAD.format(path=str(trace))], env, cwd=tree)
        summary = [sys.executable, "-m", "tui", "summary", str(trace), "--no-cache"]
        got[f"{side}: summary --no-cache"] = run(summary, env, cwd=tree)
        if cached:
            ops = [sys.executable, "-m", "tui", "ops", str(trace), "--limit", "0", "--format", "json"]
            run(summary[:-1], env, cwd=tree), run(ops, env, cwd=tree)  # write the cache, uncounted
            got[f"{side}: summary, cached"] = run(summary[:-1], env, cwd=tree)
            got[f"{side}: ops json, cached"] = run(ops, env, cwd=tree)
    return got


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("trace", type=Path)
    opts.add_argument("--base", default="main", help="the commit to compare with")
    opts.add_argument("--rounds", type=int, default=3)
    opts.add_argument("--cached", action="store_true", help="also time cached summary and ops per side")
    args = opts.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="tracetui-first-"))
    sides = {"base": worktree(args.base, scratch / "base"), "now": ROOT}
    try:
        if os.environ.get("TRACETUI_DECODE") == "native":  # numba's compile, once per tree, is no load's time
            for tree in sides.values():
                env = {**environment(scratch / "warm"), "PYTHONPATH": str(tree)}
                run([sys.executable, "-c", "from tui.model.load import scanned; scanned.warm()"], env, cwd=tree)
        rounds = [measure(sides, args.trace.resolve(), scratch, args.cached) for _ in range(args.rounds)]
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(sides["base"])], check=False)
    report(rounds, args.trace, args.base)


def report(rounds: list[dict[str, Run]], trace: Path, base: str) -> None:
    size = trace.stat().st_size
    print(f"{trace.name}: {size / 1e9:.2f} GB; median of {len(rounds)} rounds; base = {base}")

    def median(name: str, fact: str) -> float:
        return statistics.median(getattr(r[name], fact) for r in rounds)

    wall, cpu = median("orjson.loads", "seconds"), median("orjson.loads", "cpu")
    for name in rounds[0]:
        w, c, peak = median(name, "seconds"), median(name, "cpu"), median(name, "peak_gb")
        print(
            f"  {name:28s} wall {w:6.2f} s = {w / wall:4.2f}x orjson   cpu {c:6.2f} s = {c / cpu:4.2f}x"
            f"   peak {peak:5.2f} GB = {peak * 1e9 / size:4.2f}x file"
        )


if __name__ == "__main__":
    main()
