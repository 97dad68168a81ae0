"""What saying each finding's saving costs explain: the what-ifs against the rules themselves and one critical path.

For each trace (the h100-bert-small sample and the largest shared traces, cached as after `tracetui summary`), in
this process, with what the rules read computed first (summary, roofline, launch queues, the default critical path):
- the explain rules alone (what explain cost before savings): the baseline of the ratios;
- the savings: each distinct what-if spec solved on the window's graph (explain/savings.py);
- one critical path of the same window, from its graph: what one what-if costs at least.
Run: python benchmarks/bench_explain.py [--repeat 3] [TRACE ...]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.probe import ROOT  # noqa: E402

SHARED = ROOT.parent / "shared" / "traces"
LARGEST = 4  # shared traces timed, the largest files first


def traces(given: list[str]) -> list[Path]:
    if given:
        return [Path(p) for p in given]
    shared = sorted(SHARED.glob("*/*.gz"), key=lambda p: -p.stat().st_size) if SHARED.is_dir() else []
    return [ROOT / "sample_traces" / "h100-bert-small.json.gz", *shared[:LARGEST]]


def best(fn, repeat: int) -> tuple[float, object]:
    """The fastest of repeat runs (s) and the last result: the others' load on a shared machine mostly adds."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def one(path: Path, repeat: int) -> dict:
    from tui.model import load_trace
    from tui.model.analyses.critical import critical_path
    from tui.model.analyses.explain.rules import RULES
    from tui.model.analyses.explain.savings import window, with_savings
    from tui.model.analyses.results import Results

    a = Results(load_trace(path))
    _ = a.summary, a.roofline, a.launch_queues, a.critical, a.graph_owner  # what the rules read, computed once
    rules_s, found = best(lambda: [f for r in RULES for f in r.find(a, a.summary)], repeat)
    savings_s, said = best(lambda: with_savings(a, list(found)), repeat)
    path_s, _ = best(lambda: critical_path(a, window(a), a.graph_owner), repeat)
    specs = {f.saving.spec for f in said if f.saving is not None}
    return {"name": path.parent.name, "events": a.trace.n, "findings": len(found), "specs": len(specs),
            "rules_s": rules_s, "savings_s": savings_s, "path_s": path_s}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="*")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(
        f"{platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, Python {platform.python_version()}"
    )
    print(f"{'trace':45} {'events':>9} {'findings':>8} {'specs':>5} {'rules':>8} {'savings':>8} {'x rules':>8} "
          f"{'path':>7} {'x path':>7}")  # fmt: skip
    for path in traces(args.traces):
        r = one(path, args.repeat)
        print(
            f"{r['name'][:45]:45} {r['events']:>9,} {r['findings']:>8} {r['specs']:>5} {r['rules_s']:>7.3f}s "
            f"{r['savings_s']:>7.3f}s {r['savings_s'] / max(r['rules_s'], 1e-9):>7.1f}x {r['path_s']:>6.3f}s "
            f"{r['savings_s'] / max(r['path_s'], 1e-9):>6.1f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
