"""--what-if graphs against measured runs: predict the CUDA-graph (reduce-overhead) captures of the H200 series from
their plain torch.compile captures, and print predicted and measured side by side.

The series' step times are disturbed (five capture processes shared the GPU): besides the step's critical path
(what the what-if predicts), the table gives each capture's device work per step from the kernels' own durations,
which the other processes do not stretch, and the static-input copies reduce-overhead adds (the kernels launched by
aten::_foreach_copy_ inside the compiled graph's call), which the compiled trace cannot show.

    python benchmarks/whatif_graphs.py [FOLDER]    # default: sample_traces/cuda-h200, else ../shared's series
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAIRS = [("matmul_add_4096_warm_compiled", "matmul_add_4096_warm_compiled_reduce_overhead"),
         ("mlp_fwd_compiled", "mlp_fwd_compiled_reduce_overhead")]  # fmt: skip


def folder() -> Path:
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    here = ROOT / "sample_traces" / "cuda-h200"
    return here if here.is_dir() else ROOT.parent / "shared" / "traces" / "cuda-h200-series"


def measure(compiled: Path, graphs: Path) -> dict[str, float]:
    """The prediction and what the graph run did (us): step path lengths, device work, static-input copies."""
    from tui.model.analyses.critical import parse_spec, what_if
    from tui.model.loading import open_trace

    a = open_trace(str(compiled), cache=False).results
    b = open_trace(str(graphs), cache=False).results
    w = what_if(a, a.typical_window, [parse_spec("graphs")], a.graph_owner)
    launch = what_if(a, a.typical_window, [parse_spec("launch=0")], a.graph_owner)
    return {
        "launch0_us": launch.after.length_ns / 1000,
        "compiled_us": w.before.length_ns / 1000,
        "predicted_us": w.after.length_ns / 1000,
        "measured_us": b.critical.length_ns / 1000,
        "copies_us": input_copies_us(b),
        "device_compiled_us": a.typical.device_us if a.typical else 0.0,
        "device_graphs_us": b.typical.device_us if b.typical else 0.0,
    }


def input_copies_us(b) -> float:
    """Device time per step of the copies reduce-overhead makes of non-static inputs (aten::_foreach_copy_'s
    kernels), in the typical step."""
    x, step = b.trace.x, b.typical
    if step is None:
        return 0.0
    t0, t1 = x.ts[step.event], x.ts[step.event] + x.dur[step.event]
    copies = [k for k, n in enumerate(b.trace.names) if n == "aten::_foreach_copy_"]
    ops = np.flatnonzero(np.isin(x.name, copies) & (x.ts >= t0) & (x.ts < t1))
    total = 0
    for op in ops.tolist():
        for child in np.flatnonzero(b.nesting.time_parent == op).tolist():
            total += sum(int(x.dur[k]) for k in b.links.launched(child))
    return total / 1000


def main() -> None:
    where = folder()
    print(f"--what-if graphs against measured reduce-overhead runs ({where})")
    print(f"{'workload':18} {'compiled':>9} {'launch=0':>9} {'predicted':>10} {'measured':>9} {'error':>7} {'copies':>7} "
          f"{'pred+copies':>12} {'error':>7} {'dev/step c':>11} {'dev/step g':>11}")  # fmt: skip
    for c, g in PAIRS:
        m = measure(where / f"{c}.json.gz", where / f"{g}.json.gz")
        err = m["predicted_us"] / m["measured_us"] - 1
        adj = (m["predicted_us"] + m["copies_us"]) / m["measured_us"] - 1
        print(
            f"{c.removesuffix('_compiled'):18} {m['compiled_us']:9.1f} {m['launch0_us']:9.1f} {m['predicted_us']:10.1f} {m['measured_us']:9.1f} "
            f"{err:+7.0%} {m['copies_us']:7.1f} {m['predicted_us'] + m['copies_us']:12.1f} {adj:+7.0%} "
            f"{m['device_compiled_us']:11.1f} {m['device_graphs_us']:11.1f}"
        )


if __name__ == "__main__":
    main()
