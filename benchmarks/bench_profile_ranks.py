"""Capture and read a job of N gloo ranks on this machine: `tracetui profile --nproc N allreduce` (2 and 4 ranks,
rank 1 slowed by 50 ms), then `tracetui ranks` on its folder cold (--no-cache) and warm (the cache's rows).

    python benchmarks/bench_profile_ranks.py [--ranks 2 4] [--out /tmp/bench-ranks]

Each time is one wall-clock run of the command in a fresh process (torch's import, the spawn of the ranks, the
rendezvous, the 5 steps, the export, and the ranks table the capture prints, all included).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    p.add_argument("--out", default="/tmp/bench-ranks")
    a = p.parse_args()
    tracetui = [sys.executable, "-m", "tui.cli"]
    cores = len(os.sched_getaffinity(0))
    print(f"cores {cores}, load {os.getloadavg()[0]:.1f}")
    print("| ranks | capture | ranks, cold | ranks, cached | folder |")
    print("|---:|---:|---:|---:|---:|")
    for n in a.ranks:
        folder = Path(a.out) / f"{n}"
        shutil.rmtree(folder, ignore_errors=True)
        profile = [*tracetui, "profile", "--nproc", str(n), "allreduce", "--slow-rank", "1", "--delay-ms", "50"]
        profile += ["--device", "cpu", "--dtype", "fp32", "--no-open", "-o", str(folder)]
        capture = timed(profile + (["--oversubscribe"] if n > cores else []))
        cold = timed([*tracetui, "ranks", str(folder), "--no-cache"])
        timed([*tracetui, "ranks", str(folder)])  # fills the cache
        warm = timed([*tracetui, "ranks", str(folder)])
        size = sum(f.stat().st_size for f in folder.glob("rank-*.json")) / 1e6
        print(f"| {n} | {capture:.1f} s | {cold:.2f} s | {warm:.2f} s | {size:.1f} MB |")


if __name__ == "__main__":
    main()
