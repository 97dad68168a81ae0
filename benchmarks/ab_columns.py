"""The column building alone (`Builder.add`), this tree against a base revision, in one process.

The base's `tui` package is exported (`git archive REV tui`) into a scratch folder as the package `tuibase` (the
model imports itself relatively, so both load side by side). Each tree decodes the trace's chunks once; then, in
rounds, each chunk's events are added to a fresh Builder of each tree in turn (the order swapped chunk by chunk),
timing CPU seconds per tree, so a machine that others load moves both sides alike. It prints the best and median
round of each, the ratio, and whether the two trees built the same columns, names, tracks, shapes and reports.
Run: python benchmarks/ab_columns.py TRACE [--base REV] [--rounds 7]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import import_module
from pathlib import Path
from types import ModuleType

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def export(rev: str, into: Path) -> None:
    """The tui package of rev, as into/tuibase."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "tui"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    (into / "tui").rename(into / "tuibase")


def chunks_of(trace: Path) -> list[tuple[int, bytes]]:
    """Each chunk's start and its text as the decoder reads it ('[' + events + ']')."""
    from tui.model.load.locate import locate_events, open_source
    from tui.model.load.source import ChunkReader, split_chunks

    src = open_source(trace, None)
    locate_events(src)
    with ChunkReader(buf=src.buf) as read:
        return [(start, bytes(read(start, end))) for start, end in split_chunks(src)]


def digest(parts: ModuleType, builder, rows: list) -> str:
    part = parts._part(builder, rows, parts.LoadReport())
    h = hashlib.sha1()
    for table in (part.x, part.inst, part.flow):
        for key in sorted(type(table).dtypes()):
            h.update(key.encode())
            h.update(np.ascontiguousarray(getattr(table, key)).tobytes())
    h.update(repr((part.names, part.cat_names, part.shapes, part.tracks, part.meta, part.report)).encode())
    return h.hexdigest()


def one_round(sides: dict, chunks: list[tuple[int, bytes]], swap: int) -> tuple[dict[str, float], dict[str, str]]:
    built = {name: (mods["build"].Builder(), []) for name, mods in sides.items()}
    cpu = dict.fromkeys(sides, 0.0)
    for k, (_, data) in enumerate(chunks):
        for name in list(sides)[:: 1 if (k + swap) % 2 else -1]:
            builder, rows = built[name]
            decoded = sides[name]["decoded"][k]
            ids, pos = sides[name]["parts"]._chunk_ids(decoded.spans, len(decoded.events), rows)
            t = time.process_time()
            builder.add(decoded.events, ids, pos, lambda data=data: data[1:-1])
            cpu[name] += time.process_time() - t
    return cpu, {name: digest(sides[name]["parts"], *built[name]) for name in sides}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("--base", default="HEAD", help="the revision to compare with (default: HEAD)")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory(prefix="ab-columns-") as tmp:
        export(args.base, Path(tmp))
        sys.path.insert(0, tmp)
        chunks = chunks_of(args.trace)
        sides: dict[str, dict] = {}
        for name, package in (("base", "tuibase"), ("new", "tui")):
            mods = {m: import_module(f"{package}.model.load.{m}") for m in ("build", "parts", "decode")}
            mods["decoded"] = [mods["decode"].decode_chunk(data, start, False) for start, data in chunks]
            sides[name] = mods
        runs = [one_round(sides, chunks, k) for k in range(args.rounds)]
    cpu = {name: [r[0][name] for r in runs] for name in sides}
    same = all(len(set(r[1].values())) == 1 for r in runs)
    events = sum(len(d.events) for d in sides["new"]["decoded"])
    print(f"{args.trace.name}: {len(chunks)} chunks, {events} events; Builder.add CPU s, {args.rounds} rounds")
    for name, values in cpu.items():
        print(f"  {name:4}  best {min(values):.3f}  median {statistics.median(values):.3f}")
    print(
        f"  new / base: best {min(cpu['new']) / min(cpu['base']):.3f}, per-round median "
        f"{statistics.median(n / b for n, b in zip(cpu['new'], cpu['base'], strict=True)):.3f}; same columns: {same}"
    )


if __name__ == "__main__":
    main()
