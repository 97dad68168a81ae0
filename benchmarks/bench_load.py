"""Load speed: tracetui vs json.load and orjson on the same tiled trace, in the same run.

Prints seconds, peak memory and the ratio to json.load (the baseline HTA uses), for a cold
load (no cache), a cached re-open, and the app's first paint (worker load + first frame).
Run: python benchmarks/bench_load.py [copies]   (3 copies of the A100 trace is ~93 MB; from about 90 MB of
events up, tracetui decodes on all cores)

With --trace PATH (a .json or .json.gz, unzipped first) it instead times whole commands, interpreter start
included, alternating in fresh processes: `orjson.loads` of the file against `tracetui summary --no-cache`,
and prints the median of each and their ratio.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.tile import tile_json  # noqa: E402

PROBES = {
    "json.load (baseline)": "import json; d = json.load(open(P)); n = len(d['traceEvents'])",
    "orjson.loads": "import orjson; d = orjson.loads(open(P, 'rb').read()); n = len(d['traceEvents'])",
    "tracetui, no cache, one process": (
        "import tui.model.load.parts as parts; parts.PARALLEL_MIN_BYTES = 1 << 62\n"
        "from tui.model import load_trace; t = load_trace(P, use_cache=False); n = t.n"
    ),
    "tracetui, no cache": "from tui.model import load_trace; t = load_trace(P, use_cache=False); n = t.n",
    "tracetui, first open (writes cache)": "from tui.model import load_trace; t = load_trace(P); n = t.n",
    "tracetui, cached re-open": "from tui.model import load_trace; t = load_trace(P); n = t.n",
}


def run_probe(code: str, path: Path, env: dict) -> tuple[float, float]:
    """Seconds and peak RSS (GB) of code in a fresh process."""
    script = (
        f"import time, resource; P = {str(path)!r}; t0 = time.perf_counter()\n{code}\n"
        "print(time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6)"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True).stdout
    seconds, peak = out.split()
    return float(seconds), float(peak)


async def first_paint(path: Path) -> float:
    from tui.app import TraceApp
    from tui.screens.main import MainScreen

    app = TraceApp([str(path)], use_cache=False)
    t0 = time.perf_counter()
    async with app.run_test(size=(160, 45)) as pilot:
        while not isinstance(app.screen, MainScreen):
            if app.load_error is not None or not app.is_running:
                raise SystemExit(f"the app did not load the trace: {app.load_error!r}")
            await pilot.pause(0.01)
        await pilot.pause()
        return time.perf_counter() - t0


def whole_commands(trace: Path, rounds: int) -> None:
    """orjson.loads against the first summary, each a whole fresh process, `rounds` times alternating."""
    from benchmarks.probe import environment, run, tracetui

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        data = trace.read_bytes()
        path.write_bytes(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
        env = environment(Path(tmp) / "cache")
        base_code = f"import orjson; d = orjson.loads(open({str(path)!r}, 'rb').read()); n = len(d['traceEvents'])"
        base, ours = [], []
        for _ in range(rounds):
            base.append(run([sys.executable, "-c", base_code], env).seconds)
            ours.append(tracetui("summary", str(path), "--no-cache", env=env).seconds)
        b, o = statistics.median(base), statistics.median(ours)
        print(f"{trace.name}: {path.stat().st_size / 1e6:.0f} MB, {rounds} rounds, whole processes (start included)")
        print(f"  orjson.loads             median {b:.2f} s  ({min(base):.2f}-{max(base):.2f})")
        print(f"  summary --no-cache       median {o:.2f} s  ({min(ours):.2f}-{max(ours):.2f}) = {o / b:.2f}x orjson")


def main() -> None:
    if "--trace" in sys.argv:
        at = sys.argv.index("--trace")
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 7
        whole_commands(Path(sys.argv[at + 1]), rounds)
        return
    copies = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with tempfile.TemporaryDirectory() as tmp:
        path = tile_json(copies, Path(tmp) / "tiled.json")
        env = {
            **os.environ,
            "TRACETUI_CACHE_DIR": str(Path(tmp) / "cache"),
            "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
        }
        size = path.stat().st_size / 1e6
        print(f"trace: {copies} copies of the A100 training trace, {size:,.0f} MB")
        results = {name: run_probe(code, path, env) for name, code in PROBES.items()}
        base = results["json.load (baseline)"][0]
        print(f"{'approach':40s} {'seconds':>8s} {'peak GB':>8s} {'vs json.load':>13s}")
        for name, (sec, peak) in results.items():
            print(f"{name:40s} {sec:8.2f} {peak:8.2f} {base / sec:12.1f}x")
        paint = asyncio.run(first_paint(path))
        load = results["tracetui, no cache"][0]
        print(
            f"first paint of the app (load in worker + first frame): {paint:.2f}s = {paint / load:.2f}x the load time"
        )
    print(f"(this process peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB)")


if __name__ == "__main__":
    main()
