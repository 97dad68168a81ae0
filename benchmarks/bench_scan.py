"""The compiled scan's kernel and its grouping, this checkout against an earlier commit, on chunks of a big trace.

Each round runs, in turn, one fresh process per side (the earlier commit from a git worktree): it cuts the first
CHUNKS chunks of about 4 MB of events from TRACE, loads the scan from numba's cache (compiling it first, before
the clock, where the cache lacks it), then times per chunk the best of REPS runs of `scan.scan` (the kernel) and
of the grouping after it (`first_seen` of names and categories, `first_seen_tracks`). Both sides must read the
same rows (a checksum of the ints and floats; the hashes may differ between commits, the groups may not). Prints
MB/s per side and the ratio now / base per round. Needs numba (the fast extra).
Run: python benchmarks/bench_scan.py TRACE [--base REV] [--chunks 40] [--rounds 3] [--reps 5]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_views import worktree  # noqa: E402
from benchmarks.probe import ROOT  # noqa: E402

SIDE = r"""
import json, sys, time
import numpy as np
from tui.model.load import scan

path, count, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, "rb").read(count * 4_200_000 + (64 << 20))
at = data.find(b"{", data.find(b"[", data.find(b'"traceEvents"')))
chunks = []
while len(chunks) < count:
    end = data.find(b"},\n{", at + 4_000_000)
    if end < 0:
        break
    chunks.append(np.frombuffer(bytearray(b"[" + data[at : end + 1] + b"]"), np.uint8))
    at = end + 3
room = max(len(c) for c in chunks) // 10 + 16
ints, floats, hashes = np.empty((room, scan.INTS), np.int64), np.empty((room, 2)), np.empty((room, scan.HASHES), np.uint64)
scan.scan(chunks[0], ints, floats, hashes)  # compiled or loaded before the clock


def grouping(b, rows, h):
    for col, hcol in ((scan.NAME, scan.H_NAME), (scan.CAT, scan.H_CAT)):
        scan.first_seen(b, np.ascontiguousarray(h[:, hcol]), rows[:, col], rows[:, col + 1])
    return scan.first_seen_tracks(b, rows, h)


kernel = group = 0.0
check = 0
groups = 0
for b in chunks:
    best = best_group = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        k, why = scan.scan(b, ints, floats, hashes)
        best = min(best, time.perf_counter() - t)
        assert not why, scan.REASONS[why]
        rows, h = ints[:k].copy(), hashes[:k].copy()
        t = time.perf_counter()
        firsts, _ = grouping(b, rows, h)
        best_group = min(best_group, time.perf_counter() - t)
    kernel += best
    group += best_group
    check = (check * 31 + int(rows.sum()) + int(np.nan_to_num(floats[:k]).sum() * 1000)) % (1 << 61)
    groups += len(firsts)
mb = sum(map(len, chunks)) / 1e6
print(json.dumps({"mb": mb, "kernel": kernel, "group": group, "check": check, "groups": groups}))
"""


def side(tree: Path, trace: Path, chunks: int, reps: int) -> dict:
    env = {"PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1", "TRACETUI_DECODE": "native"}
    out = subprocess.run(
        [sys.executable, "-c", SIDE, str(trace), str(chunks), str(reps)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("trace", type=Path)
    opts.add_argument("--base", default="HEAD~1", help="the commit to compare with")
    opts.add_argument("--chunks", type=int, default=40)
    opts.add_argument("--rounds", type=int, default=3)
    opts.add_argument("--reps", type=int, default=5, help="runs per chunk, the best counted")
    args = opts.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="tracetui-scan-"))
    sides = {"base": worktree(args.base, scratch / "base"), "now": ROOT}
    try:
        got: dict[str, list[dict]] = {name: [] for name in sides}
        for _ in range(args.rounds):
            for name, tree in sides.items():
                got[name].append(side(tree, args.trace, args.chunks, args.reps))
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(sides["base"])], check=False)
    report(got, args)


def report(got: dict[str, list[dict]], args: argparse.Namespace) -> None:
    base, now = got["base"], got["now"]
    same = all(b["check"] == n["check"] and b["groups"] == n["groups"] for b, n in zip(base, now, strict=True))
    mb = now[0]["mb"]
    print(f"{args.trace.name}: {args.chunks} chunks, {mb:.0f} MB; best of {args.reps} per chunk; base = {args.base}")
    print(f"  rows and groups alike on both sides: {'yes' if same else 'NO'}")
    for part in ("kernel", "group"):
        ratios = [n[part] / b[part] for b, n in zip(base, now, strict=True)]
        speed = {name: statistics.median(mb / r[part] for r in runs) for name, runs in got.items()}
        print(
            f"  {part:6s}  base {speed['base']:6.0f} MB/s  now {speed['now']:6.0f} MB/s  now/base time "
            f"{statistics.median(ratios):.3f} (per round {', '.join(f'{r:.3f}' for r in ratios)})"
        )


if __name__ == "__main__":
    main()
