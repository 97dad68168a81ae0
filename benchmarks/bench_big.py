"""The 1 GB case: a shipped H100 trace with Python stacks, tiled to about 1 GB, measured side by side in one run.

Prints, each in a fresh process (peak RSS is the whole process tree, decode workers included):
- orjson.loads of the file: the baseline the ratios are against;
- `tracetui summary --no-cache` (the first load, as a whole command), and per phase;
- the same with the decode in one process (TRACETUI_DECODE_PROCS=1): how the first load scales with cores, and
  what 16 and 64 cores would give from the serial part measured (Amdahl);
- `tracetui summary` writing the cache, then cached `summary` and cached `ops --limit 0 --format json`;
- the viewer: first paint (from process start) with no cache, on the first open (the cache has what
  `summary` kept) and cached; steady RSS; and the longest the UI froze on each key of a tour of the views.
Run: python benchmarks/bench_big.py [--mb 1000] [--keep DIR]   (a 1 GB trace takes a few minutes in all)
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.probe import environment, python, run, tracetui  # noqa: E402
from benchmarks.tile import tile_json  # noqa: E402
from tui.model.load.parts import MAX_WORKERS  # noqa: E402

SOURCE = Path(__file__).resolve().parents[1] / "sample_traces" / "h100-bert-small.json.gz"
COPY_BYTES = 618_000  # one tiled copy of the source, written compactly

PHASES = """
import resource, time, sys
def now():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
t0 = now()
from tui.model.load import load_trace
from tui.model.analyses.results import Results
from tui.model.view.lanes import LaneIndex
if __name__ == "__main__":
    a = Results(load_trace(sys.argv[1], use_cache=False))
    marks = [("decode", now())]
    LaneIndex(a); marks.append(("nest", now()))
    a.links; a.child_index; a.self_ns; a.gpu_below; marks.append(("link", now()))
    a.ops; a.kernels; a.summary; a.findings; a.ops_by_shape; marks.append(("aggregate", now()))
    last = t0
    for name, t in marks:
        print(name, round(t[0] - last[0], 2), a.trace.n, round(t[1] - last[1], 2))
        last = t
"""


def viewer(path: Path, env: dict, cached: bool) -> dict:
    """Run viewer_probe.py and parse its facts."""
    start = time.time()
    probe = Path(__file__).with_name("viewer_probe.py")
    args = [sys.executable, str(probe), str(path), repr(start)] + ([] if cached else ["--no-cache"])
    out = run(args, env).out
    facts: dict = {"keys": []}
    for line in out.splitlines():
        word, *rest = line.split()
        if word == "key":
            facts["keys"].append((rest[0], float(rest[1]), float(rest[3])))
        elif word in ("paint", "settled"):
            facts[word] = float(rest[0])
        elif word == "rss":
            facts["rss"] = int(rest[0])
    return facts


def _decode(phases: list[str]) -> float:
    return next(float(row.split()[1]) for row in phases if row.startswith("decode"))


def scaling(whole: float, whole_one: float, decode: float, decode_one: float) -> None:
    """How the first load scales: the decode's parallel fraction from 1 and N processes, and Amdahl's projection."""
    cores = os.cpu_count() or 1
    procs = min(cores, MAX_WORKERS)
    if procs < 2 or decode_one <= 0:
        return
    p = min(max((1 - decode / decode_one) / (1 - 1 / procs), 0.0), 1.0)  # the decode's parallel fraction
    rest = whole_one - decode_one  # start, nest, link, aggregate: one core today
    print(
        f"  scaling: decode {decode_one:.2f} s in 1 process, {decode:.2f} s in {procs} ({decode_one / decode:.2f}x);"
        f" parallel fraction of the decode {p:.2f}; the rest of the first load {rest:.2f} s runs on one core"
    )
    for n in (16, 64):
        print(
            f"    on {n} cores (decode processes capped at {MAX_WORKERS}): first load ~{rest + decode_one * (1 - p + p / min(n, MAX_WORKERS)):.2f} s;"
            f" with no cap {rest + decode_one * (1 - p + p / n):.2f} s"
        )


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("--mb", type=int, default=1000, help="size of the tiled trace")
    opts.add_argument("--keep", type=Path, help="make (or reuse) the trace in this folder")
    args = opts.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="tracetui-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"tiled-{args.mb}mb.json"
    if not path.exists():
        tile_json(max(1, args.mb * 1_000_000 // COPY_BYTES), path, SOURCE)
    cache = folder / "cache"
    shutil.rmtree(cache, ignore_errors=True)  # "writing the cache" and "first" mean it: nothing from an earlier run
    env = environment(cache)
    size = path.stat().st_size
    print(
        f"{path.name}: {size / 1e9:.2f} GB; {platform.machine()}, {platform.python_version()}, {time.strftime('%Y-%m-%d')}"
    )

    base = python(
        f"import orjson; d = orjson.loads(open({str(path)!r}, 'rb').read()); print(len(d['traceEvents']))", env
    )
    cold = tracetui("summary", str(path), "--no-cache", "--format", "json", env=env)
    phases = python(PHASES.replace("sys.argv[1]", repr(str(path))), env).out.split("\n")
    one_env = {**env, "TRACETUI_DECODE_PROCS": "1"}
    cold_one = tracetui("summary", str(path), "--no-cache", "--format", "json", env=one_env)
    phases_one = python(PHASES.replace("sys.argv[1]", repr(str(path))), one_env).out.split("\n")
    first = tracetui("summary", str(path), env=env)
    summary = statistics.median(tracetui("summary", str(path), env=env).seconds for _ in range(3))
    ops = statistics.median(
        tracetui("ops", str(path), "--limit", "0", "--format", "json", env=env).seconds for _ in range(3)
    )
    view_cold = viewer(path, env, cached=False)
    view_first = viewer(path, env, cached=True)  # computes and keeps what the viewer adds to the cache
    view_cached = viewer(path, env, cached=True)

    def line(name: str, seconds: float, peak: float | None = None, target: str = "", cpu: float = 0.0) -> None:
        mem = f"{peak:6.2f} GB = {peak * 1e9 / size:4.2f}x file" if peak is not None else " " * 23
        spent = f"cpu {cpu:6.2f} s = {cpu / base.cpu:4.2f}x" if cpu else " " * 20
        print(f"  {name:44s} {seconds:7.2f} s  {seconds / base.seconds:5.2f}x orjson  {spent}  {mem}  {target}")

    print(f"{base.out.strip()} events in the file")
    line("orjson.loads (baseline)", base.seconds, base.peak_gb, cpu=base.cpu)
    line(
        "tracetui summary --no-cache (first load)",
        cold.seconds,
        cold.peak_gb,
        "target <= 0.10x, <= 1.5x file",
        cold.cpu,
    )
    for row in filter(None, phases):
        name, seconds, n, cpu = row.split()
        print(f"      phase {name:10s} {float(seconds):6.2f} s, cpu {float(cpu):6.2f} s   ({int(n):,} duration events)")
    line("the same, decoding in one process", cold_one.seconds, cold_one.peak_gb, cpu=cold_one.cpu)
    scaling(cold.seconds, cold_one.seconds, _decode(phases), _decode(phases_one))
    line("tracetui summary, writing the cache", first.seconds, first.peak_gb, cpu=first.cpu)
    line("tracetui summary, cached", summary, None, "target <= 0.25 s")
    line("tracetui ops --limit 0 --format json, cached", ops, None, "target <= 0.25 s")
    for label, facts in (("cold", view_cold), ("first", view_first), ("cached", view_cached)):
        worst = max(facts["keys"], key=lambda k: k[2])
        print(
            f"  viewer {label:6s}: first paint {facts['paint']:.2f} s (target <= 0.5 s cached), all analyses done "
            f"{facts['settled']:.2f} s, steady RSS {facts['rss'] / 1e9:.2f} GB = {facts['rss'] / size:.2f}x file "
            f"(target <= 0.5x); longest UI freeze on a key {worst[2]:.0f} ms ({worst[0]!r})"
        )
    print("  keys (cached): " + ", ".join(f"{k} {frozen:.0f}ms" for k, _, frozen in view_cached["keys"]))


if __name__ == "__main__":
    main()
