"""How fast the command line starts: --version, --help and a cached summary, this checkout against earlier commits.

Each round runs every command once per side, in fresh processes and in turn (`python -c pass` first, the
interpreter's own start, and `python -c "import numpy"`, the floor of any command that reads a trace), each side
from its own tree (an earlier commit in a git worktree) with its own cache, written by an uncounted summary first;
so the machine's drift falls on every side alike. Each cached command runs twice a round: first from its entry
("cached": the outputs kept before are removed), then asked again ("replayed": written back, tui/cli/replay.py;
the same as "cached" on a side older than that). Prints the median wall time and CPU time (user + system:
steadier on a shared machine) of each, and their ratios to the first side (the oldest base); then the cached
re-open of the big tile (`--tile`, made by benchmarks/tile.py: `summary` and `ops --limit 0 --format json`, issue
55's goal of 0.25 s on 2 cores) as ratios to the first side and to `import numpy` of the same rounds.
Run: python benchmarks/bench_start.py [--base REV ...] [--rounds 15] [--tile /tmp/tile/tiled-1000mb.json]
"""

from __future__ import annotations

import argparse
import shutil
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
TILE = Path("/tmp/tile/tiled-1000mb.json")  # benchmarks/tile.py's 1 GB tile of a real H100 capture
GOAL_S = 0.25  # issue 55: a cached summary and ops of the 1 GB tile, on 2 cores
FLOORS = {"python -c pass": "pass", 'python -c "import numpy"': "import numpy"}


def tile_commands(tile: Path) -> dict[str, list[str]]:
    """The cached re-open of the big tile: the summary and the whole ops table as JSON."""
    return {
        f"summary {tile.name}, cached": ["summary", str(tile)],
        f"ops json {tile.name}, cached": ["ops", str(tile), "--limit", "0", "--format", "json"],
    }


def replayed(commands: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each cached command followed by itself again, asked a second time with the same options: its output
    written back from the cache entry (tui/cli/replay.py; the same as "cached" on a side older than it). In
    this order: a cached run forgets every kept output of its side's cache."""
    both: dict[str, list[str]] = {}
    for name, argv in commands.items():
        both[name] = argv
        if ", cached" in name:
            both[name.replace(", cached", ", replayed")] = argv
    return both


def forget_replays(cache: Path) -> None:
    """The kept outputs of the benchmark's own cache removed: the next cached command opens its entry."""
    for folder in cache.glob("**/replay"):
        shutil.rmtree(folder, ignore_errors=True)


def measure(sides: dict[str, Path], scratch: Path) -> dict[str, tuple[float, float]]:
    """One round: the interpreter alone and importing numpy, then each command on each side; (wall, CPU) seconds
    by 'side: command'."""
    got = {}
    for name, code in FLOORS.items():
        alone = run([sys.executable, "-c", code], environment(scratch / "cache-floor"))
        got[name] = (alone.seconds, alone.cpu)
    for name, argv in COMMANDS.items():
        for side, tree in sides.items():  # -m runs the side's tree: the working directory comes first on sys.path
            env = {**environment(scratch / f"cache-{side}"), "PYTHONPATH": str(tree)}
            if ", cached" in name:  # opens the entry, and keeps its output for the replayed run next
                forget_replays(scratch / f"cache-{side}")
            done = run([sys.executable, "-m", "tui", *argv], env, cwd=tree)
            got[f"{side}: {name}"] = (done.seconds, done.cpu)
    return got


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("--base", nargs="*", default=["ec6da83", "9d8736d"], help="the commits to compare with")
    opts.add_argument("--rounds", type=int, default=15)
    opts.add_argument("--tile", type=Path, default=TILE, help="the big trace of the cached re-open ('' for none)")
    args = opts.parse_args()
    tiled = args.tile.is_file() and str(args.tile) not in ("", ".")
    COMMANDS.update(tile_commands(args.tile) if tiled else {})
    both = replayed(COMMANDS)
    COMMANDS.clear()
    COMMANDS.update(both)
    scratch = Path(tempfile.mkdtemp(prefix="tracetui-start-"))
    sides = {rev: worktree(rev, scratch / rev) for rev in args.base} | {"now": ROOT}
    try:
        for side, tree in sides.items():  # each side's cache, written once (uncounted)
            env = {**environment(scratch / f"cache-{side}"), "PYTHONPATH": str(tree)}
            for trace in [*TRACES.values(), *([str(args.tile)] if tiled else [])]:
                run([sys.executable, "-m", "tui", "summary", trace], env, cwd=tree)
        rounds = [measure(sides, scratch) for _ in range(args.rounds)]
    finally:
        for rev in args.base:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(sides[rev])], check=False)
        shutil.rmtree(scratch, ignore_errors=True)  # the caches: the tile's is 0.4 GB a side
    report(rounds, list(sides))
    if tiled:
        report_tile(rounds, list(sides), replayed(tile_commands(args.tile)))


def report(rounds: list[dict[str, tuple[float, float]]], sides: list[str]) -> None:
    for which, fact in (("wall", 0), ("CPU", 1)):

        def ms(key: str, fact: int = fact) -> float:
            return statistics.median(r[key][fact] for r in rounds) * 1000

        base = ms("python -c pass")
        print(f"{which} ms, median of {len(rounds)} rounds (ratio to {sides[0]}); python -c pass: {base:.0f} ms")
        print(f"{'command':36s}" + "".join(f"{side:>18s}" for side in sides))
        for name in COMMANDS:
            first = ms(f"{sides[0]}: {name}")
            cells = [f"{ms(f'{side}: {name}'):7.0f} ({ms(f'{side}: {name}') / first:4.2f}x)" for side in sides]
            print(f"{name:36s}" + "".join(f"{cell:>18s}" for cell in cells))


def report_tile(rounds: list[dict[str, tuple[float, float]]], sides: list[str], commands: dict) -> None:
    """The cached re-open: each side's median wall time, against the first side's and against importing numpy (the
    floor: numpy alone), both of the same rounds, and the goal."""

    def ms(key: str) -> float:
        return statistics.median(r[key][0] for r in rounds) * 1000

    numpy = ms('python -c "import numpy"')
    print(f'\ncached re-open, wall ms, median of {len(rounds)} rounds; python -c "import numpy": {numpy:.0f} ms')
    print(f"{'command':36s}{'side':>10s}{'ms':>7s}{'/ ' + sides[0]:>12s}{'/ numpy':>9s}  goal {GOAL_S * 1000:.0f} ms")
    for name in commands:
        first = ms(f"{sides[0]}: {name}")
        for side in sides:
            t = ms(f"{side}: {name}")
            met = "met" if t <= GOAL_S * 1000 else "not met"
            print(f"{name:36s}{side:>10s}{t:7.0f}{t / first:11.2f}x{t / numpy:8.2f}x  {met}")


if __name__ == "__main__":
    main()
