"""A DuckDB session on one trace's tables (schema.py), each registered when a query first names it, so a query pays
only for what it reads.

A locked session (the MCP server's, and `tracetui sql`'s unless asked for a writable one) cannot change or hang
anything: DuckDB's external access is off, nothing spills to a temporary folder (temp_directory empty), memory
is limited (memory_limit) and the settings are locked, so a query reads and writes no file and cannot turn that
back on; only statements that read run (SELECT, EXPLAIN, PRAGMA: no DROP, CREATE, COPY ... TO, ATTACH, SET),
each in a transaction rolled back after it (EXPLAIN ANALYZE of a statement that writes undoes it too), so
every query sees the tables as they were made. Any session's query may have a time limit (timeout_s): past
it the query is stopped (DuckDB's interrupt()) and answered as a timeout.

A session serves many threads. Its tables are built once, under a lock, on the session's own connection
(`con`), which runs no query. A query runs on a cursor (a connection to the same database) that no other query
holds meanwhile: one left idle by an earlier query, else a new one. A DuckDB connection runs one query at a
time and refuses a second rather than wait ("connection is busy"), so no two queries ever share one. The numpy
columns are registered again on each cursor (DuckDB keeps such registrations per connection, and registering
copies nothing); the tables, views and locked settings are the database's, shared by all. Queries made one
after another reuse one cursor, so a temporary table one makes is there for the next.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..model import settings
from ..model.analyses.results import Results
from ..model.errors import QueryError
from ..model.query import tables as R
from .schema import TABLES

if TYPE_CHECKING:
    import duckdb

READS = frozenset({"SELECT", "EXPLAIN", "PRAGMA"})  # the statements a locked session runs
MEMORY_SHARE = 0.25  # of the memory available, for a locked session's DuckDB (TRACETUI_SQL_MEMORY_GB)
ALL_TABLES = re.compile(r"\b(information_schema|duckdb_\w+|show|describe|summarize|pragma)\b", re.IGNORECASE)


@dataclass
class Answer:
    """A query's result: column names and rows of plain Python values."""

    columns: list[str]
    rows: list[tuple]


def timeout_setting() -> float | None:
    """The time limit of a query, in seconds: TRACETUI_SQL_TIMEOUT_S (0: none, None here), else 30
    (settings.sql_timeout_s)."""
    return settings.sql_timeout_s()


def memory_setting() -> int:
    """A locked session's memory limit in bytes: TRACETUI_SQL_MEMORY_GB, else a share of the memory available."""
    gb = settings.sql_memory_gb()
    if gb is None:
        from ..model.load.guard import memory_available

        return int(MEMORY_SHARE * memory_available())
    return int(gb * 1e9)


class Session:
    """A DuckDB database over one trace's tables (locked: read-only, no file access, bounded memory, settings
    fixed), safe for threads; timeout_s: each query's time limit (None: none)."""

    def __init__(self, results: Results, locked: bool = False, timeout_s: float | None = None) -> None:
        import duckdb

        self.results: Results = results
        self.locked, self.timeout_s = locked, timeout_s
        config: dict[str, str | bool | int | float | list[str]] = {}
        if locked:
            config = {
                "enable_external_access": False,
                "autoinstall_known_extensions": False,
                "autoload_known_extensions": False,
                "temp_directory": "",  # nothing spills to disk (DuckDB lets COPY write there even without access)
                "memory_limit": f"{max(memory_setting() // 10**6, 64)}MB",  # (DuckDB's MB: 10**6 bytes)
            }
        self.con: duckdb.DuckDBPyConnection = duckdb.connect(":memory:", config=config)
        if locked:
            self.con.execute("SET lock_configuration = true")
        self.built: set[str] = set()
        self._raw: dict[str, dict[str, Any]] = {}  # what register() handed DuckDB: every cursor registers it too
        self._building = threading.Lock()  # held while con builds tables
        self._idle: list[tuple[duckdb.DuckDBPyConnection, set[str]]] = []  # cursors no query holds, what each has
        self._pool_lock = threading.Lock()
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
        self._raw[name] = columns

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
        """Register these tables if not done yet (once, whichever threads ask; queries meanwhile go on)."""
        if self.built.issuperset(names):
            return
        with self._building:
            for name in names:
                if name not in self.built:
                    TABLES[name].register(self)
                    self.built.add(name)

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A new connection to the session's database with every table built so far: one for each thread."""
        return self._registered(self.con.cursor(), set())[0]

    def _registered(self, cur: duckdb.DuckDBPyConnection, has: set[str]) -> tuple[duckdb.DuckDBPyConnection, set[str]]:
        """The cursor with every registered column set it lacks (has: what it holds, updated)."""
        for name, columns in list(self._raw.items()):
            if name not in has:
                cur.register(name, columns)
                has.add(name)
        return cur, has

    @contextmanager
    def _connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor for this query alone: the one the last query left (so one thread keeps one), else a new one.
        One a query was stopped on is closed, not kept."""
        with self._pool_lock:
            taken = self._idle.pop() if self._idle else None
        cur, has = self._registered(*(taken or (self.con.cursor(), set())))
        stopped = threading.Event()
        timer = None

        def stop() -> None:
            stopped.set()
            cur.interrupt()

        if self.timeout_s is not None:
            timer = threading.Timer(self.timeout_s, stop)
            timer.daemon = True
            timer.start()
        try:
            yield cur
        except Exception as exc:
            if stopped.is_set():
                raise QueryError(
                    f"the query was stopped after {self.timeout_s:g} s, its time limit "
                    "(TRACETUI_SQL_TIMEOUT_S; tracetui sql --timeout)"
                ) from exc
            raise
        finally:
            if timer is not None:
                timer.cancel()
            if stopped.is_set():
                cur.close()
            else:
                with self._pool_lock:
                    self._idle.append((cur, has))

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
                raise QueryError(_unknown_name(exc)) from None
        self.ensure(list(TABLES))  # a name the query hides (or misspells): every table, then once more
        try:
            return self._run(sql, max_rows)
        except duckdb.CatalogException as exc:
            raise QueryError(_unknown_name(exc)) from None

    def _run(self, sql: str, max_rows: int | None) -> Answer:
        import duckdb

        if self.locked:
            self._reads_only(sql)
        try:
            with self._connection() as con:
                if self.locked:
                    con.begin()  # rolled back after: nothing a query does stays
                try:
                    cur = con.execute(sql)
                    if cur.description is None:
                        return Answer([], [])
                    rows = cur.fetchall() if max_rows is None else cur.fetchmany(max_rows)
                    columns = [d[0] for d in cur.description]
                finally:
                    if self.locked:
                        _roll_back(con)
        except duckdb.CatalogException:
            raise
        except duckdb.Error as exc:
            raise QueryError(one_line(exc)) from None
        return Answer(columns, [tuple(plain(v) for v in r) for r in rows])

    def _reads_only(self, sql: str) -> None:
        """QueryError unless every statement of the text only reads (a locked session runs nothing else)."""
        import duckdb

        try:
            kinds = [s.type.name for s in self.con.extract_statements(sql)]
        except duckdb.Error as exc:
            raise QueryError(one_line(exc)) from None
        refused = sorted({k for k in kinds if k not in READS})
        if refused:
            raise QueryError(
                f"this SQL session is read-only: only SELECT, EXPLAIN and PRAGMA statements run, not "
                f"{', '.join(refused)} (tracetui sql --writable runs any)"
            )


def _roll_back(con: duckdb.DuckDBPyConnection) -> None:
    """End the query's transaction, undoing it (one the query itself ended, or an interrupted one, is gone)."""
    import duckdb

    try:
        con.rollback()
    except duckdb.Error:
        pass


def _unknown_name(exc: Exception) -> str:
    """A name DuckDB does not know, in one line, with the trace's tables (DuckDB's guess may be a catalog table)."""
    line = one_line(exc)
    return f"{line} (this trace's tables: {', '.join(TABLES)})" if "does not exist" in line else line


SUGGESTED = re.compile(r'Did you mean "(?P<name>[^"]+)"\?')


def one_line(exc: Exception) -> str:
    """DuckDB's message in one line: its first line and its suggestion, less the LINE/caret context it adds. A
    suggestion never names one of the tables behind ours (`_counters`): the table of ours it stands for, or none."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    hint = next((line for line in lines[1:] if line.startswith(("Did you mean", "Candidate bindings"))), "")
    first = lines[0]
    inline = SUGGESTED.search(first)
    if inline:  # DuckDB often puts it on the first line: `... does not exist! Did you mean "x"?`
        first, hint = first[: inline.start()].rstrip(), inline.group(0)
    return " ".join([first, _public(hint)]).strip()


def _public(hint: str) -> str:
    """The hint, with an internal table's name (a leading `_`) put as the table of ours over it, or left out."""
    m = SUGGESTED.fullmatch(hint)
    if not m or not m.group("name").startswith("_"):
        return hint
    ours = m.group("name").lstrip("_")
    return f'Did you mean "{ours}"?' if ours in TABLES else ""


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
