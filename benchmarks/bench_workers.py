"""Where decoding in worker processes starts to pay: the first load of traces of a few sizes, in one process
against one process per core (TRACETUI_DECODE_PROCS), alternating in each round.

For each size (a shipped H100 trace tiled, as bench_floor.py tiles it), each round runs `tracetui summary --no-cache`
in a fresh process with TRACETUI_DECODE_PROCS=1 and then with one per core, and prints the medians of wall time
and CPU time (the whole tree), the ratio of the two wall times (below 1: the workers paid), and the side that
parts.PARALLEL_MIN_BYTES picks for that size. A worker costs about 0.3 s of a core to start (a fresh interpreter
importing numpy and the decode), which start_workers overlaps with the command's own imports; below some size that
start costs more than the decode it shares.
Run: python benchmarks/bench_workers.py [--mb 16 32 64 100 200] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_floor import SOURCE  # noqa: E402
from benchmarks.probe import environment, tracetui  # noqa: E402
from benchmarks.tile import tile_json  # noqa: E402
from tui.model.load.parts import PARALLEL_MIN_BYTES  # noqa: E402

CORES = os.cpu_count() or 1


def tile_of(mb: int, folder: Path) -> Path:
    """A tile of about mb megabytes (whole copies of SOURCE)."""
    one = tile_json(1, folder / "one.json", SOURCE).stat().st_size
    return tile_json(max(1, round(mb * 1e6 / one)), folder / f"tile-{mb}mb.json", SOURCE)


def measure(path: Path, procs: int, cache: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one first summary decoded in `procs` processes."""
    env = {**environment(cache), "TRACETUI_DECODE_PROCS": str(procs)}
    run = tracetui("summary", str(path), "--no-cache", env=env)
    return run.seconds, run.cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, nargs="+", default=[16, 32, 64, 100, 200])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    many = max(2, min(CORES, 8))
    print(f"{CORES} cores; one process against {many}; PARALLEL_MIN_BYTES = {PARALLEL_MIN_BYTES >> 20} MB")
    print(f"{'size':>8}  {'1 process s (cpu)':>18}  {f'{many} processes s (cpu)':>20}  {'ratio':>6}  picked")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for mb in args.mb:
            path = tile_of(mb, folder)
            times: dict[int, list[tuple[float, float]]] = {1: [], many: []}
            for _ in range(args.rounds):
                for procs in times:
                    times[procs].append(measure(path, procs, folder / "cache"))
            one, all_ = ([statistics.median(x) for x in zip(*times[p], strict=True)] for p in (1, many))
            size = path.stat().st_size
            picked = "workers" if size >= PARALLEL_MIN_BYTES else "one process"
            print(
                f"{size / 1e6:6.0f} MB  {one[0]:8.2f} ({one[1]:5.2f})  {all_[0]:10.2f} ({all_[1]:5.2f})  "
                f"{all_[0] / one[0]:6.2f}  {picked}"
            )


if __name__ == "__main__":
    main()
