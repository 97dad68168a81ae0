"""HTA's analyses as tracetui runs them, on a big tiled trace: each command's cost against the summary's, and
against HTA on the same file.

Prints, for the a100-train-control sample tiled to --mb MB (three streams, copies, 1,575 launches a step):
- the first `tracetui summary` (load, structure, the cache written) and a cached one: the baseline;
- from the cache, each of `breakdown`, `breakdown --by stream`, `kernels --queues`, `ops --kernels` and `export`,
  each in a fresh process, with its ratio to the cached summary, and the size of what export wrote;
- in one process without the cache, the copies by direction that the summary now reads (the bytes of every copy),
  against the summary itself (its ops table and the structure computed before either);
- with --hta PYTHON (an interpreter with holistictraceanalysis and pandas<2.2): HTA loading the same file and
  running get_temporal_breakdown, get_idle_time_breakdown, get_queue_length_summary,
  get_cuda_kernel_launch_stats, get_aten_op_kernels_and_delay and get_memory_bw_summary, against tracetui doing
  the same from the file without its cache.
Run: python benchmarks/bench_hta.py [--mb 200] [--keep DIR] [--hta /tmp/htavenv/bin/python]
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

SOURCE = ROOT / "sample_traces" / "a100-train-control.json.gz"
COPY_BYTES = 33_000_000  # one tiled copy of the source, about

COPIES = """
import json, sys, time
from tui.model.load import load_trace
from tui.model.analyses.results import Results
from tui.model.analyses.copies import copies
a = Results(load_trace(sys.argv[1], use_cache=False))
a.links, a.nesting, a.ops
t0 = time.perf_counter()
c = copies(a.trace)
t1 = time.perf_counter()
a.summary
t2 = time.perf_counter()
print(json.dumps({"copies_s": t1 - t0, "summary_s": t2 - t1, "copies": sum(r.count for r in c.rows)}))
"""
ALL_FROM_FILE = """
import json, sys, time
t0 = time.perf_counter()
from tui.model.load import load_trace
from tui.model.analyses.results import Results
a = Results(load_trace(sys.argv[1], use_cache=False))
a.nesting, a.links, a.graph_owner
t1 = time.perf_counter()
a.breakdown, a.queues, a.op_kernels, a.copies
from tui.model.analyses.queues import launch_stats
launch_stats(a.trace, a.links.launcher)
t2 = time.perf_counter()
print(json.dumps({"load_s": t1 - t0, "analyses_s": t2 - t1}))
"""
HTA = """
import json, logging, os, sys, tempfile, time, warnings, contextlib, io
logging.disable(logging.WARNING)
warnings.simplefilter("ignore")
from hta.trace_analysis import TraceAnalysis
d = tempfile.mkdtemp()
os.symlink(sys.argv[1], os.path.join(d, os.path.basename(sys.argv[1])))
t0 = time.perf_counter()
ta = TraceAnalysis(trace_dir=d, include_last_profiler_step=True)
t1 = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    ta.get_temporal_breakdown(visualize=False)
    ta.get_idle_time_breakdown(visualize=False)
    ta.get_queue_length_summary()
    ta.get_cuda_kernel_launch_stats(visualize=False)
    ta.get_aten_op_kernels_and_delay()
    ta.get_memory_bw_summary()
t2 = time.perf_counter()
print(json.dumps({"load_s": t1 - t0, "analyses_s": t2 - t1}))
"""
COMMANDS = [
    ("breakdown", ["breakdown"]),
    ("breakdown --by stream", ["breakdown", "--by", "stream"]),
    ("kernels --queues", ["kernels", "--queues"]),
    ("ops --kernels", ["ops", "--kernels"]),
]


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("--mb", type=int, default=200, help="size of the tiled trace")
    opts.add_argument("--keep", type=Path, help="make (or reuse) the trace and its cache in this folder")
    opts.add_argument("--hta", metavar="PYTHON", help="an interpreter with holistictraceanalysis (pandas<2.2)")
    args = opts.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="tracetui-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"control-{args.mb}mb.json"
    if not path.exists():
        tile_json(max(1, args.mb * 1_000_000 // COPY_BYTES), path, SOURCE)
    env = environment(folder / "cache")
    print(
        f"{path.name}: {path.stat().st_size / 1e9:.2f} GB; {platform.machine()}, {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}"
    )
    first = tracetui("summary", str(path), env=env)
    base = tracetui("summary", str(path), env=env)
    print(f"  summary, first (load, structure, cache)   {first.seconds:7.2f} s  {first.peak_gb:5.2f} GB")
    print(f"  summary, cached (the baseline)            {base.seconds:7.2f} s  {base.peak_gb:5.2f} GB")
    for name, argv in COMMANDS:
        r = tracetui(argv[0], str(path), *argv[1:], env=env)
        print(f"  {name:40s}  {r.seconds:7.2f} s  {r.seconds / base.seconds:5.2f}x  {r.peak_gb:5.2f} GB")
    out = folder / "export.json"
    r = tracetui("export", str(path), "-o", str(out), env=env)
    size = out.stat().st_size / path.stat().st_size
    print(f"  {'export (all counters)':40s}  {r.seconds:7.2f} s  {r.seconds / base.seconds:5.2f}x  output {size:.3f}x")
    c = json.loads(python(COPIES.replace("sys.argv[1]", repr(str(path))), env).out)
    print(
        f"  copies by direction ({c['copies']:,} copies' bytes): {c['copies_s']:.2f} s, "
        f"{c['copies_s'] / c['summary_s']:.2f}x the summary ({c['summary_s']:.2f} s)"
    )
    if args.hta:
        ours = json.loads(python(ALL_FROM_FILE.replace("sys.argv[1]", repr(str(path))), env).out)
        theirs = json.loads(run([args.hta, "-c", HTA, str(path)]).out.strip().splitlines()[-1])
        for who, r in (("tracetui (no cache)", ours), ("HTA 0.5", theirs)):
            print(f"  {who:20s} load {r['load_s']:7.2f} s, the six analyses {r['analyses_s']:7.2f} s")
        ratio = (theirs["load_s"] + theirs["analyses_s"]) / (ours["load_s"] + ours["analyses_s"])
        print(f"  HTA / tracetui: {theirs['analyses_s'] / ours['analyses_s']:.1f}x the analyses, {ratio:.1f}x in all")


if __name__ == "__main__":
    main()
