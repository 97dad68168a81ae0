"""A first load that scales with cores (issue 39): the 1 GB tile loaded with 1, 2, 4, ... workers up to the cores.

For each number of workers W (decode processes and analysis threads: TRACETUI_DECODE_PROCS=W, TRACETUI_THREADS=W),
in fresh processes:
- `tracetui summary --no-cache` as a whole command: wall, CPU (the process tree's), peak RSS, against orjson.loads
  of the same file measured in the same run;
- the time after the decode in the command itself (`summary --no-cache`, from the decode's end, as its last part
  arrives, to the command's: where the command overlaps the phases below, this is less than their sum);
- the same first load phase by phase, in one process: read (map the file, find the events, cut the chunks),
  decode (the chunks, in W processes, until the last part arrives), merge (what is left of folding the parts into
  the final columns: since round 6 of issue 39 parts are folded as they arrive, during the decode), tracks, nest,
  link, aggregate (what the first summary computes: the ops table, the kernels, the summary), write cache (the
  columns' entry, as a first `summary` writes it: timed apart, the analyses above run without it, as with
  --no-cache);
- the first `summary` as a user runs it, writing the cache entry (wall, peak RSS);
and once: cached `summary` and `ops --limit 0 --format json` (medians of 5).
With --base REV, the same from that commit too, alternating (its phases where its code has them).
Run: python benchmarks/bench_scale.py [--keep DIR] [--mb 1000] [--workers 1,2,4] [--base REV]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_big import COPY_BYTES, SOURCE  # noqa: E402
from benchmarks.bench_views import worktree  # noqa: E402
from benchmarks.probe import ROOT, Run, environment, python, run, tracetui  # noqa: E402
from benchmarks.tile import tile_json  # noqa: E402

ALLOCATORS = """
import os
if os.path.exists("tui/process/heap.py"):  # the allocators as the command line sets them, before numpy is imported
    from tui.process.heap import for_big_arrays  # (by path: an editable install would find this tree's heap.py for an
    for_big_arrays()  # earlier tree that has none)
"""

PHASES = (
    """
import resource, sys, time
def now():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
marks = [("start", now())]
"""
    + ALLOCATORS
    + """
from pathlib import Path
from tui.model.analyses.results import Results
from tui.model.load import cache, parse
from tui.model.load.locate import open_source
from tui.model.load.parts import decode_parallel, decode_range, merge_parts, worker_count
from tui.model.load.source import ChunkReader, split_chunks
marks.append(("imports", now()))
path = Path(sys.argv[1])
src = open_source(path, None)
chunks = split_chunks(src)
marks.append(("read", now()))
workers = worker_count(src.end - src.start)
last = len(chunks) - 1 if src.truncated else -1
if workers > 1:
    import inspect  # an earlier tree (--base) has no `last`
    from tui.model.load import parts as P
    decoded = []
    finish = P._Run.finish
    def timed(self, k, part):  # the decode ends as the last part arrives; a merge may already have begun
        decoded.append(now())
        finish(self, k, part)
    P._Run.finish = timed
    more = (last,) if "last" in inspect.signature(decode_parallel).parameters else ()
    out = decode_parallel(path, chunks, workers, None, None, *more)
    marks.append(("decode", decoded[-1]))
    merged = merge_parts(out) if isinstance(out, list) else out  # (a list of parts: an earlier tree's)
else:
    with ChunkReader(path) as read:
        merged = decode_range(read, chunks, last)
    marks.append(("decode", now()))
marks.append(("merge", now()))
trace = parse._assemble(path, src, merged, None)
marks.append(("tracks", now()))
a = Results(trace)
a.nesting
marks.append(("nest", now()))
a.links
marks.append(("link", now()))
a.summary, a.kernels
marks.append(("aggregate", now()))
cache.ensure_root()
cache.write(path, trace)
marks.append(("write cache", now()))
for (_, (w0, c0)), (name, (w1, c1)) in zip(marks, marks[1:]):
    print(name, round(w1 - w0, 3), round(c1 - c0, 3))
print("events", trace.n)
"""
)


COMMAND = (
    ALLOCATORS
    + """
import contextlib, io, sys, time
import tui.model.load.parse as loader  # (main() would set the allocators after numpy's import here)
from tui.model.load import parts
decoded = []  # the decode ends as its last part arrives (parallel) or when the one process is done
finish, decode_range = parts._Run.finish, loader.decode_range
parts._Run.finish = lambda run, k, part: decoded.append(time.perf_counter()) or finish(run, k, part)
loader.decode_range = lambda *a, **k: (decode_range(*a, **k), decoded.append(time.perf_counter()))[0]
from tui.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["summary", sys.argv[1], "--no-cache", "--format", "json"])
print(time.perf_counter() - decoded[-1])
"""
)


def tile(folder: Path, mb: int) -> Path:
    path = folder / f"tiled-{mb}mb.json"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        tile_json(max(1, mb * 1_000_000 // COPY_BYTES), path, SOURCE)
    return path


def one(path: Path, workers: int, env: dict, cache: Path, tree: Path) -> tuple[list[tuple[str, float, float]], Run]:
    """The phases and the whole command with `workers` workers, from `tree`'s code."""
    shutil.rmtree(cache, ignore_errors=True)
    env = {**env, "TRACETUI_DECODE_PROCS": str(workers), "TRACETUI_THREADS": str(workers), "PYTHONPATH": str(tree)}
    out = run([sys.executable, "-c", PHASES.replace("sys.argv[1]", repr(str(path)))], env, cwd=tree).out
    phases = []
    for row in out.splitlines():
        *name, wall, cpu = row.split()
        if len(name) >= 1 and name[0] != "events":
            phases.append((" ".join(name), float(wall), float(cpu)))
    shutil.rmtree(cache, ignore_errors=True)
    whole = run([sys.executable, "-m", "tui", "summary", str(path), "--no-cache", "--format", "json"], env, cwd=tree)
    shutil.rmtree(cache, ignore_errors=True)
    after = float(run([sys.executable, "-c", COMMAND.replace("sys.argv[1]", repr(str(path)))], env, cwd=tree).out)
    phases.append(("after the decode in the command", after, 0.0))
    shutil.rmtree(cache, ignore_errors=True)
    cached = run([sys.executable, "-m", "tui", "summary", str(path), "--format", "json"], env, cwd=tree)
    phases.append(("first summary writing the cache", cached.seconds, cached.peak_gb))
    return phases, whole


def report(side: str, workers: int, phases: list, whole: Run, base: Run, size: int) -> None:
    print(
        f"  [{side}] {workers} worker(s): summary --no-cache wall {whole.seconds:6.2f} s = {whole.seconds / base.seconds:.3f}x"
        f" orjson, cpu {whole.cpu:6.2f} s = {whole.cpu / base.cpu:.3f}x, peak {whole.peak_gb:.2f} GB ="
        f" {whole.peak_gb * 1e9 / size:.2f}x the file"
    )
    after = sum(w for name, w, _ in phases if name in ("merge", "tracks", "nest", "link", "aggregate"))
    in_command = next(w for name, w, _ in phases if name == "after the decode in the command")
    first, peak = next((w, c) for name, w, c in phases if name == "first summary writing the cache")
    cells = "  ".join(f"{name} {w:.2f}/{c:.2f}" for name, w, c in phases[:-2])
    print(f"      phases (wall/cpu s): {cells}")
    print(f"      after the decode (merge to aggregate): {after:.2f} s wall = {after / base.seconds:.3f}x orjson")
    print(
        f"      after the decode in the command (summary --no-cache from the last part's arrival to its end): {in_command:.2f} s"
    )
    print(f"      first summary writing its cache entry (no --no-cache): {first:.2f} s, peak {peak:.2f} GB")


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("--keep", type=Path, help="make (or reuse) the tile in this folder")
    opts.add_argument("--mb", type=int, default=1000)
    cores = os.cpu_count() or 1
    ladder = [w for w in (1, 2, 4, 8, 16, 32) if w <= cores] or [1]
    opts.add_argument("--workers", default=",".join(map(str, ladder)))
    opts.add_argument("--base", help="a commit to run the same first loads from too (a git worktree)")
    args = opts.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="tracetui-scale-"))
    path = tile(folder, args.mb)
    size = path.stat().st_size
    cache = folder / "cache-scale"
    env = environment(cache)
    print(f"{path.name}: {size / 1e9:.2f} GB; {cores} cores, {platform.python_version()}, {time.strftime('%Y-%m-%d')}")
    base = python(
        f"import orjson; d = orjson.loads(open({str(path)!r}, 'rb').read()); print(len(d['traceEvents']))", env
    )
    print(f"  orjson.loads (baseline): wall {base.seconds:.2f} s, cpu {base.cpu:.2f} s, peak {base.peak_gb:.2f} GB")
    trees = {"now": ROOT}
    if args.base:
        trees = {"before": worktree(args.base, folder / f"base-{args.base}"), **trees}
    try:
        for workers in (int(w) for w in args.workers.split(",")):
            for side, tree in trees.items():  # alternating sides: the machine's drift falls on both
                phases, whole = one(path, workers, env, cache, tree)
                report(side, workers, phases, whole, base, size)
    finally:
        if args.base:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(trees["before"])], check=False)
    shutil.rmtree(cache, ignore_errors=True)
    tracetui("summary", str(path), env=env), tracetui("ops", str(path), "--limit", "0", "--format", "json", env=env)
    summary = statistics.median(tracetui("summary", str(path), env=env).seconds for _ in range(5))
    ops = statistics.median(
        tracetui("ops", str(path), "--limit", "0", "--format", "json", env=env).seconds for _ in range(5)
    )
    print(f"  cached: summary {summary:.2f} s, ops --limit 0 --format json {ops:.2f} s (medians of 5)")


if __name__ == "__main__":
    main()
