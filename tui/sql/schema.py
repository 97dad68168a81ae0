"""The SQL tables, defined once: each table's columns with their types and meanings, and how a session fills it.

The big columns (every event's times, names, ids, nesting) are handed to DuckDB as the numpy arrays the
cache memory-maps, which it scans in place: nothing is parsed again and nothing is copied. Names,
categories and lanes are read from one-row lists (`names[name_id + 1]`) in the view, which costs a query
nothing when it does not ask for them and less than a join when it does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..model.analyses.results import Results
from ..model.query import launch_tables as L
from ..model.query import more_tables as M
from ..model.query import tables as R
from ..tables import breakdown as breakdown_table
from ..tables import copies as copies_table
from ..tables import kernels as kernels_table
from ..tables import op_kernels as op_kernels_table
from ..tables import ops as ops_table
from ..tables import queues as queues_table
from ..tables import summary as summary_table
from ..tables.base import docs, sql_types

if TYPE_CHECKING:
    import duckdb


class Session(Protocol):
    """What a table registers its data on: a session's connection, its trace and the ways to hand DuckDB data
    (session.py's Session is one; the protocol keeps the tables from importing the session that runs them)."""

    con: duckdb.DuckDBPyConnection
    results: Results

    @property
    def event_columns(self) -> R.EventColumns: ...

    @property
    def tracks(self) -> R.Relation: ...

    def register(self, name: str, columns: dict[str, Any]) -> None: ...

    def rows_table(self, name: str, rows: list, types: dict[str, str]) -> None: ...

    def view(self, name: str, source: str) -> None: ...


@dataclass(frozen=True)
class Col:
    """A column of a table: its name, SQL type, meaning, and how the view computes it from the registered data."""

    name: str
    type: str
    meaning: str
    expr: str = ""  # empty: the registered column of that name


@dataclass
class Table:
    """A table the user queries: what it holds, its columns, and how to register its data on a connection."""

    name: str
    doc: str
    columns: list[Col]
    register: Callable[[Session], None] = field(repr=False, default=lambda s: None)


def _cols(meanings: dict[str, str], types: dict[str, str], exprs: dict[str, str] | None = None) -> list[Col]:
    exprs = exprs or {}
    return [Col(k, types[k], meanings[k], exprs.get(k, "")) for k in meanings]


def _nullable(*names: str) -> dict[str, str]:
    return {n: f"NULLIF({n}, {R.NONE})" for n in names}


EVENT_TYPES = {
    "id": "BIGINT",
    "name": "VARCHAR",
    "cat": "VARCHAR",
    "kind": "VARCHAR",
    "ph": "VARCHAR",
    "pid": "BIGINT",
    "tid": "BIGINT",
    "lane": "VARCHAR",
    "rank": "BIGINT",
    "ts_us": "DOUBLE",
    "dur_us": "DOUBLE",
    "depth": "INTEGER",
    "parent_id": "BIGINT",
    "correlation": "BIGINT",
    "external_id": "BIGINT",
    "stream": "BIGINT",
    "device": "BIGINT",
    "step": "BIGINT",
}
# The tables that are a report's rows take their columns, meanings and types from the report's table definition
# (tui/tables), the one place a column is defined.
OPS = docs(ops_table.fields(False, True))
OPS_TYPES = sql_types(ops_table.fields(False, True))
KERNELS = docs(kernels_table.FIELDS)
KERNELS_TYPES = sql_types(kernels_table.FIELDS)


def _events_view(s: Session) -> None:
    cols, trace = s.event_columns, s.results.trace
    x = trace.x
    s.register(
        "_events",
        {
            "id": np.arange(trace.n, dtype=np.int64),
            "name_id": x.name,
            "cat_id": x.cat_str,
            "kind_id": x.cat,
            "track": x.track,
            "ts_ns": x.ts,
            "dur_ns": x.dur,
            "depth": cols.depth,
            "parent": cols.parent,
            "correlation": x.corr,
            "external_id": x.ext,
            "step": cols.step,
        },
    )
    tracks = s.tracks.columns
    lists = {
        "names": ("VARCHAR[]", list(trace.names)),
        "cats": ("VARCHAR[]", list(trace.cat_names)),
        "kinds": ("VARCHAR[]", list(R.KINDS)),
        **{f"{k}s": ("BIGINT[]", tracks[k].tolist()) for k in ("pid", "tid", "rank", "device", "stream")},
        "lanes": ("VARCHAR[]", tracks["lane"].tolist()),
    }
    s.con.execute(
        "CREATE TABLE _lookup AS SELECT "
        + ", ".join(f"${k + 1}::{t} AS {n}" for k, (n, (t, _)) in enumerate(lists.items())),
        [v for _, v in lists.values()],
    )
    s.view("events", "FROM _events, _lookup")


def _relation(build: Callable[[Session], R.Relation]) -> Callable[[Session], None]:
    def register(s: Session) -> None:
        rel = build(s)
        s.register(f"_{rel.name}", rel.columns)
        s.view(rel.name, f"FROM _{rel.name}")

    return register


def _rows(name: str, document: Callable[[Results], dict], types: dict[str, str]) -> Callable[[Session], None]:
    def register(s: Session) -> None:
        rows = document(s.results)["rows"]
        s.rows_table(name, [[r.get(k) for k in types] for r in rows], types)

    return register


def _ops_document(a: Results) -> dict:
    from ..reports.tables import ops_document

    return ops_document(a, None, 0, False)


SUMMARY = docs(summary_table.SQL_FIELDS)
SUMMARY_TYPES = sql_types(summary_table.SQL_FIELDS)


def _summary_document(a: Results) -> dict:
    doc = summary_table.fields(a.summary)
    return {"rows": [{f.key: f.value(doc) for f in summary_table.SQL_FIELDS}]}


def _kernels_document(a: Results) -> dict:
    from ..reports.tables import kernels_document

    return kernels_document(a, None, 0)


def _rows_of(name: str, rows: Callable[[Results], list[dict]], types: dict[str, str]) -> Callable[[Session], None]:
    """A table of a report's JSON rows (the same rows --format json prints), with these column types."""

    def register(s: Session) -> None:
        s.rows_table(name, [[r.get(k) for k in types] for r in rows(s.results)], types)

    return register


def _queues(a: Results) -> list[dict]:
    from ..reports.queues import queues_document

    return queues_document(a)["streams"]


def _op_kernels(a: Results) -> list[dict]:
    from ..reports.op_kernels import op_kernels_document

    return op_kernels_document(a)["rows"]


def _breakdown(by: str) -> Callable[[Results], list[dict]]:
    def rows(a: Results) -> list[dict]:
        from ..reports.breakdown import breakdown_document

        return breakdown_document(a, by=by)["rows"]

    return rows


def _copies(a: Results) -> list[dict]:
    return copies_table.fields(a.copies)


QUEUES = docs(queues_table.FIELDS)
QUEUES_TYPES = sql_types(queues_table.FIELDS)
TEMPORAL = breakdown_table.TEMPORAL_DOCS
STREAM_BREAKDOWN = breakdown_table.STREAM_DOCS
TEMPORAL_TYPES = breakdown_table.SQL_TYPES
OP_KERNELS = docs(op_kernels_table.FIELDS)
OP_KERNELS_TYPES = sql_types(op_kernels_table.FIELDS)
COPIES = docs(copies_table.FIELDS)
COPIES_TYPES = sql_types(copies_table.FIELDS)

TABLES: dict[str, Table] = {
    t.name: t
    for t in [
        Table(
            "events",
            "one row per event of the trace (ph X: ops, annotations, Python frames, runtime calls, kernels, copies)",
            _cols(
                R.EVENTS,
                EVENT_TYPES,
                {
                    "name": "names[name_id + 1]",
                    "cat": "cats[cat_id + 1]",
                    "kind": "kinds[kind_id + 1]",
                    "ph": "'X'",
                    "lane": "lanes[track + 1]",
                    "rank": "ranks[track + 1]",
                    "ts_us": "(ts_ns - {origin}) / 1000.0",
                    "dur_us": "dur_ns / 1000.0",
                    "parent_id": f"NULLIF(parent, {R.NONE})",
                }
                | {k: f"NULLIF({k}s[track + 1], {R.NONE})" for k in ("pid", "tid", "stream", "device")}
                | _nullable("correlation", "external_id", "step"),
            ),
            _events_view,
        ),
        Table(
            "ops",
            "the rows of tracetui ops (key_averages), all of them",
            _cols(OPS, OPS_TYPES),
            _rows("ops", _ops_document, OPS_TYPES),
        ),
        Table(
            "kernels",
            "the rows of tracetui kernels, all of them: one per kernel name (count: its calls; events has a row per call)",
            _cols(KERNELS, KERNELS_TYPES),
            _rows("kernels", _kernels_document, KERNELS_TYPES),
        ),
        Table(
            "summary",
            "one row: the verdict and the figures tracetui summary prints (JSON fields of the same names)",
            _cols(SUMMARY, SUMMARY_TYPES),
            _rows("summary", _summary_document, SUMMARY_TYPES),
        ),
        Table(
            "launches",
            "one row per device activity and the runtime call that launched it (join both ids to events.id)",
            _cols(
                R.LAUNCHES,
                {"launch_id": "BIGINT", "activity_id": "BIGINT", "latency_us": "DOUBLE"},
                {"latency_us": "CASE WHEN isnan(latency_us) THEN NULL ELSE latency_us END"},
            ),
            _relation(lambda s: R.launches(s.results)),
        ),
        Table(
            "steps",
            "one row per ProfilerStep#N (per rank in a job)",
            _cols(
                R.STEPS,
                dict.fromkeys(R.STEPS, "DOUBLE")
                | {"id": "BIGINT", "name": "VARCHAR", "number": "BIGINT", "rank": "BIGINT"},
            ),
            _relation(lambda s: R.steps(s.results)),
        ),
        Table(
            "memory",
            "one row per allocator sample (profile_memory=True), the samples tracetui memory reads",
            _cols(
                M.MEMORY,
                dict.fromkeys(M.MEMORY, "BIGINT") | {"ts_us": "DOUBLE", "device": "VARCHAR"},
                _nullable("total_reserved", "addr", "op_id"),
            ),
            _relation(lambda s: M.memory(s.results)),
        ),
        Table(
            "counters",
            "one row per counter sample (ph C: GPU utilization, SM efficiency, ...)",
            _cols(
                M.COUNTERS, {"id": "BIGINT", "name": "VARCHAR", "ts_us": "DOUBLE", "value": "DOUBLE", "lane": "VARCHAR"}
            ),
            _relation(lambda s: M.counters(s.results.trace)),
        ),
        Table(
            "flows",
            "one row per flow arrow: launch to device activity (ac2g), forward to backward (fwdbwd)",
            _cols(
                M.FLOWS,
                dict.fromkeys(M.FLOWS, "BIGINT") | {"kind": "VARCHAR", "from_ts_us": "DOUBLE", "to_ts_us": "DOUBLE"},
                _nullable("from_id", "to_id") | {"to_ts_us": "CASE WHEN isnan(to_ts_us) THEN NULL ELSE to_ts_us END"},
            ),
            _relation(lambda s: M.flows(s.results)),
        ),
        Table(
            "launch_stats",
            "one row per launch (a graph launch once): its call's and its activity's duration, both delays, HTA's "
            "outliers",
            _cols(
                L.LAUNCH_STATS,
                dict.fromkeys(L.LAUNCH_STATS, "DOUBLE")
                | {"launch_id": "BIGINT", "activity_id": "BIGINT", "stream": "VARCHAR"}
                | {"slow_call": "BOOLEAN", "late_start": "BOOLEAN", "graph": "BOOLEAN"},
            ),
            _relation(lambda s: L.launch_stats_relation(s.results)),
        ),
        Table(
            "queues",
            "one row per stream with launched work: its launch queue and its launches' delays (kernels --queues)",
            _cols(QUEUES, QUEUES_TYPES),
            _rows_of("queues", _queues, QUEUES_TYPES),
        ),
        Table(
            "breakdown",
            "one row per device: the whole trace's temporal breakdown (tracetui breakdown)",
            _cols(TEMPORAL, TEMPORAL_TYPES),
            _rows_of("breakdown", _breakdown("rank"), {k: TEMPORAL_TYPES[k] for k in TEMPORAL}),
        ),
        Table(
            "stream_breakdown",
            "one row per stream: its temporal breakdown in its device's window and its idle time by cause",
            _cols(STREAM_BREAKDOWN, TEMPORAL_TYPES),
            _rows_of("stream_breakdown", _breakdown("stream"), {k: TEMPORAL_TYPES[k] for k in STREAM_BREAKDOWN}),
        ),
        Table(
            "op_kernels",
            "one row per op and the kernel sequence it launched (ops --kernels)",
            _cols(OP_KERNELS, OP_KERNELS_TYPES),
            _rows_of("op_kernels", _op_kernels, OP_KERNELS_TYPES),
        ),
        Table(
            "copies",
            "one row per copy direction (and the sets): count, time, bytes, bandwidth (summary's copies)",
            _cols(COPIES, COPIES_TYPES),
            _rows_of("copies", _copies, COPIES_TYPES),
        ),
    ]
}


def schema_document() -> dict:
    """Every table, what it holds, and its columns with their types and meanings."""
    return {
        "tables": [
            {
                "name": t.name,
                "doc": t.doc,
                "columns": [{"name": c.name, "type": c.type, "meaning": c.meaning} for c in t.columns],
            }
            for t in TABLES.values()
        ]
    }


def schema_text() -> str:
    """The schema as text: each table, then its columns, types and meanings lined up."""
    out = []
    for t in TABLES.values():
        width = max(len(c.name) for c in t.columns)
        kinds = max(len(c.type) for c in t.columns)
        lines = [f"{c.name:<{width}}  {c.type:<{kinds}}  {c.meaning}" for c in t.columns]
        out.append(f"{t.name}: {t.doc}\n  " + "\n  ".join(lines))
    return "\n\n".join(out) + "\n\nIds join across tables: events.id = parent_id = launches.launch_id = ... = steps.id."
