"""The critical path of one step on a big tiled trace, in a worker thread, against the same step untiled; and the
largest shared trace against HTA's critical_path_analysis.

Prints:
- the critical path of one step of the source trace (h100-bert-small): the baseline the ratios are against;
- the source tiled to --mb MB (cached, as after `tracetui summary`): the same path of one step, computed in a
  worker thread, and the longest a 1 ms tick on the main thread waited meanwhile (what a paint would wait);
- the largest shared trace: tracetui from the file (load, structure and path) and the path alone, and, with
  --hta PYTHON (an interpreter with holistictraceanalysis and pandas<2.2), HTA's load and path, each in a fresh
  process with its peak RSS.
Run: python benchmarks/bench_critical.py [--mb 1000] [--keep DIR] [--hta /tmp/hta-venv/bin/python]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.probe import ROOT, environment, python, run, tracetui  # noqa: E402
from benchmarks.tile import tile_json  # noqa: E402

SOURCE = ROOT / "sample_traces" / "h100-bert-small.json.gz"
COPY_BYTES = 618_000  # one tiled copy of the source, written compactly
SHARED = ROOT.parent / "shared" / "traces"

WORKER = """
import json, sys, threading, time
from tui.model.load import load_trace
from tui.model.analyses.results import Results
from tui.model.analyses.critical import critical_path, find_window

def one_step(path):
    a = Results(load_trace(path))
    a.nesting, a.links, a.graph_owner  # the structure the viewer has before it paints (cached)
    window = find_window(a.trace)
    done, took = threading.Event(), {}
    def work():
        t0 = time.perf_counter()
        p = critical_path(a, window, a.graph_owner)
        took["s"], took["items"], took["events"] = time.perf_counter() - t0, len(p.items), a.trace.n
        done.set()
    worker = threading.Thread(target=work)
    late = 0.0
    worker.start()
    while not done.is_set():
        t = time.perf_counter()
        time.sleep(0.001)
        late = max(late, time.perf_counter() - t - 0.001)
    worker.join()
    return {**took, "window": window.name, "tick_late_ms": late * 1000}

print(json.dumps([one_step(p) for p in sys.argv[1:]]))
"""

FROM_FILE = """
import json, sys, time
t0 = time.perf_counter()
from tui.model.load import load_trace
from tui.model.analyses.results import Results
from tui.model.analyses.critical import critical_path, find_window
a = Results(load_trace(sys.argv[1], use_cache=False))
a.nesting, a.links, a.graph_owner
t1 = time.perf_counter()
p = critical_path(a, find_window(a.trace), a.graph_owner)
t2 = time.perf_counter()
print(json.dumps({"load_s": t1 - t0, "path_s": t2 - t1, "window": p.window, "events": a.trace.n}))
"""


def largest_shared() -> Path | None:
    files = sorted(SHARED.glob("*/*.gz")) if SHARED.is_dir() else []
    return max(files, key=lambda p: p.stat().st_size) if files else None


def hta(python_exe: str, path: Path, window: str) -> tuple[dict, float]:
    sys.path.insert(0, str(ROOT / "tests"))
    from hta_critical import RUN

    done = run(
        [
            python_exe,
            "-c",
            RUN.replace("print(json.dumps(out))", "out['window'] = annotation\nprint(json.dumps(out))"),
            str(path),
            window,
        ]
    )
    return json.loads(done.out.strip().splitlines()[-1]), done.peak_gb


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("--mb", type=int, default=1000, help="size of the tiled trace")
    opts.add_argument("--keep", type=Path, help="make (or reuse) the trace and its cache in this folder")
    opts.add_argument("--hta", metavar="PYTHON", help="an interpreter with holistictraceanalysis (pandas<2.2)")
    args = opts.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="tracetui-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"tiled-{args.mb}mb.json"
    if not path.exists():
        tile_json(max(1, args.mb * 1_000_000 // COPY_BYTES), path, SOURCE)
    env = environment(folder / "cache")
    print(
        f"{path.name}: {path.stat().st_size / 1e9:.2f} GB; {platform.machine()}, {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}"
    )
    cache = tracetui("summary", str(path), env=env)
    print(f"  tracetui summary (load, structure, writing the cache)   {cache.seconds:7.2f} s  {cache.peak_gb:5.2f} GB")
    probe = python(WORKER.replace("sys.argv[1:]", repr([str(SOURCE), str(path)])), env)
    base, big = json.loads(probe.out)
    for name, r in (("source, one step (baseline)", base), (f"tiled, one step ({r_events(big)})", big)):
        print(
            f"  {name:40s} {r['window']:16s} {r['s']:7.3f} s  {r['s'] / base['s']:6.2f}x baseline  "
            f"{r['items']:6,} items; main thread's 1 ms tick late by {r['tick_late_ms']:.1f} ms at most"
        )
    shared = largest_shared()
    if shared is None:
        return
    ours = python(FROM_FILE.replace("sys.argv[1]", repr(str(shared))), env)
    facts = json.loads(ours.out)
    print(
        f"{shared.parent.name}/{shared.name}: {shared.stat().st_size / 1e6:.1f} MB on disk, {facts['events']:,} events"
    )
    print(
        f"  tracetui: load + structure {facts['load_s']:.2f} s, critical path of {facts['window']} "
        f"{facts['path_s']:.2f} s; {ours.seconds:.2f} s in all, peak {ours.peak_gb:.2f} GB"
    )
    if args.hta:
        found, peak = hta(args.hta, shared, facts["window"])
        if "error" in found:
            print(f"  HTA: {found['error']}")
        else:
            total = found["load_s"] + found["path_s"]
            print(
                f"  HTA {found.get('window')}: load {found['load_s']:.2f} s, critical path {found['path_s']:.2f} s; "
                f"peak {peak:.2f} GB; the path alone {found['path_s'] / facts['path_s']:.0f}x tracetui's, "
                f"from the file {total / (facts['load_s'] + facts['path_s']):.1f}x"
            )


def r_events(r: dict) -> str:
    return f"{r['events']:,} events"


if __name__ == "__main__":
    main()
