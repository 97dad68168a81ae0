"""The compiled scan's kernel and its grouping, this checkout against an earlier commit's, in one process.

Loads the earlier commit's `tui/model/load/scan.py` (from git) beside this checkout's, cuts the first CHUNKS
chunks of about 4 MB of events from TRACE, compiles or loads both from numba's cache before the clock, then for
each chunk runs each side REPS times in turn (base, now, base, now...) and counts each side's best: the host's
drift falls on both alike (separate processes a round apart measured 0.92-1.14x for the same pair on this shared
host). Times the kernel (`scan`) and the grouping after it (`first_seen` of names and categories,
`first_seen_tracks`). Both sides must read the same rows and groups (the hashes may differ between commits).
Prints MB/s per side and the ratio now / base. Needs numba (the fast extra).
Run: python benchmarks/bench_scan.py TRACE [--base REV] [--chunks 40] [--reps 7]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.probe import ROOT  # noqa: E402
from tui.model.load import scan as now  # noqa: E402


def base_scan(rev: str, where: Path):
    """scan.py as it was at rev, loaded beside this checkout's (its relative imports read this checkout's)."""
    text = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:tui/model/load/scan.py"], check=True, capture_output=True
    ).stdout
    path = where / "scan_base.py"
    path.write_bytes(text)
    spec = importlib.util.spec_from_file_location("tui.model.load.scan_base", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "tui.model.load"
    spec.loader.exec_module(module)
    return module


def chunks_of(trace: Path, count: int) -> list[np.ndarray]:
    """The first `count` chunks of about 4 MB of events, each '[' + whole events + ']'."""
    with open(trace, "rb") as f:
        data = f.read(count * 4_200_000 + (64 << 20))
    at = data.find(b"{", data.find(b"[", data.find(b'"traceEvents"')))
    out = []
    while len(out) < count:
        end = data.find(b"},\n{", at + 4_000_000)
        if end < 0:
            break
        out.append(np.frombuffer(bytearray(b"[" + data[at : end + 1] + b"]"), np.uint8))
        at = end + 3
    return out


def grouping(scan, b, rows, h):
    """The groups of names, categories and tracks (the first event of each, and each event's group)."""
    out = [
        scan.first_seen(b, np.ascontiguousarray(h[:, hcol]), rows[:, col], rows[:, col + 1])
        for col, hcol in ((scan.NAME, scan.H_NAME), (scan.CAT, scan.H_CAT))
    ]
    return [*out, scan.first_seen_tracks(b, rows, h)]


class Side:
    def __init__(self, scan, room: int) -> None:
        self.scan, self.kernel, self.group = scan, 0.0, 0.0
        self.rows = (
            np.empty((room, scan.INTS), np.int64),
            np.empty((room, 2)),
            np.empty((room, scan.HASHES), np.uint64),
        )

    def run(self, b: np.ndarray) -> tuple[float, float, tuple]:
        """One read of a chunk: the kernel's and the grouping's seconds, and what they found."""
        t = time.perf_counter()
        k, why = self.scan.scan(b, *self.rows)
        kernel = time.perf_counter() - t
        assert not why, self.scan.REASONS[why]
        ints, floats, hashes = (a[:k].copy() for a in self.rows)
        t = time.perf_counter()
        groups = grouping(self.scan, b, ints, hashes)
        return kernel, time.perf_counter() - t, (ints, floats, groups)


def same(a: tuple, b: tuple) -> bool:
    ints, floats, groups = a
    return (
        np.array_equal(ints, b[0])
        and np.array_equal(floats, b[1], equal_nan=True)
        and all(np.array_equal(x, y) for g, h in zip(groups, b[2], strict=True) for x, y in zip(g, h, strict=True))
    )


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("trace", type=Path)
    opts.add_argument("--base", default="HEAD~1", help="the commit to compare with")
    opts.add_argument("--chunks", type=int, default=40)
    opts.add_argument("--reps", type=int, default=7, help="runs per chunk and side, the best counted")
    args = opts.parse_args()
    chunks = chunks_of(args.trace, args.chunks)
    room = max(len(c) for c in chunks) // 10 + 16
    with tempfile.TemporaryDirectory(prefix="tracetui-scan-") as scratch:
        sides = {"base": Side(base_scan(args.base, Path(scratch)), room), "now": Side(now, room)}
        alike = all(same(sides["base"].run(b)[2], sides["now"].run(b)[2]) for b in chunks)  # compiles both first
        for b in chunks:
            best = {name: [float("inf"), float("inf")] for name in sides}
            for _ in range(args.reps):
                for name, s in sides.items():
                    kernel, group, _ = s.run(b)
                    best[name] = [min(best[name][0], kernel), min(best[name][1], group)]
            for name, s in sides.items():
                s.kernel += best[name][0]
                s.group += best[name][1]
    mb = sum(map(len, chunks)) / 1e6
    print(f"{args.trace.name}: {len(chunks)} chunks, {mb:.0f} MB; best of {args.reps} per chunk; base = {args.base}")
    print(f"  rows and groups alike on both sides: {'yes' if alike else 'NO'}")
    for part in ("kernel", "group"):
        b, n = getattr(sides["base"], part), getattr(sides["now"], part)
        print(f"  {part:6s}  base {mb / b:6.0f} MB/s  now {mb / n:6.0f} MB/s  now/base time {n / b:.3f}")


if __name__ == "__main__":
    main()
