"""The salvage of damaged chunks, this checkout against an earlier commit: what it keeps and what it costs.

Writes two damaged traces of the same events (each an op whose args hold an array of objects, so a `}, {` inside
every event, and a string with one), one malformed event (two members without a comma) every --every events, so
every chunk is read by the salvage: "plain" without such args, "boundaries" with them. Each side loads each file in
a fresh process (`load_trace(..., use_cache=False)`), in turn, --rounds times: the median wall time, the events
loaded and what the load said it skipped. The join of pieces cut inside an event (source.whole_events) is what
differs: on "plain" it costs what deciding to try no join costs; on "boundaries" the base loses the events.
Run: python benchmarks/bench_salvage.py [--base REV] [--events 400000] [--every 2000] [--rounds 3] [--timeout 300]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_views import worktree  # noqa: E402
from benchmarks.probe import ROOT, environment, run  # noqa: E402

PROBE = """
import json, sys, time
from tui.model.load.loader import load_trace
from tui.model.errors import TraceError
t0 = time.perf_counter()
try:
    t = load_trace(sys.argv[1], use_cache=False)
    n, said = t.n, t.report.warning() or ""
except TraceError as exc:
    n, said = 0, f"error: {exc}"
print(json.dumps({"s": time.perf_counter() - t0, "n": n, "said": said}))
"""


def event(k: int, boundaries: bool) -> dict:
    args: dict = {"External id": k, "Input Dims": [[8, 16], [16, 32]], "Sequence number": k}
    if boundaries:
        args["extra"] = [{"a": k}, {"b": [1, {"c": "x}, {y"}]}]
    return {
        "ph": "X",
        "cat": "cpu_op",
        "name": f"aten::op{k % 31}",
        "pid": 1,
        "tid": 1,
        "ts": k,
        "dur": 1,
        "args": args,
    }


def damaged(path: Path, events: int, every: int, boundaries: bool) -> Path:
    with path.open("w") as f:
        f.write('{"traceEvents":[')
        for k in range(events):
            f.write(("" if k == 0 else ", ") + json.dumps(event(k, boundaries), separators=(",", ":")))
            if k % every == every // 2:
                f.write(', {"ph":"X","name":"bad" "pid":1}')  # no comma between two members
        f.write("]}")
    return path


def probe(path: Path, env: dict, tree: Path, timeout: int) -> dict:
    """One load in a fresh process: its seconds, events and warning (stopped after timeout seconds)."""
    try:
        done = run([sys.executable, "-c", PROBE, str(path)] if not timeout else
                   ["timeout", str(timeout), sys.executable, "-c", PROBE, str(path)], env, cwd=tree)  # fmt: skip
    except SystemExit:  # (probe.run's word for a process that failed: here, one stopped by timeout)
        return {"s": float(timeout), "n": -1, "said": f"(stopped after {timeout} s)"}
    return json.loads(done.out.strip().splitlines()[-1])


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("--base", default="c0afc1c7", help="the commit to compare with")
    opts.add_argument("--events", type=int, default=400_000)
    opts.add_argument("--every", type=int, default=2_000, help="a malformed event every this many")
    opts.add_argument("--rounds", type=int, default=3)
    opts.add_argument("--timeout", type=int, default=300, help="seconds a load may take before it is stopped")
    args = opts.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="tracetui-salvage-"))
    files = {
        kind: damaged(scratch / f"{kind}.json", args.events, args.every, kind == "boundaries")
        for kind in ("plain", "boundaries")
    }
    sides = {args.base: worktree(args.base, scratch / "base"), "now": ROOT}
    got: dict[tuple[str, str], list[dict]] = {}
    try:
        for _ in range(args.rounds):
            for kind, path in files.items():
                for side, tree in sides.items():
                    env = {**environment(scratch / "cache"), "PYTHONPATH": str(tree)}
                    got.setdefault((kind, side), []).append(probe(path, env, tree, args.timeout))
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(sides[args.base])], check=False)
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{args.events:,} events, a malformed one every {args.every:,}; median of {args.rounds} fresh processes")
    print(f"{'file':12s}{'side':>10s}{'load s':>9s}{'/ base':>8s}{'events':>10s}  said")
    for kind in files:
        base = statistics.median(r["s"] for r in got[(kind, args.base)])
        for side in sides:
            rows = got[(kind, side)]
            s = statistics.median(r["s"] for r in rows)
            print(f"{kind:12s}{side:>10s}{s:9.2f}{s / base:7.2f}x{rows[-1]['n']:10,d}  {rows[-1]['said'][:70]}")


if __name__ == "__main__":
    main()
