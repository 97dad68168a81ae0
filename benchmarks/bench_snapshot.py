"""A big allocator snapshot: reading it safely against pickle.load, the columns, the report, the viewer's cells.

The shared H200 snapshot's history (2,684 entries, 3 training steps) is tiled COPIES times: every copy but the
last keeps the allocations it frees (their alloc, free_requested and free_completed), shifted in time; the last
is the whole history, so the end still matches the segments. Each copy's frames are new dicts, as torch writes
them (a real snapshot shares no frame between entries), so the file is as large per entry as a real one.

    python benchmarks/bench_snapshot.py [COPIES] [--keep DIR]

Every figure is a ratio against pickle.load of the same file measured in the same run (the baseline torch's
own _memory_viz uses, which runs whatever the file asks for).
"""

from __future__ import annotations

import argparse
import copy
import gc
import gzip
import os
import pickle
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SOURCE = ROOT / "tests" / "data" / "snapshots" / "h200-gpt-train.pickle.gz"


def tiled(copies: int) -> dict:
    """The shared snapshot with its history tiled copies times (see the module's docstring)."""
    doc = pickle.loads(gzip.decompress(SOURCE.read_bytes()))  # our own test file: plain data
    entries = doc["device_traces"][0]
    span = entries[-1]["time_us"] - entries[0]["time_us"] + 1000
    freed = _freed_in_history(entries)
    out = []
    for k in range(copies):
        last = k == copies - 1
        for i, e in enumerate(entries):
            if not last and i not in freed:
                continue
            e2 = dict(e, time_us=e["time_us"] + (k - copies + 1) * span)
            e2["frames"] = copy.deepcopy(e["frames"])
            out.append(e2)
    doc["device_traces"] = [out]
    return doc


def _freed_in_history(entries: list[dict]) -> set[int]:
    """The entries of the allocations allocated and freed within the history."""
    open_: dict[int, list[int]] = {}
    keep: set[int] = set()
    for i, e in enumerate(entries):
        if e["action"] == "alloc":
            open_[e["addr"]] = [i]
        elif e["action"] in ("free_requested", "free_completed") and e["addr"] in open_:
            open_[e["addr"]].append(i)
            if e["action"] == "free_completed":
                keep.update(open_.pop(e["addr"]))
    return keep


def timed(what: str, fn, base: float | None = None):
    start = time.perf_counter()
    value = fn()
    took = time.perf_counter() - start
    ratio = f"  {took / base:6.2f}x pickle.load" if base else ""
    print(f"{what:<46}{took:8.3f} s{ratio}")
    return value, took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("copies", type=int, nargs="?", default=20)
    parser.add_argument("--keep", metavar="DIR", help="write the big snapshot here (else a temporary folder)")
    args = parser.parse_args()

    from tui.model.snapshot import open_snapshot
    from tui.model.snapshot.columns import build
    from tui.model.snapshot.read import read_plain
    from tui.model.snapshot.report import device_memory, report
    from tui.model.snapshot.state import state_at
    from tui.model.snapshot.timeline import grid
    from tui.model.view.viewport import fit

    folder = Path(args.keep or tempfile.mkdtemp(prefix="bench-snapshot-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"tiled-{args.copies}.pickle"
    doc = tiled(args.copies)
    n = len(doc["device_traces"][0])
    path.write_bytes(pickle.dumps(doc))
    del doc
    print(f"{path}: {n:,} entries, {path.stat().st_size / 2**20:,.1f} MB (busy shared machine: ratios, not seconds)")

    with open(path, "rb") as f:
        _, base = timed("pickle.load (the baseline; runs what it finds)", lambda: pickle.load(f))
    raw, _ = timed("read_plain (restricted unpickler)", lambda: read_plain(path), base)
    timed("columns (interned stacks, one row per entry)", lambda: build(str(path), raw), base)
    raw = {}
    gc.collect()
    snap, _ = timed("open_snapshot (both, the cycle collector paused)", lambda: open_snapshot(path, cache=False), base)
    os.environ["TRACETUI_CACHE_DIR"] = str(folder / "cache")
    open_snapshot(path)  # a first read stores the columns
    snap, _ = timed("open_snapshot again (the columns from the cache)", lambda: open_snapshot(path), base)
    mem, _ = timed("allocations, curves, segment spans", lambda: device_memory(snap, 0), base)
    timed("report (peak, by frame, leaks, segments, OOMs)", lambda: report(snap, {0: mem}), base)
    h = snap.histories[0]
    assert mem.curves is not None
    view = fit(int(h.time_ns[0]), int(h.time_ns[-1]), 200)
    timed(
        "timeline cells, whole history, 200 x 40",
        lambda: grid(mem.allocs, mem.curves, h.time_ns, view.t0, view.bucket, 200, 40),
        base,
    )
    peak = int(mem.curves.live.argmax())
    timed("segments rebuilt at the peak", lambda: state_at(snap, 0, mem.allocs, mem.spans, peak), base)
    print(
        f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10:,.0f} MB; {len(mem.allocs):,} allocations"
    )
    if not args.keep:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
