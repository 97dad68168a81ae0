"""`tracetui sql TRACE [QUERY]`: one query, a script on stdin, or an interactive prompt with history."""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..model.errors import QueryError
from .options import TRACE_HELP, BadUsage, Command, format_opt, load, trace_opts, trace_path

if TYPE_CHECKING:
    from ..sql import Answer, Session

EPILOG = """\
prints: the query's rows (--format text or md: at most --max-rows, csv and json: all); without QUERY, an
interactive prompt (a statement runs when it ends with ; or at an empty line), or, piped, the lines on stdin as the
prompt would take them: each statement's answer as it runs, dot commands (.mode csv) included; the first error
stops it with its line number (exit 2). --schema lists every table and column with its meaning (no TRACE needed).
Event ids are the same as in every other output.
defaults: --format text, --max-rows 1000, the on-disk cache; a read-only session (SELECT, EXPLAIN, PRAGMA; no file
read or written) and a 30 s limit per query.
examples: tracetui sql trace.json "SELECT name, count(*) AS n, sum(dur_us) FROM events WHERE kind = 'kernel'
          GROUP BY name ORDER BY 3 DESC LIMIT 10"
          tracetui sql --writable trace.json "COPY events TO 'events.parquet'"   (any file DuckDB writes)
          printf '.mode csv\\nSELECT * FROM steps;\\n' | tracetui sql trace.json"""
HELP = """\
.tables          the tables
.schema [TABLE]  their columns and what each means
.mode FORMAT     text, csv, json or md
.help            this
.quit            leave (Ctrl-D too)
A statement runs when it ends with ; (an empty line runs what was typed so far)."""
PROMPT, MORE = "sql> ", "...> "
MODES = ("text", "csv", "json", "md")


def add_sql(sub, command: str | None) -> argparse.ArgumentParser:
    """Register `tracetui sql`."""
    p = sub.add_parser(
        "sql",
        help="query the trace with SQL (DuckDB): events, ops, kernels, launches, steps, memory, counters, flows",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("trace", metavar="TRACE", nargs="?", help=TRACE_HELP + " (not needed with --schema)")
    p.add_argument("query", metavar="QUERY", nargs="?", help="the query (none: a prompt, or the statements on stdin)")
    p.add_argument("--schema", action="store_true", help="list every table and column with what it means")
    format_opt(p, MODES)
    p.add_argument("--max-rows", type=_rows, default=1000, metavar="N", help="rows shown as text or md (0: all)")
    p.add_argument(
        "--writable",
        action="store_true",
        help="a session whose statements may change the tables and read and write files (COPY ... TO, CREATE)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="stop a query after S seconds (default TRACETUI_SQL_TIMEOUT_S, else 30; 0: never)",
    )
    trace_opts(p)
    return p


def cmd_sql(args: argparse.Namespace) -> int:
    if args.schema:
        from ..reports.formats import terminal_width
        from ..sql import schema_document, schema_text

        text = json.dumps(schema_document(), indent=2) if args.format == "json" else schema_text()
        print(text if args.format == "json" else fit_schema(text, terminal_width()))
        return 0
    if args.trace is None:
        raise BadUsage("give a TRACE to query (only --schema needs none)")
    trace_path(args.trace)  # a missing trace is said before anything else (demo:NAME is its sample's)
    from ..sql import Session

    _check_duckdb()
    session = Session(load(args.trace, args.no_cache), locked=not args.writable, timeout_s=_timeout(args.timeout))
    shell = Shell(session, args.format, args.max_rows)
    if args.query is not None:  # one statement or several, each answered in turn
        return shell.script(args.query)
    if not sys.stdin.isatty():
        return shell.script(sys.stdin.read())
    return Prompt(shell, args.trace).loop()


MAX_ROWS = 1 << 40  # more rows than any answer holds: a larger count means all of them


def _rows(text: str) -> int:
    """--max-rows: a whole number, 0 or more (one past any answer's rows counts as all)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number of rows, 0 or more (0: all), not {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"a whole number of rows, 0 or more (0: all), not {text!r}")
    return min(n, MAX_ROWS)


def _timeout(seconds: float | None) -> float | None:
    """A query's time limit: the option's (0: none), else the setting's."""
    import math

    from ..sql import timeout_setting

    if seconds is None:
        return timeout_setting()
    if not math.isfinite(seconds) or seconds < 0:
        raise BadUsage(f"--timeout must be a number of seconds, 0 or more (got {seconds:g})")
    return seconds or None


def _check_duckdb() -> None:
    try:
        import duckdb  # noqa: F401
    except ImportError:
        from .install import extra_hint

        raise QueryError(f"tracetui sql needs DuckDB: {extra_hint('sql')}") from None


def statements(session: Session, text: str) -> list[str]:
    """The statements of a script, each as its own text."""
    import duckdb

    from ..sql import one_line

    try:
        return [s.query for s in session.con.extract_statements(text)]
    except duckdb.Error as exc:
        raise QueryError(one_line(exc)) from None


class Shell:
    """What the prompt and a piped script share: lines taken as they come (a statement runs when a line ends it
    with ; or at an empty line; a dot command is a line of its own), each answer printed as it runs."""

    def __init__(self, session: Session, fmt: str, max_rows: int) -> None:
        self.session, self.fmt, self.max_rows = session, fmt, max_rows
        self.pending: list[str] = []
        self.first = 0  # the line the pending statement starts on (from 1)

    def script(self, text: str) -> int:
        """Run a script line by line; the first error stops it, said with its line (QueryError: exit 2)."""
        for number, line in enumerate(text.splitlines(), 1):
            try:
                self.line(line, number)
            except QueryError as exc:
                raise QueryError(f"line {self.where(exc, number)}: {exc}") from None
        try:
            self.flush()
        except QueryError as exc:
            raise QueryError(f"line {self.where(exc, len(text.splitlines()))}: {exc}") from None
        return 0

    def where(self, exc: QueryError, number: int) -> int:
        return getattr(exc, "line", None) or self.first or number

    def line(self, line: str, number: int) -> bool:
        """Take one line; True when it asks to leave (.quit)."""
        if not self.pending and line.strip().startswith("."):
            return self.dot(line.strip())
        if not self.pending:
            self.first = number
        text = "\n".join([*self.pending, line]).strip()
        if not text:
            self.pending = []
            return False
        if line.strip() and not text.endswith(";"):
            self.pending.append(line)
            return False
        self.pending = []
        self.run(text, self.first)
        return False

    def flush(self) -> None:
        """Run what is still pending (a script's last statement without its ;)."""
        text = "\n".join(self.pending).strip()
        self.pending = []
        if text:
            self.run(text, self.first)

    def run(self, text: str, first: int) -> None:
        """Each statement of text in turn, its answer printed at once (QueryError carries the statement's line)."""
        seen = 0
        for statement in statements(self.session, text):
            at = text.find(statement.strip()[:40], seen)
            seen = max(at, seen)
            fetch = self.max_rows + 1 if self.fmt in ("text", "md") and self.max_rows > 0 else None
            try:
                answer = self.session.query(statement, fetch)
            except QueryError as exc:
                exc.line = first + text.count("\n", 0, max(at, 0))  # type: ignore[attr-defined]
                raise
            print(render(answer, self.fmt, self.max_rows), flush=True)

    def dot(self, line: str) -> bool:
        """A dot command; True to leave."""
        from ..sql import TABLES, schema_text

        word, _, rest = line.partition(" ")
        if word in (".quit", ".exit", ".q"):
            return True
        if word == ".tables":
            print("\n".join(f"{t.name}: {t.doc}" for t in TABLES.values()))
        elif word == ".schema":
            text = schema_text()
            name = rest.strip()
            print(next((part for part in text.split("\n\n") if part.startswith(f"{name}:")), text) if name else text)
        elif word == ".mode" and rest.strip() in MODES:
            self.fmt = rest.strip()
        elif word in (".help", ".mode"):
            print(HELP)
        else:
            raise QueryError(f"{word}: no such dot command (.help lists them)")
        return False


def render(answer: Answer, fmt: str, max_rows: int = 0) -> str:
    """An answer as text or markdown (at most max_rows, 0: all), CSV, or JSON ({"columns", "rows"})."""
    cols, rows = answer.columns, answer.rows
    if fmt == "json":
        return json.dumps({"columns": cols, "rows": [dict(zip(cols, r, strict=True)) for r in rows]}, indent=2)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerows([cols, *[["" if v is None else _csv(v) for v in r] for r in rows]])
        return buf.getvalue().rstrip("\n")
    if not cols:
        return "OK"
    from ..reports.formats import table, terminal_width

    more = max_rows > 0 and len(rows) > max_rows
    shown = rows[:max_rows] if more else rows
    cells = [[_cell(v) for v in r] for r in shown]
    count = f"{len(shown):,} row{'s' if len(shown) != 1 else ''}"
    footer = f"{count} shown; more not shown (LIMIT, or --max-rows 0 shows all)" if more else count
    width = terminal_width()
    columns = answer_columns(cols, shown)
    return table(fmt, columns, cells, None, 0 if width is None else FULL, [footer], width)


COLUMN_LINE = re.compile(r"^  \S+ +\S+ +")  # "  id   BIGINT   ": a column's name and type, its meaning after


def fit_schema(text: str, width: int | None) -> str:
    """The schema's lines wrapped at width: a column's meaning under itself (past its name and type), a table's
    description under its name."""
    if not width:
        return text
    out = []
    for line in text.split("\n"):
        lead = COLUMN_LINE.match(line)
        indent = " " * min(lead.end() if lead else 2, width // 2)
        out += textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False) or [""]
    return "\n".join(out)


def answer_columns(heads: list[str], rows: list) -> list:
    """A query's columns as a table definition, fitted as every report's are (tables/base.py's fit): the first text
    column is the name, cut in the middle; the others give way from the right, and one with the same value on
    every row (it tells no row from another) is left out first, its value said below the table."""
    from ..tables.base import CONSTANT, Column

    texts = [any(isinstance(r[k], str) for r in rows) for k in range(len(heads))]
    name = next((k for k, t in enumerate(texts) if t), None)
    return [
        Column(h, _column_cell(k), priority=CONSTANT + k, name=k == name, left=texts[k], min_width=12)
        for k, h in enumerate(heads)
    ]


def _column_cell(k: int) -> Callable[[Any, Any, int], Any]:
    """A query column's cell: the row's k-th value."""
    return lambda r, c, w: r[k]


def _csv(value: object) -> str:
    """A CSV cell: lists and maps as JSON; text a spreadsheet would run as a formula prefixed (csv_cell)."""
    from ..text.sanitize import csv_cell

    return csv_cell(json.dumps(value) if isinstance(value, (list, dict)) else value)


def _cell(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if abs(value) < 1e15 else f"{value:g}"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


FULL = 10**6  # a name width that cuts nothing (no terminal: every column whole)


class Prompt:
    """The interactive prompt: statements run as they complete; an error is one line and the prompt stays."""

    def __init__(self, shell: Shell, path: str) -> None:
        self.shell, self.path = shell, path

    def loop(self) -> int:
        from ..sql import TABLES

        history = _readline(self.words())
        print(
            f"tracetui sql on {self.path} ({self.shell.session.results.trace.n:,} events). Tables: {', '.join(TABLES)}.\n"
            "End a statement with ; (or an empty line). .schema shows the columns, .help the rest; Ctrl-D leaves."
        )
        number = 0
        while True:
            try:
                line = input(MORE if self.shell.pending else PROMPT)
            except EOFError:
                print()
                break
            except KeyboardInterrupt:
                print()
                self.shell.pending = []
                continue
            number += 1
            try:
                if self.shell.line(line, number):
                    break
            except QueryError as exc:
                self.shell.pending = []
                print(f"Error: {exc}")
        history()
        return 0

    def words(self) -> list[str]:
        from ..sql import TABLES

        keywords = "SELECT FROM WHERE GROUP BY ORDER LIMIT JOIN USING ON AS AND OR NOT COUNT SUM AVG MIN MAX DESC"
        return sorted({*TABLES, *(c.name for t in TABLES.values() for c in t.columns), *keywords.split()})


def _readline(words: list[str]):
    """History in the cache directory and Tab completion of tables, columns and keywords; returns the saver."""
    try:
        import readline
    except ImportError:  # Windows without pyreadline
        return lambda: None
    from ..model.load.cachedir import cache_root

    path = cache_root() / "sql_history"
    try:
        readline.read_history_file(path)
    except OSError:
        pass
    readline.set_completer(lambda text, k: ([w for w in words if w.lower().startswith(text.lower())] + [None])[k])
    readline.parse_and_bind("tab: complete")

    def save() -> None:
        from ..model.load.cachedir import ensure_root

        if not ensure_root():  # (made and tagged as the cache's own, never a bare folder)
            return
        try:
            readline.set_history_length(1000)
            readline.write_history_file(path)
        except OSError:
            pass

    return save


COMMANDS = {"sql": Command(add_sql, cmd_sql)}
