"""Record what HTA's analyses say of the shared traces, for tests/test_hta_analyses.py and benchmarks/HTA.md
(tests/data/hta_analyses.json).

HTA (holistictraceanalysis 0.5) needs pandas older than 2.2, so it runs in its own virtual environment:

    python3 -m venv /tmp/htavenv && /tmp/htavenv/bin/pip install holistictraceanalysis 'pandas<2.2'
    python tests/hta_analyses.py /tmp/htavenv/bin/python [SUBSTRING ...]

For each shared trace (and each folder of ranks, as one job) it runs get_temporal_breakdown,
get_idle_time_breakdown, get_queue_length_summary, get_cuda_kernel_launch_stats, get_aten_op_kernels_and_delay,
get_memory_bw_summary, generate_trace_with_counters, the idle-interval statistics
(show_idle_interval_stats), get_gpu_kernel_breakdown (every kernel: std, min, max) and the copies' count and time per
rank and kind on every rank, in a scratch folder of links (HTA writes
its output beside the trace), and keeps their figures, or the error each stopped with, and how long each took.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

OUT = ROOT / "tests" / "data" / "hta_analyses.json"
RUN = r"""
import json, logging, os, sys, tempfile, time, warnings
logging.disable(logging.WARNING)
warnings.simplefilter("ignore")
from hta.trace_analysis import TraceAnalysis
path = sys.argv[1]
d = tempfile.mkdtemp()
for f in ([os.path.join(path, n) for n in sorted(os.listdir(path))] if os.path.isdir(path) else [path]):
    if f.endswith((".json", ".gz")):
        os.symlink(f, os.path.join(d, os.path.basename(f)))
out, took = {}, {}
t0 = time.perf_counter()
try:
    ta = TraceAnalysis(trace_dir=d, include_last_profiler_step=True)
except Exception as exc:
    print(json.dumps({"error": f"{type(exc).__name__}: {str(exc)[:160]}"}))
    sys.exit()
took["load"] = time.perf_counter() - t0
ranks = sorted(ta.t.traces)

def run(name, fn):
    t = time.perf_counter()
    try:
        out[name] = fn()
    except Exception as exc:
        out[name] = {"error": f"{type(exc).__name__}: {str(exc)[:160]}"}
    took[name] = round(time.perf_counter() - t, 3)

def temporal():
    df = ta.get_temporal_breakdown(visualize=False)
    cols = ["idle_time(us)", "compute_time(us)", "non_compute_time(us)", "kernel_time(us)"]
    return {str(int(r["rank"])): {c.split("(")[0]: float(r[c]) for c in cols} for _, r in df.iterrows()}

def idle():
    df = ta.get_idle_time_breakdown(ranks=ranks, visualize=False)[0]
    found = {}
    for _, r in df.iterrows():
        found.setdefault(str(int(r["rank"])), {}).setdefault(str(int(r["stream"])), {})[r["idle_category"]] = float(r["idle_time"])
    return found

def queues():
    df = ta.get_queue_length_summary(ranks=ranks)
    found = {}
    for (rank, stream), r in ([] if df is None else df.iterrows()):
        q = r["queue_length"]
        found.setdefault(str(int(rank)), {})[str(int(stream))] = {k: float(q[k]) for k in ("count", "mean", "50%", "max")}
    return found

def launches():
    found = {}
    for rank, df in ta.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False).items():
        found[str(rank)] = {
            "launches": int(len(df)),
            "cpu_us": float(df.cpu_duration.sum()),
            "gpu_us": float(df.gpu_duration.sum()),
            "launch_delay_us": float(df.launch_delay.sum()),
            "runtime_outliers": int((df.cpu_duration > 50).sum()),
            "delay_outliers": int((df.launch_delay > 100).sum()),
        }
    return found

def op_kernels():
    found = {}
    for rank, df in ta.get_aten_op_kernels_and_delay(ranks=ranks).items():
        found[str(rank)] = [
            {"op": r["aten_op_name"], "kernels": r["kernel_sequence"].count(" -> ") + 1, "count": int(r["occurrence_count"]),
             "op_to_launch_us": float(r["avg_aten_op_launch_delay"]), "launch_to_start_us": float(r["avg_runtime_delay"])}
            for _, r in df.iterrows()
        ]
    return found

def bandwidth():
    df = ta.get_memory_bw_summary(ranks=ranks)
    found = {}
    for (rank, name), r in ([] if df is None else df.iterrows()):
        b = r["memory_bw_gbps"]
        found.setdefault(str(int(rank)), {})[name] = {k: float(b[k]) for k in ("count", "mean", "max")}
    return found

def idle_stats():
    df = ta.get_idle_time_breakdown(ranks=ranks, visualize=False, show_idle_interval_stats=True)[1]
    found = {}
    for kind, r in ([] if df is None else df.iterrows()):
        found.setdefault(str(int(r["rank"])), {}).setdefault(str(int(r["stream"])), {})[kind] = {
            k: float(r[k]) for k in ("count", "mean", "std", "min", "25%", "50%", "75%", "max")
        }
    return found

def kernel_spread():
    df = ta.get_gpu_kernel_breakdown(visualize=False, duration_ratio=1.0, num_kernels=1 << 30)[1]
    found = {}
    for _, r in df.iterrows():
        found.setdefault(str(int(r["rank"])), {})[r["name"]] = {
            k: float(r[c]) for k, c in (("sum", "sum (us)"), ("mean", "mean (us)"), ("std", "stddev"), ("min", "min (us)"), ("max", "max (us)"))
        }
    return found

def copies():
    from hta.utils.utils import get_memory_kernel_type
    sym = ta.t.symbol_table.get_sym_table()
    found = {}
    for rank in ranks:
        df = ta.t.get_trace(rank)
        dev = df[df["stream"].ne(-1)]
        names = dev["name"].map(lambda n: sym[n])
        mem = dev[names.str.startswith(("Memcpy", "Memset"))]
        kinds = names[mem.index].map(get_memory_kernel_type)
        for kind, g in mem.groupby(kinds):
            found.setdefault(str(rank), {})[kind] = {"count": int(len(g)), "us": float(g["dur"].sum())}
    return found

def counters():
    ta.generate_trace_with_counters(ranks=ranks)
    made = [f for f in os.listdir(d) if "_with_counters" in f]
    return {"files": len(made), "bytes": sum(os.path.getsize(os.path.join(d, f)) for f in made)}

import contextlib, io
for name, fn in [("temporal", temporal), ("idle", idle), ("queues", queues), ("launches", launches),
                 ("op_kernels", op_kernels), ("bandwidth", bandwidth), ("counters", counters),
                 ("idle_stats", idle_stats), ("kernel_spread", kernel_spread), ("copies", copies)]:
    with contextlib.redirect_stdout(io.StringIO()):
        run(name, fn)
out["seconds"] = {k: round(v, 3) for k, v in took.items()}
out["ranks"] = ranks
print(json.dumps(out))
"""


def targets() -> list[Path]:
    """Every shared trace file, and each folder of several rank files as one job."""
    from conftest import SHARED

    found = []
    for folder in sorted(p for p in SHARED.iterdir() if p.is_dir()):
        files = sorted(f for f in folder.iterdir() if f.is_file() and f.name.endswith((".json", ".gz")))
        found += files
        if len(files) > 1 and "rank" in folder.name:
            found.append(folder)
    return found


def main(python: str, only: list[str]) -> None:
    from conftest import SHARED

    found = json.loads(OUT.read_text())["traces"] if OUT.exists() else {}
    for path in targets():
        key = str(path.relative_to(SHARED))
        if only and not any(s in key for s in only):
            continue
        try:
            done = subprocess.run([python, "-c", RUN, str(path)], capture_output=True, text=True, timeout=1800)
            lines = done.stdout.strip().splitlines()
            found[key] = (
                json.loads(lines[-1])
                if lines
                else {"error": (done.stderr.strip().splitlines() or ["crashed"])[-1][:160]}
            )
        except subprocess.TimeoutExpired:
            found[key] = {"error": "took over 30 minutes"}
        print(
            key,
            {k: ("error" if isinstance(v, dict) and "error" in v else "ok") for k, v in found[key].items()},
            flush=True,
        )
    version = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(m.version('HolisticTraceAnalysis'))"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    write(version, found)


def write(version: str, found: dict) -> None:
    """One line per trace: a re-recorded trace is a one-line diff."""
    lines = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(found.items()))
    OUT.write_text(f'{{"hta": {json.dumps(version)}, "traces": {{\n{lines}\n}}}}\n')


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "python", sys.argv[2:])
