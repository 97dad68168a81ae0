"""Many ranks on one machine: `tracetui ranks` over a folder of tiled rank files, cold and cached, against
converting the largest rank alone, measured side by side in one run (each in a fresh process; peak RSS
is the whole process tree, pool workers included).

The ranks are tiled from the shipped 2-rank DDP sample (NCCL kernels) to about --mb each, and numbered
in their distributedInfo. Ideal cold time: ceil(ranks / cores) x one rank; cached: under a second.
Run: python benchmarks/bench_ranks.py [--ranks 64] [--mb 50] [--keep DIR]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.probe import environment, tracetui  # noqa: E402
from benchmarks.tile import tile_json  # noqa: E402

SOURCE = Path(__file__).resolve().parents[1] / "sample_traces" / "a100-ddp-nccl.json.gz"
PLACEHOLDER = 987654321


def make_ranks(folder: Path, ranks: int, mb: float) -> list[Path]:
    """One tiled rank written once, then copied with its distributedInfo renumbered."""
    folder.mkdir(parents=True, exist_ok=True)
    probe = tile_json(1, folder / "probe.json", SOURCE)
    copies = max(1, round(mb * 1e6 / probe.stat().st_size))
    probe.unlink()
    info = {"backend": "nccl", "rank": PLACEHOLDER, "world_size": ranks}
    template = tile_json(copies, folder / "template.json", SOURCE, distributedInfo=info).read_bytes()
    (folder / "template.json").unlink()
    cut = template.index(b'"traceEvents"')
    head, body = template[:cut], template[cut:]
    files = []
    for k in range(ranks):
        f = folder / f"rank-{k}.json"
        f.write_bytes(head.replace(str(PLACEHOLDER).encode(), str(k).encode()) + body)
        files.append(f)
    return files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--keep", type=Path, help="write the ranks here and keep them")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="tracetui-ranks-"))
    folder = work / "job"
    files = sorted(folder.glob("rank-*.json")) if folder.is_dir() else []
    if len(files) != args.ranks:
        files = make_ranks(folder, args.ranks, args.mb)
    largest = max(files, key=lambda f: f.stat().st_size)
    size_gb = largest.stat().st_size / 1e9
    cores = os.cpu_count() or 1
    print(f"machine: {platform.processor() or platform.machine()}, {cores} cores, Python {platform.python_version()}")
    print(f"{len(files)} ranks of {size_gb * 1e3:.0f} MB ({sum(f.stat().st_size for f in files) / 1e9:.2f} GB in all)")

    for old in ("cache-one", "cache-job"):
        shutil.rmtree(work / old, ignore_errors=True)  # cold means cold: nothing from an earlier run
    alone = work / "one"
    shutil.rmtree(alone, ignore_errors=True)
    alone.mkdir()
    (alone / largest.name).symlink_to(largest)
    one = tracetui("ranks", str(alone), "--format", "json", env=environment(work / "cache-one"))
    cold_env = environment(work / "cache-job")
    cold = tracetui("ranks", str(folder), "--format", "json", env=cold_env)
    cached = tracetui("ranks", str(folder), "--format", "json", env=cold_env)
    ideal = math.ceil(len(files) / cores) * one.seconds
    print(f"the largest rank alone (ranks, cold): {one.seconds:6.2f} s, peak RSS {one.peak_gb / size_gb:.2f}x the file")
    print(
        f"ranks, cold:   {cold.seconds:6.2f} s = {cold.seconds / one.seconds:.1f}x one rank "
        f"(ideal ceil(ranks/cores) x one rank = {ideal:.1f} s: {cold.seconds / ideal:.2f}x ideal); "
        f"peak RSS (tree) {cold.peak_gb:.2f} GB = {cold.peak_gb / size_gb:.2f}x the largest rank"
    )
    print(
        f"ranks, cached: {cached.seconds:6.2f} s = {cached.seconds / one.seconds:.2f}x one rank cold; "
        f"peak RSS {cached.peak_gb:.2f} GB = {cached.peak_gb / size_gb:.2f}x the largest rank"
    )


if __name__ == "__main__":
    main()
