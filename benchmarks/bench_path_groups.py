"""The path view's grouping (critical/groups.py) against the critical path it groups, on the same step.

Prints, per trace (the shipped a100-train-control and BERT samples, and the largest shared trace when present):
the path's stretches, the best of --repeat runs of computing the path (the baseline), of grouping it with frames
shown (what `tracetui critical` does) and with frames hidden (the viewer's default on deep stacks), and the
grouping's time as a ratio of the path's. Both run in a worker in the viewer; the ratio says what grouping adds to
the wait before the path view shows its rows.
Run: python benchmarks/bench_path_groups.py [--repeat 5] [TRACE ...]
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

DEFAULT = [
    ROOT / "sample_traces" / "h100-bert-small.json.gz",
    ROOT / "sample_traces" / "a100-train-control.json.gz",
    ROOT.parent / "shared" / "traces" / "hta-2022-11-v100-ddp-memory-216k" / "df_index_resolver.json.gz",
]


def best(fn, repeat: int) -> tuple[float, object]:
    """The fastest of repeat runs (seconds) and the last result."""
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def measure(path: Path, repeat: int) -> str:
    from tui.model.analyses.critical import critical_path, find_window
    from tui.model.analyses.critical.groups import path_groups
    from tui.model.loading import open_trace

    r = open_trace(path).results
    frameless = r.frameless
    frameless.nesting  # noqa: B018 - computed before timing, as the viewer has it when frames are hidden
    r.graph_owner  # noqa: B018
    path_s, p = best(lambda: critical_path(r, find_window(r.trace), r.graph_owner), repeat)
    shown_s, groups = best(lambda: path_groups(r.trace, p), repeat)  # type: ignore[arg-type]
    hidden_s, hidden = best(lambda: path_groups(r.trace, p, frameless), repeat)  # type: ignore[arg-type]
    return (
        f"{path.name}: {len(p.items):,} stretches -> {len(groups):,} groups ({len(hidden):,} with frames hidden); "  # type: ignore[union-attr,arg-type]
        f"path {path_s * 1000:.0f} ms, grouping {shown_s * 1000:.0f} ms ({shown_s / path_s:.2f}x the path), "
        f"frames hidden {hidden_s * 1000:.0f} ms ({hidden_s / path_s:.2f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("traces", nargs="*", type=Path, default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
    )
    for path in args.traces:
        if path.exists():
            print(measure(path, args.repeat), flush=True)


if __name__ == "__main__":
    main()
