"""Make big traces by tiling a real one in time (shared by the benchmarks)."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from tui.model.columns import Events
from tui.model.trace import Trace

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "sample_traces" / "a100-train-control.json.gz"


def tile_json(copies: int, out: Path, source: Path = SOURCE) -> Path:
    """Write a JSON trace holding `copies` time-shifted copies of source's events."""
    doc = json.loads(gzip.decompress(source.read_bytes()))
    events = [e for e in doc["traceEvents"] if e.get("ph") != "M"]
    meta = [e for e in doc["traceEvents"] if e.get("ph") == "M"]
    ts = [e["ts"] for e in events if isinstance(e.get("ts"), (int, float))]
    span = max(ts) - min(ts) + 1000
    with open(out, "w") as f:
        f.write('{"schemaVersion": 1, "traceEvents": [\n')
        for k in range(copies):
            shift = k * span
            for e in events:
                e2 = dict(e)
                if isinstance(e2.get("ts"), (int, float)):
                    e2["ts"] = e2["ts"] + shift
                for key in ("id",):
                    if isinstance(e2.get(key), int):
                        e2[key] += k * 10_000_000
                f.write(json.dumps(e2))
                f.write(",\n")
        f.write(",\n".join(json.dumps(m) for m in meta))
        f.write("\n]}\n")
    return out


def tile_columns(trace: Trace, copies: int) -> Trace:
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
    return replace(trace, x=Events.from_columns(cols))
