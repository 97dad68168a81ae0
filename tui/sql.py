"""SQL over a trace: DuckDB scanning the cached numpy columns, the tables and columns documented once.

The big columns (every event's times, names, ids, nesting) are handed to DuckDB as the numpy arrays the
cache memory-maps, which it scans in place: nothing is parsed again and nothing is copied. Names,
categories and lanes are small lookup tables joined in a view. The tables (events, ops, kernels,
launches, steps, memory, counters, flows) are registered when a query first names one, so a query
pays only for what it reads. A locked session (the MCP server's) runs with DuckDB's external access
off and its settings locked: a query reads and writes no file, and cannot turn that back on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .model.analyses.results import Results
from .model.errors import QueryError
from .model.query import more_tables as M
from .model.query import tables as R

if TYPE_CHECKING:
    import duckdb


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
    needs: tuple[str, ...] = ()  # tables it is built on


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
OPS = {
    "name": "the op (aten::mm, a user annotation, a Python frame, ...), as torch's key_averages() names it",
    "count": "# of Calls",
    "self_cpu_us": "Self CPU: CPU time in the op less the ops below it",
    "cpu_total_us": "CPU total: CPU time in the op and below",
    "self_device_us": "Self CUDA: device time of the kernels it launched itself",
    "device_total_us": "CUDA total: device time launched from it and below",
    "kind": "host, or device for rows of device events (kernels that name no op)",
    "cpu_memory_bytes": "CPU Mem (with profile_memory; else NULL)",
    "self_cpu_memory_bytes": "Self CPU Mem (with profile_memory; else NULL)",
    "device_memory_bytes": "CUDA Mem (with profile_memory; else NULL)",
    "self_device_memory_bytes": "Self CUDA Mem (with profile_memory; else NULL)",
}
OPS_TYPES = dict.fromkeys(OPS, "DOUBLE") | {"name": "VARCHAR", "kind": "VARCHAR", "count": "BIGINT"}
OPS_TYPES |= {k: "BIGINT" for k in OPS if k.endswith("_bytes")}
KERNELS = {
    "name": "the kernel's (or memcpy's, memset's) name",
    "kind": "kernel, memcpy or memset",
    "role": "what it does, read from its name (GEMM, attention, collective, Triton pointwise, ...)",
    "count": "how many ran",
    "total_us": "their total time",
    "avg_us": "average",
    "min_us": "shortest",
    "max_us": "longest",
    "pct_gpu": "% of all device time",
    "launch_latency_us": "mean time from the launch call's start to the kernel's start (NULL: none linked)",
}
KERNELS_TYPES = dict.fromkeys(KERNELS, "DOUBLE") | {"name": "VARCHAR", "kind": "VARCHAR", "role": "VARCHAR"}
KERNELS_TYPES |= {"count": "BIGINT"}


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
    s.small("_names", {"name_id": np.arange(len(trace.names), dtype=np.int32), "name": trace.names}, "INTEGER")
    s.small("_cats", {"cat_id": np.arange(len(trace.cat_names), dtype=np.int16), "cat": trace.cat_names}, "SMALLINT")
    s.small("_kinds", {"kind_id": np.arange(len(R.KINDS), dtype=np.int8), "kind": R.KINDS}, "TINYINT")
    s.register("_tracks", s.tracks.columns)
    s.view(
        "events",
        "FROM _events e JOIN _names USING (name_id) JOIN _cats USING (cat_id) JOIN _kinds USING (kind_id) "
        "JOIN _tracks t USING (track)",
    )


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
    from .reports.tables import ops_document

    return ops_document(a, None, 0, False)


def _kernels_document(a: Results) -> dict:
    from .reports.tables import kernels_document

    return kernels_document(a, None, 0)


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
                    "ph": "'X'",
                    "ts_us": "(ts_ns - {origin}) / 1000.0",
                    "dur_us": "dur_ns / 1000.0",
                    "parent_id": f"NULLIF(parent, {R.NONE})",
                }
                | _nullable("pid", "tid", "stream", "device", "correlation", "external_id", "step"),
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
            "the rows of tracetui kernels, all of them",
            _cols(KERNELS, KERNELS_TYPES),
            _rows("kernels", _kernels_document, KERNELS_TYPES),
        ),
        Table(
            "launches",
            "one row per device activity and the runtime call that launched it (join both ids to events.id)",
            _cols(R.LAUNCHES, {"launch_id": "BIGINT", "activity_id": "BIGINT", "latency_us": "DOUBLE"}),
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
    ]
}
ALL_TABLES = re.compile(r"\b(information_schema|duckdb_\w+|show|describe|summarize|pragma)\b", re.IGNORECASE)


@dataclass
class Answer:
    """A query's result: column names and rows of plain Python values."""

    columns: list[str]
    rows: list[tuple]


class Session:
    """One DuckDB connection over one trace's tables (locked: no file access, settings fixed)."""

    def __init__(self, results: Results, locked: bool = False) -> None:
        import duckdb

        self.results: Results = results
        config: dict[str, str | bool | int | float | list[str]] = {}
        if locked:
            config = {"enable_external_access": False, "autoinstall_known_extensions": False}
        self.con: duckdb.DuckDBPyConnection = duckdb.connect(":memory:", config=config)
        if locked:
            self.con.execute("SET lock_configuration = true")
        self.built: set[str] = set()
        self._event_columns: R.EventColumns | None = None
        self._tracks: R.Relation | None = None

    @property
    def event_columns(self) -> R.EventColumns:
        if self._event_columns is None:
            self._event_columns = R.event_columns(self.results)
        return self._event_columns

    @property
    def tracks(self) -> R.Relation:
        if self._tracks is None:
            self._tracks = R.tracks(self.results.trace)
        return self._tracks

    def register(self, name: str, columns: dict[str, Any]) -> None:
        """Hand numpy columns to DuckDB to scan in place (not copied)."""
        self.con.register(name, columns)

    def small(self, name: str, columns: dict[str, Any], key_type: str) -> None:
        """A small lookup table (id, text), copied into DuckDB once."""
        key, text = columns
        self.rows_table(
            name, list(zip(columns[key].tolist(), columns[text], strict=True)), {key: key_type, text: "VARCHAR"}
        )

    def rows_table(self, name: str, rows: list, types: dict[str, str]) -> None:
        """A table of Python rows (None as NULL), with these column types."""
        body = ", ".join(f'"{k}" {t}' for k, t in types.items())
        self.con.execute(f'CREATE TABLE "{name}" ({body})')
        if rows:
            lists = [list(col) for col in zip(*rows, strict=True)]
            unnest = ", ".join(f"unnest(${k + 1})" for k in range(len(types)))
            self.con.execute(f'INSERT INTO "{name}" SELECT * FROM (SELECT {unnest})', lists)

    def view(self, name: str, source: str) -> None:
        """The user's table: its columns computed from the registered data, in their documented order."""
        origin = self.results.trace.origin
        parts = [
            f'CAST({(c.expr or c.name).replace("{origin}", str(origin))} AS {c.type}) AS "{c.name}"'
            for c in TABLES[name].columns
        ]
        self.con.execute(f'CREATE VIEW "{name}" AS SELECT {", ".join(parts)} {source}')

    def ensure(self, names: list[str]) -> None:
        """Register these tables (and those they stand on) if not done yet."""
        for name in names:
            if name not in self.built:
                self.ensure(list(TABLES[name].needs))
                TABLES[name].register(self)
                self.built.add(name)

    def tables_named(self, query: str) -> list[str]:
        """The tables a query may read: those it names (every one when it asks the catalog)."""
        if ALL_TABLES.search(query):
            return list(TABLES)
        return [t for t in TABLES if re.search(rf"\b{t}\b", query, re.IGNORECASE)]

    def query(self, sql: str, max_rows: int | None = None) -> Answer:
        """Run a query; QueryError (one line) when DuckDB refuses it. max_rows: fetch no more than this."""
        import duckdb

        self.ensure(self.tables_named(sql))
        try:
            return self._run(sql, max_rows)
        except duckdb.CatalogException as exc:
            if self.built >= set(TABLES):
                raise QueryError(one_line(exc)) from None
        self.ensure(list(TABLES))  # a name the query hides (or misspells): every table, then once more
        try:
            return self._run(sql, max_rows)
        except duckdb.CatalogException as exc:
            raise QueryError(one_line(exc)) from None

    def _run(self, sql: str, max_rows: int | None) -> Answer:
        import duckdb

        try:
            cur = self.con.execute(sql)
            if cur.description is None:
                return Answer([], [])
            rows = cur.fetchall() if max_rows is None else cur.fetchmany(max_rows)
        except duckdb.CatalogException:
            raise
        except duckdb.Error as exc:
            raise QueryError(one_line(exc)) from None
        return Answer([d[0] for d in cur.description], [tuple(plain(v) for v in r) for r in rows])


def one_line(exc: Exception) -> str:
    """DuckDB's message in one line: its first line and its suggestion, less the LINE/caret context it adds."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    hint = next((line for line in lines[1:] if line.startswith(("Did you mean", "Candidate bindings"))), "")
    return " ".join([lines[0], hint]).strip() if lines else type(exc).__name__


def plain(value: Any) -> Any:
    """A DuckDB value as JSON-ready Python: decimals as floats, other odd types as text."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    from decimal import Decimal

    return float(value) if isinstance(value, Decimal) else str(value)


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


def to_json_text(answer: Answer) -> str:
    return json.dumps(
        {"columns": answer.columns, "rows": [dict(zip(answer.columns, r, strict=True)) for r in answer.rows]}, indent=2
    )
