"""Make big traces by tiling a real one in time (shared by the benchmarks).

Run: python benchmarks/tile.py OUT.json [--mb 200] [--source TRACE]: OUT.json holds time-shifted copies of TRACE
(sample_traces/h100-bert-small.json.gz, with Python stacks) up to about that many MB.
"""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import orjson

from tui.model.columns import Events
from tui.model.trace import TraceColumns

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "sample_traces" / "a100-train-control.json.gz"


ID_ARGS = ("correlation", "External id", "Python id", "Python parent id")
ID_STEP = 10_000_000  # ids of copy k are shifted by k * ID_STEP, so launches and frames pair within a copy


def tile_json(copies: int, out: Path, source: Path = SOURCE, **top) -> Path:
    """Write a JSON trace holding `copies` time-shifted copies of source's events.

    The top-level keys of the source are kept (baseTimeNanoseconds, deviceProperties, profiler flags),
    overridden by `top` (e.g. distributedInfo for a rank); correlation, External id, Python ids and
    flow ids are shifted per copy, so each copy links and nests within itself.
    """
    doc = json.loads(gzip.decompress(source.read_bytes()) if source.name.endswith(".gz") else source.read_bytes())
    if isinstance(doc, list):
        doc = {"traceEvents": doc}
    events = [e for e in doc["traceEvents"] if e.get("ph") != "M"]
    meta = [e for e in doc["traceEvents"] if e.get("ph") == "M"]
    ts = [e["ts"] for e in events if isinstance(e.get("ts"), (int, float))]
    ends = [e["ts"] + e.get("dur", 0) for e in events if isinstance(e.get("ts"), (int, float))]
    span = math.ceil(max(ends) - min(ts)) + 1000  # whole µs: shifted decimals stay exact, copies never overlap
    head = {k: v for k, v in doc.items() if k != "traceEvents"} | top
    with open(out, "wb") as f:
        f.write(orjson.dumps(head)[:-1] + (b', "traceEvents": [\n' if len(head) else b'"traceEvents": [\n'))
        for k in range(copies):
            f.write(b",\n".join(orjson.dumps(_shifted(e, k, k * span)) for e in events))
            f.write(b",\n")
        f.write(b",\n".join(orjson.dumps(m) for m in meta))
        f.write(b"\n]}\n")
    return out


def _shifted(e: dict, k: int, shift: float) -> dict:
    if not k:
        return e
    e2 = dict(e)
    if isinstance(e2.get("ts"), (int, float)):
        e2["ts"] = round(e2["ts"] + shift, 3)
    if isinstance(e2.get("id"), int):
        e2["id"] += k * ID_STEP
    args = e2.get("args")
    if isinstance(args, dict) and any(isinstance(args.get(a), int) for a in ID_ARGS):
        e2["args"] = {a: v + k * ID_STEP if a in ID_ARGS and isinstance(v, int) else v for a, v in args.items()}
    return e2


def tile_columns(trace: TraceColumns, copies: int) -> TraceColumns:
    """The same trace with its duration events tiled `copies` times in time (no JSON)."""
    x = trace.x
    span = int((x.ts + x.dur).max() - x.ts.min()) + 1_000_000
    cols = {}
    for key, arr in x.columns().items():
        parts = []
        for k in range(copies):
            a = np.asarray(arr)
            if key == "ts":
                a = a + k * span
            elif key in ("corr", "ext", "py_id", "py_parent"):
                a = np.where(a >= 0, a + k * 10_000_000_000, a)
            parts.append(a)
        cols[key] = np.concatenate(parts)
    return replace(trace, x=Events.from_columns(cols), store=None)  # derived data of the original would not fit


def main() -> None:
    import argparse
    import tempfile

    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("out", type=Path, help="the tiled trace to write (.json)")
    opts.add_argument("--mb", type=int, default=200, help="about how big (MB; default 200)")
    opts.add_argument("--source", type=Path, default=ROOT / "sample_traces" / "h100-bert-small.json.gz")
    args = opts.parse_args()
    with tempfile.TemporaryDirectory() as scratch:  # one copy, written as the tile writes it: its size
        one = tile_json(1, Path(scratch) / "one.json", args.source).stat().st_size
    copies = max(1, args.mb * 1_000_000 // one)
    tile_json(copies, args.out, args.source)
    print(f"{args.out}: {copies} copies of {args.source.name}, {args.out.stat().st_size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
