"""Where the first load's time goes: a sampling profile of `tracetui summary --no-cache`, per process kind.

Runs the command under py-spy (`pip install py-spy`; it follows the decode workers with --subprocesses)
and prints, for the main process and for the workers together, the functions with the most samples of
their own (self) and under them (total), in seconds of one core.
Run: python benchmarks/profile_load.py TRACE [--top 25] [--rate 50] [--keep FILE]
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.probe import environment  # noqa: E402

_PROCESS = re.compile(r';(?=process \d+:")')
_HEAD = re.compile(r'process (\d+):"(.*?)"(?:;(.*))?$', re.S)
_LINE = re.compile(r"\((.*?):\d+\)")

Counts = collections.Counter[str]


def record(trace: Path, out: Path, rate: int, cache: Path) -> None:
    """py-spy's collapsed stacks of one first load (every process of the tree)."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    argv = [spy, "record", "--subprocesses", "-r", str(rate), "-f", "raw", "-o", str(out), "--"]
    argv += [sys.executable, "-m", "tui", "summary", str(trace), "--no-cache"]
    subprocess.run(argv, env=environment(cache), check=True, capture_output=True)


def tally(raw: Path) -> tuple[dict[str, tuple[Counts, Counts]], Counts]:
    """Per process kind (main, worker): samples per function, self and total; and samples per process."""
    kinds: dict[str, tuple[Counts, Counts]] = collections.defaultdict(lambda: (Counts(), Counts()))
    procs: Counts = Counts()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        head = _HEAD.match(_PROCESS.split(stack)[-1])
        if head is None:
            continue
        pid, command, rest = head.groups()
        kind = "worker" if "spawn_main" in command else "main"
        frames = [_LINE.sub(lambda m: f"({Path(m.group(1)).name})", f) for f in (rest or "").split(";") if f]
        frames = [f for f in frames if "spawn_main(" not in f]
        n = int(count)
        procs[f"{kind} {pid}"] += n
        own, under = kinds[kind]
        if frames:
            own[frames[-1]] += n
        for f in set(frames):
            under[f] += n
    return kinds, procs


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("trace", type=Path)
    opts.add_argument("--top", type=int, default=25)
    opts.add_argument("--rate", type=int, default=50, help="samples per second")
    opts.add_argument("--keep", type=Path, help="keep py-spy's raw output here")
    args = opts.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        raw = args.keep or Path(tmp) / "profile.txt"
        record(args.trace, raw, args.rate, Path(tmp) / "cache")
        kinds, procs = tally(raw)
    for proc, n in sorted(procs.items()):
        print(f"{proc}: {n / args.rate:.1f} s of samples")
    for kind, (own, under) in kinds.items():
        total = sum(n for p, n in procs.items() if p.startswith(kind))
        for label, counts in (("self", own), ("total", under)):
            print(f"== {kind} processes, {label}")
            for name, n in counts.most_common(args.top):
                print(f"  {n / args.rate:6.2f} s {100 * n / total:5.1f}%  {name}")


if __name__ == "__main__":
    main()
