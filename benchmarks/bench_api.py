"""The Python API and SQL: what `import tracetui` adds to `import tui`, and `tracetui sql` on a big cached trace.

Prints, each in fresh processes, alternating sides so the machine's noise falls on both:
- the import: `import tui` (the baseline) against `import tracetui` (target: at most 50 ms more);
- on the H100 sample tiled to about 1 GB and cached (the first `tracetui summary` writes the cache):
  `tracetui sql TRACE "SELECT name, count(*) ... GROUP BY name"` as a whole command (target: under 1 s),
  against cached `tracetui summary` in the same run; its phases in one process (open the cached trace,
  register the events table, the query) and the same count by numpy (np.bincount over the name column)
  as the floor; and the peak RSS, against the size of the event columns DuckDB scans in place.
Run: python benchmarks/bench_api.py [--mb 1000] [--keep DIR] [--rounds 15]
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.probe import environment, python, run  # noqa: E402
from benchmarks.tile import tile_json  # noqa: E402

SOURCE = Path(__file__).resolve().parents[1] / "sample_traces" / "h100-bert-small.json.gz"
COPY_BYTES = 618_000  # one tiled copy of the source, written compactly (as bench_big.py)
IMPORT = "import time; t0 = time.perf_counter(); import {module}; print(time.perf_counter() - t0)"
QUERY = "SELECT name, count(*) AS n FROM events GROUP BY name ORDER BY n DESC LIMIT 10"
PHASES = """
import time, sys
t0 = time.perf_counter()
import numpy as np
from tui.model.loading import open_trace
from tui.sql import Session
opened = open_trace(sys.argv[1]); t1 = time.perf_counter()
s = Session(opened.results); s.ensure(["events"]); t2 = time.perf_counter()
rows = s.query(QUERY).rows; t3 = time.perf_counter()
x = opened.results.trace.x
counts = np.bincount(x.name); top = np.argsort(-counts)[:10]; t4 = time.perf_counter()
assert rows[0][1] == counts[top[0]], (rows[0], counts[top[0]])
size = sum(a.nbytes for a in (x.name, x.cat_str, x.cat, x.track, x.ts, x.dur, x.corr, x.ext))
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, x.ts.__class__.__name__, size, opened.results.trace.n)
"""


def imports(env: dict, rounds: int) -> tuple[list[float], list[float]]:
    """Seconds of `import tui` and `import tracetui` in fresh processes, alternating."""
    base, api = [], []
    for _ in range(rounds):
        base.append(float(python(IMPORT.format(module="tui"), env).out))
        api.append(float(python(IMPORT.format(module="tracetui"), env).out))
    return base, api


def command(env: dict, *args: str):
    return run([sys.executable, "-m", "tui.cli", *args], env)


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("--mb", type=int, default=1000, help="size of the tiled trace")
    opts.add_argument("--keep", type=Path, help="make (or reuse) the trace and its cache in this folder")
    opts.add_argument("--rounds", type=int, default=15, help="fresh processes per side for the import")
    args = opts.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="tracetui-bench-api-"))
    folder.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(folder / "cache", ignore_errors=True)  # "first" means it: nothing from an earlier run
    env = environment(folder / "cache")
    print(f"{platform.machine()}, Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}")

    base, api = imports(env, args.rounds)
    b, a = statistics.median(base) * 1000, statistics.median(api) * 1000
    print(f"  import tui (baseline)      {b:6.1f} ms   (median of {args.rounds} fresh processes)")
    print(f"  import tracetui            {a:6.1f} ms   adds {a - b:+.1f} ms (target <= 50 ms)")

    path = folder / f"tiled-{args.mb}mb.json"
    if not path.exists():
        tile_json(max(1, args.mb * 1_000_000 // COPY_BYTES), path, SOURCE)
    first = command(env, "summary", str(path))  # writes the cache: the columns, nesting, links, tables
    once = command(env, "sql", str(path), QUERY)  # the first query keeps what the events table adds (depth, step)
    summary = [command(env, "summary", str(path)) for _ in range(3)]
    sql = [command(env, "sql", str(path), QUERY) for _ in range(3)]
    s_sec = statistics.median(r.seconds for r in summary)
    q_sec = statistics.median(r.seconds for r in sql)
    phases = python(PHASES.replace("sys.argv[1]", repr(str(path))).replace("QUERY", repr(QUERY)), env).out.split()
    opened, register, query, floor = (float(v) for v in phases[:4])
    kind, columns, n = phases[4], int(phases[5]), int(phases[6])
    size = path.stat().st_size
    print(
        f"{path.name}: {size / 1e9:.2f} GB, {n:,} duration events; first summary (writes the cache) {first.seconds:.1f} s"
    )
    print(
        f"  tracetui sql, the first query after summary (keeps the events table's depth and step) {once.seconds:5.2f} s"
    )
    print(f"  tracetui summary, cached (baseline)   {s_sec:5.2f} s")
    print(f"  tracetui sql count(*) by name, cached {q_sec:5.2f} s = {q_sec / s_sec:4.2f}x summary (target < 1 s)")
    print(
        f"      in one process: imports and open the cached trace {opened:5.2f} s, register events {register:5.2f} s, the query {query:5.2f} s"
    )
    print(f"      the same count with numpy (np.bincount on the name column): {floor:5.3f} s")
    peak = max(r.peak_gb for r in sql)
    print(
        f"  peak RSS of tracetui sql {peak:5.2f} GB; the event columns it scans ({kind}) are {columns / 1e9:.2f} GB "
        f"= {peak * 1e9 / columns:.2f}x them, {peak * 1e9 / size:.2f}x the file"
    )


if __name__ == "__main__":
    main()
