"""Native JSON readers against tracetui's decode, on the events of one trace: CPU seconds of each, in one process.

Each reader is asked for the fields the columns need (schema.py is the spec: ph, cat, name, pid, tid, ts, dur,
id, the link, shape, size and memory args, a metadata event's names). The line readers need the events as
newline-delimited JSON: Kineto writes one event per line, but each ends in a comma, so the text is rewritten
first (that pass is timed on its own line). A reader that cannot take the trace says why (a pid that is a number
in one event and a string in another; arg keys told apart only by case, "Bytes" and "bytes"). CPU seconds (user +
system of this process, its threads included) are steadier than wall time on a shared machine; each is the best
of --repeat. Optional readers (polars, pysimdjson, pyarrow, duckdb) are skipped when not installed.
Run: python benchmarks/bench_decoders.py TRACE.json [--repeat 3] [--threads N]
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tui.model.load.decode import _EVENTS  # noqa: E402
from tui.model.load.locate import open_source  # noqa: E402
from tui.model.load.parts import decode_range  # noqa: E402
from tui.model.load.source import ChunkReader, split_chunks  # noqa: E402

INTS = ("External id", "correlation", "Python id", "Python parent id", "Bytes", "Device Type", "Device Id")
INTS += ("Total Allocated", "Total Reserved", "Addr")


def cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def measure(label: str, fn: Callable[[], object], repeat: int) -> None:
    best: tuple[float, float] | None = None
    for _ in range(repeat):
        c, t = cpu(), time.perf_counter()
        try:
            fn()
        except Exception as exc:  # a reader that cannot take this trace: why, in its own words
            print(f"  {label:52s} cannot: {str(exc).splitlines()[0][:110]}", flush=True)
            return
        spent = (cpu() - c, time.perf_counter() - t)
        best = spent if best is None or spent[0] < best[0] else best
    assert best is not None
    print(f"  {label:52s} cpu {best[0]:6.3f} s  wall {best[1]:6.3f} s", flush=True)


def tracetui_today(path: Path, repeat: int) -> None:
    src = open_source(path, None)
    chunks = split_chunks(src)
    with ChunkReader(path) as read:
        measure("tracetui: msgspec typed decode + columns", lambda: decode_range(read, chunks, -1), repeat)
        texts = [bytes(read(s, e)) for s, e in chunks]
    measure("  of which the msgspec typed decode", lambda: [_EVENTS.decode(t) for t in texts], repeat)


def duckdb_reader(ndjson: Path, threads: int, repeat: int) -> None:
    import duckdb

    args = ", ".join(f'"{k}" BIGINT' for k in INTS if k != "Bytes")  # "Bytes" and "bytes": one key to DuckDB
    columns = (
        "{ph:'VARCHAR',cat:'VARCHAR',name:'VARCHAR',pid:'VARCHAR',tid:'VARCHAR',ts:'DOUBLE',dur:'DOUBLE',id:'VARCHAR',"
        f"args:'STRUCT({args}, \"Input Dims\" JSON, bytes JSON, name VARCHAR, labels VARCHAR, sort_index BIGINT)'}}"
    )
    query = f"select * from read_json('{ndjson}', format='newline_delimited', columns={columns})"
    for n in sorted({1, threads}):
        con = duckdb.connect()
        con.execute(f"set threads={n}")
        measure(f"duckdb read_json, {n} thread(s), to Arrow", lambda con=con: con.sql(query).to_arrow_table(), repeat)
    measure(
        "duckdb, then strings dictionary-encoded (Arrow)", lambda: _encoded(con.sql(query).to_arrow_table()), repeat
    )


def _encoded(table) -> list:
    """What a columnar path does next, at least: its string columns as ids (interned by Arrow, in C++)."""
    import pyarrow.compute as pc

    names = ("ph", "cat", "name", "pid", "tid")
    return [pc.dictionary_encode(table.column(k)) for k in names] + [
        pc.dictionary_encode(table["args"].combine_chunks().field("Input Dims"))
    ]


def pyarrow_reader(text: bytes, threads: int, repeat: int) -> None:
    import pyarrow as pa
    import pyarrow.json as pj

    STR, INT, FLT = pa.string(), pa.int64(), pa.float64()
    args = pa.struct([(k, INT) for k in INTS] + [("Input Dims", STR), ("name", STR)])
    full = pa.schema(
        [
            ("ph", STR),
            ("cat", STR),
            ("name", STR),
            ("pid", INT),
            ("tid", INT),
            ("ts", FLT),
            ("dur", FLT),
            ("args", args),
        ]
    )
    part = pa.schema([("ph", STR), ("cat", STR), ("name", STR), ("ts", FLT), ("dur", FLT), ("id", INT)])
    for label, schema in (("all fields", full), ("no pid, tid, args", part)):
        for use in sorted({False, threads > 1}):

            def read(schema=schema, use=use):
                options = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
                return pj.read_json(io.BytesIO(text), pj.ReadOptions(use_threads=use, block_size=4 << 20), options)

            measure(f"pyarrow read_json, {label}, threads={use}", read, repeat)


def polars_reader(text: bytes, repeat: int) -> None:
    import polars as pl

    STR, INT = pl.String, pl.Int64
    args = pl.Struct({**dict.fromkeys(INTS, INT), "Input Dims": STR, "name": STR})
    schema = {
        "ph": STR,
        "cat": STR,
        "name": STR,
        "pid": STR,
        "tid": STR,
        "ts": pl.Float64,
        "dur": pl.Float64,
        "id": STR,
    }
    measure("polars read_ndjson", lambda: pl.read_ndjson(io.BytesIO(text), schema={**schema, "args": args}), repeat)


def simdjson_reader(text: bytes, repeat: int) -> None:
    import simdjson

    parser = simdjson.Parser()

    def three_fields() -> int:
        for line in text.split(b"\n"):
            doc = parser.parse(line)
            doc["ph"], doc["ts"], doc["name"]  # noqa: B018
            del doc  # the parser is reused only once its last document is gone
        return 0

    measure("pysimdjson per line, 3 fields only", three_fields, repeat)


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("trace", type=Path)
    opts.add_argument("--repeat", type=int, default=3)
    opts.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = opts.parse_args()
    src = open_source(args.trace, None)
    events = bytes(src.buf[src.start : src.end])
    print(f"{args.trace.name}: {len(events) / 1e6:.0f} MB of events, {os.cpu_count()} cores")
    tracetui_today(args.trace, args.repeat)
    measure("events to NDJSON (bytes.replace)", lambda: events.replace(b"},\n{", b"}\n{"), args.repeat)
    text = events.replace(b"},\n{", b"}\n{").strip().rstrip(b",")
    with tempfile.TemporaryDirectory() as scratch:
        ndjson = Path(scratch) / "events.ndjson"
        ndjson.write_bytes(text)
        for name, run in (
            ("duckdb", lambda: duckdb_reader(ndjson, args.threads, args.repeat)),
            ("pyarrow", lambda: pyarrow_reader(text, args.threads, args.repeat)),
            ("polars", lambda: polars_reader(text, args.repeat)),
            ("simdjson", lambda: simdjson_reader(text, 1)),
        ):
            try:
                run()
            except ImportError:
                print(f"  {name}: not installed")


if __name__ == "__main__":
    main()
