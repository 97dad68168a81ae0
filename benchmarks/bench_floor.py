"""The first load against the machine's own floor: one command that prints every ratio the goals are stated in.

For each size (1 GB and 100 MB by default: a shipped H100 trace tiled), in rounds, each step in a fresh process:
- the floor: `open().read()` of the file, then `bytes.count(b"\\n")` (every byte read and touched once);
- `orjson.loads` of the file (read included);
- `tracetui summary --no-cache`, the first load as a whole command (interpreter start included), with the peak
  RSS of its process tree (the decode workers included);
- `tracetui summary` writing the cache, then the cached `summary` and `ops --limit 0 --format json` (median of 3).
The floor and orjson are timed inside their process (their interpreter start is not theirs to answer for).

Ratios are formed within a round (the three measured minutes apart at most), so a machine that others load
moves numerator and denominator together; the rounds' spread (min, median, max) says how much it moved anyway. The
first load's CPU seconds (its whole tree) over the floor are printed too: steadier than its wall time where others
share the cores, and 2x the floor in wall time needs them at 2 x cores at most.
With `--decode msgspec native` the first load runs once per decode path in each round, alternating
(TRACETUI_DECODE: the msgspec path with its worker processes, and the compiled scan in threads, numba's compile
done before the rounds), and each path gets its own rows of ratios; `auto` is the default as a user has it once
numba's compile behind is done (native_warm.py's mark written in each round's fresh cache: the scan from
scanned.NATIVE_MIN_BYTES up, msgspec below); `native-every-size` is the scan on a file of any size (as a user gets
it, `native` leaves a file below scanned.NATIVE_MIN_BYTES to msgspec).
Run: python benchmarks/bench_floor.py [--mb 1000 100] [--rounds 3] [--keep DIR] [--orjson-rounds N]
                                      [--decode auto|msgspec|native|native-every-size ...]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.probe import environment, python, tracetui  # noqa: E402
from benchmarks.tile import ROOT, tile_json  # noqa: E402

SOURCE = ROOT / "sample_traces" / "h100-bert-small.json.gz"  # as benchmarks/tile.py and bench_big.py tile
FLOOR = "import sys, time\nt = time.perf_counter()\nb = open(sys.argv[1], 'rb').read()\nn = b.count(b'\\n')\nprint(time.perf_counter() - t)"
ORJSON = "import sys, time, orjson\nt = time.perf_counter()\nd = orjson.loads(open(sys.argv[1], 'rb').read())\nprint(time.perf_counter() - t)"
# `--decode native-every-size`: the compiled scan whatever the file's size (scanned.NATIVE_MIN_BYTES = 0; as a user
# gets it, `native` reads a file below that with msgspec), the command otherwise as `python -m tui` runs it.
EVERY_SIZE = "native-every-size"
SCAN_EVERY_SIZE = (
    "import sys\nfrom tui.process.heap import for_big_arrays\nfor_big_arrays()\n"
    "import tui.model.load.scanned as s\ns.NATIVE_MIN_BYTES = 0\nfrom tui.cli import main\n"
    "sys.exit(main(['summary', {path!r}, '--no-cache']))"
)
CORES = os.cpu_count() or 1
# "first cpu / floor": the CPU seconds of the whole tree, steadier than wall time on a shared host; 2x the floor in
# wall time needs it at 2 x cores at most (every core busy all along).
GOALS = {
    "first / floor": 2.0,
    "first cpu / floor": 2.0 * CORES,
    "first / orjson": 0.1,
    "peak RSS / file": 1.5,
    "cached summary s": 0.25,
    "cached ops s": 0.25,
}


@dataclass
class First:
    seconds: float
    cpu: float
    peak_gb: float


@dataclass
class Round:
    floor: float
    orjson: float | None
    firsts: dict[str, First]  # by decode path
    summary: float
    ops: float


def inner(code: str, path: Path, env: dict) -> float:
    """The seconds a snippet measured inside its own fresh process."""
    return float(python(code.replace("sys.argv[1]", repr(str(path))), env).out.split()[-1])


def one_round(path: Path, cache: Path, with_orjson: bool, decodes: list[str]) -> Round:
    shutil.rmtree(cache, ignore_errors=True)  # "first" means it: no entry from an earlier round
    env = environment(cache)
    if "auto" in decodes:  # the default as a user has it once numba's compile behind is done (its mark written)
        python("from tui.model.load import native_warm\nnative_warm.mark_ready()", env)
    floor = inner(FLOOR, path, env)
    base = inner(ORJSON, path, env) if with_orjson else None
    firsts = {}
    for how in decodes:
        if how == EVERY_SIZE:
            run = python(SCAN_EVERY_SIZE.format(path=str(path)), env | {"TRACETUI_DECODE": "native"})
        else:
            run = tracetui("summary", str(path), "--no-cache", env=env | {"TRACETUI_DECODE": how})
        firsts[how] = First(run.seconds, run.cpu, run.peak_gb)
    tracetui("summary", str(path), env=env)  # writes the cache entry
    summary = statistics.median(tracetui("summary", str(path), env=env).seconds for _ in range(3))
    ops = statistics.median(
        tracetui("ops", str(path), "--limit", "0", "--format", "json", env=env).seconds for _ in range(3)
    )
    return Round(floor, base, firsts, summary, ops)


def ratios(r: Round, size: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for how, first in r.firsts.items():
        tag = f" [{how}]" if len(r.firsts) > 1 else ""
        out[f"first / floor{tag}"] = first.seconds / r.floor
        out[f"first cpu / floor{tag}"] = first.cpu / r.floor
        out[f"peak RSS / file{tag}"] = first.peak_gb * 1e9 / size
        if r.orjson:
            out[f"first / orjson{tag}"] = first.seconds / r.orjson
    if len(r.firsts) > 1:
        (a, fa), (b, fb) = list(r.firsts.items())[:2]
        out[f"first {b} / first {a}"] = fb.seconds / fa.seconds
    return out | {"cached summary s": r.summary, "cached ops s": r.ops}


def report(path: Path, rounds: list[Round]) -> None:
    size = path.stat().st_size
    print(f"\n{path.name}: {size / 1e9:.3f} GB, {len(rounds)} rounds")
    for k, r in enumerate(rounds, 1):
        base = f"orjson {r.orjson:6.2f} s" if r.orjson else "orjson    -    "
        firsts = "  ".join(
            f"first [{how}] {f.seconds:5.2f} s (cpu {f.cpu:5.2f} s, peak {f.peak_gb:5.2f} GB)"
            for how, f in r.firsts.items()
        )
        print(
            f"  round {k}: floor {r.floor:5.2f} s  {base}  {firsts}"
            f"  cached summary {r.summary:4.2f} s  ops {r.ops:4.2f} s"
        )
    table: dict[str, list[float]] = {}
    for r in rounds:
        for name, value in ratios(r, size).items():
            table.setdefault(name, []).append(value)
    print(f"  {'':28s} {'min':>7s} {'median':>7s} {'max':>7s}  goal (by the median)")
    for name, values in table.items():
        goal = GOALS.get(name.split(" [")[0])
        mid = statistics.median(values)
        verdict = "" if goal is None else f"  <= {goal:g} ({'met' if mid <= goal else f'missed by {mid / goal:.2f}x'})"
        print(f"  {name:28s} {min(values):7.3f} {mid:7.3f} {max(values):7.3f}{verdict}")


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("--mb", type=int, nargs="+", default=[1000, 100], help="sizes of the tiled traces")
    opts.add_argument("--rounds", type=int, default=3)
    opts.add_argument("--keep", type=Path, help="make (or reuse) the traces in this folder")
    opts.add_argument("--orjson-rounds", type=int, default=None, help="run orjson in the first N rounds only")
    opts.add_argument("--decode", nargs="+", default=["auto"], help="the decode paths to time (TRACETUI_DECODE)")
    args = opts.parse_args()
    if {"auto", "native", EVERY_SIZE} & set(args.decode):  # numba's compile (once per install) is not the load's
        python("from tui.model.load import scanned\nscanned.warm()", environment(Path(tempfile.gettempdir())))
    folder = args.keep or Path(tempfile.mkdtemp(prefix="tracetui-floor-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}"
    )
    for mb in args.mb:
        path = folder / f"tiled-{mb}mb.json"
        if not path.exists():
            one = tile_json(1, folder / "one.json", SOURCE).stat().st_size  # one copy as the tile writes it
            tile_json(max(1, mb * 1_000_000 // one), path, SOURCE)
        orjson_rounds = args.rounds if args.orjson_rounds is None else args.orjson_rounds
        rounds = [one_round(path, folder / "cache", k < orjson_rounds, args.decode) for k in range(args.rounds)]
        report(path, rounds)
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
