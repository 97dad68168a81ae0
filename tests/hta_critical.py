"""Record HTA's critical path on the shared traces, for tests/model/test_critical_hta.py (tests/data/critical_hta.json).

HTA (holistictraceanalysis 0.5) needs pandas older than 2.2, so it runs in its own virtual environment:

    python3 -m venv /tmp/hta-venv && /tmp/hta-venv/bin/pip install holistictraceanalysis 'pandas<2.2'
    python tests/hta_critical.py /tmp/hta-venv/bin/python

For each shared trace it takes tracetui's default window (the slowest ProfilerStep, else the whole trace),
runs HTA's critical_path_analysis on the same annotation (instance 0; the whole trace as annotation ""),
and keeps HTA's time per class on its path, or the error it stopped with.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

OUT = ROOT / "tests" / "data" / "critical_hta.json"
RUN = r"""
import json, logging, os, sys, tempfile, time
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
path, annotation = sys.argv[1], sys.argv[2]
d = tempfile.mkdtemp()
os.symlink(path, os.path.join(d, os.path.basename(path)))
out = {}
t0 = time.perf_counter()
try:
    ta = TraceAnalysis(trace_dir=d, include_last_profiler_step=True)
    t1 = time.perf_counter()
    rank = next(iter(ta.t.traces))
    found = ta.critical_path_analysis(rank=rank, annotation=annotation, instance_id=0)
    t2 = time.perf_counter()
    if found is None or not found[1]:
        out["error"] = "no critical path"
    else:
        df = found[0].get_critical_path_breakdown()
        out["us"] = {k: float(v) for k, v in df.groupby("bound_by").duration.sum().items() if k}
        out["load_s"], out["path_s"] = round(t1 - t0, 2), round(t2 - t1, 2)
except Exception as exc:
    out["error"] = f"{type(exc).__name__}: {str(exc)[:120]}"
print(json.dumps(out))
"""


def main(python: str) -> None:
    from conftest import SHARED, shared_traces

    from tui.model import load_trace
    from tui.model.analyses.critical import find_window

    found = {}
    for path in shared_traces():
        window = find_window(load_trace(path, use_cache=False))
        annotation = window.name if window.event >= 0 else ""
        done = subprocess.run([python, "-c", RUN, str(path), annotation], capture_output=True, text=True, timeout=1800)
        result = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else {"error": "crashed"}
        found[str(path.relative_to(SHARED))] = {"window": window.name, **result}
        print(path.relative_to(SHARED), found[str(path.relative_to(SHARED))], flush=True)
    version = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(m.version('HolisticTraceAnalysis'))"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    OUT.write_text(json.dumps({"hta": version, "traces": found}, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "python")
