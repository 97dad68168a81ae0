"""`tracetui sql TRACE [QUERY]`: one query, a script on stdin, or an interactive prompt with history."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from typing import TYPE_CHECKING

from ..model.errors import QueryError
from .options import TRACE_HELP, Command, format_opt, load, trace_opts, trace_path

if TYPE_CHECKING:
    from ..sql import Answer, Session

EPILOG = """\
prints: the query's rows (--format text or md: at most --max-rows, csv and json: all); without QUERY, an
interactive prompt (a statement runs when it ends with ; or at an empty line), or the statements on stdin when piped.
--schema lists every table and column with its meaning. Event ids are the same as in every other output.
defaults: --format text, --max-rows 1000, the on-disk cache.
examples: tracetui sql trace.json "SELECT name, count(*) AS n, sum(dur_us) FROM events WHERE kind = 'kernel'
          GROUP BY name ORDER BY 3 DESC LIMIT 10"
          tracetui sql trace.json "COPY events TO 'events.parquet'"     (any file DuckDB writes)"""
HELP = """\
.tables          the tables
.schema [TABLE]  their columns and what each means
.mode FORMAT     text, csv, json or md
.help            this
.quit            leave (Ctrl-D too)
A statement runs when it ends with ; (an empty line runs what was typed so far)."""
PROMPT, MORE = "sql> ", "...> "


def add_sql(sub, command: str | None) -> argparse.ArgumentParser:
    """Register `tracetui sql`."""
    p = sub.add_parser(
        "sql",
        help="query the trace with SQL (DuckDB): events, ops, kernels, launches, steps, memory, counters, flows",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("trace", metavar="TRACE", help=TRACE_HELP)
    p.add_argument("query", metavar="QUERY", nargs="?", help="the query (none: a prompt, or the statements on stdin)")
    p.add_argument("--schema", action="store_true", help="list every table and column with what it means")
    format_opt(p, ("text", "csv", "json", "md"))
    p.add_argument("--max-rows", type=int, default=1000, metavar="N", help="rows shown as text or md (0: all)")
    trace_opts(p)
    return p


def cmd_sql(args: argparse.Namespace) -> int:
    trace_path(args.trace)  # a missing trace is said first, even with --schema
    from ..sql import Session, schema_document, schema_text

    if args.schema:
        print(json.dumps(schema_document(), indent=2) if args.format == "json" else schema_text())
        return 0
    _check_duckdb()
    session = Session(load(args.trace, args.no_cache))
    if args.query is not None:  # one statement or several, each answered in turn
        return run_script(session, args.query, args)
    if not sys.stdin.isatty():
        return run_script(session, sys.stdin.read(), args)
    return Prompt(session, args).loop()


def _check_duckdb() -> None:
    try:
        import duckdb  # noqa: F401
    except ImportError:
        raise QueryError("tracetui sql needs DuckDB: pip install 'tracetui[sql]'") from None


def _fetch(args: argparse.Namespace) -> int | None:
    """Rows to fetch: one more than shown, to know there are more (None: all)."""
    return args.max_rows + 1 if args.format in ("text", "md") and args.max_rows > 0 else None


def run_script(session: Session, text: str, args: argparse.Namespace) -> int:
    """Each statement of a script in turn; the first error stops it (exit 2)."""
    for statement in statements(session, text):
        print(render(session.query(statement, _fetch(args)), args.format, args.max_rows))
    return 0


def statements(session: Session, text: str) -> list[str]:
    """The statements of a script, each as its own text."""
    import duckdb

    from ..sql import one_line

    try:
        return [s.query for s in session.con.extract_statements(text)]
    except duckdb.Error as exc:
        raise QueryError(one_line(exc)) from None


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
    from ..reports.formats import grid, terminal_width

    more = max_rows > 0 and len(rows) > max_rows
    shown = rows[:max_rows] if more else rows
    cells = [[_cell(v) for v in r] for r in shown]
    left = [any(isinstance(r[k], str) for r in shown) for k in range(len(cols))]
    count = f"{len(shown):,} row{'s' if len(shown) != 1 else ''}"
    footer = f"{count} shown; more not shown (LIMIT, or --max-rows 0 shows all)" if more else count
    return grid(fmt, cols, cells, [footer], terminal_width(), left)


def _csv(value: object) -> str:
    return json.dumps(value) if isinstance(value, (list, dict)) else str(value)


def _cell(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if abs(value) < 1e15 else f"{value:g}"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


class Prompt:
    """The interactive prompt: statements run as they complete; an error is one line and the prompt stays."""

    def __init__(self, session: Session, args: argparse.Namespace) -> None:
        self.session, self.fmt, self.max_rows, self.path = session, args.format, args.max_rows, args.trace

    def loop(self) -> int:
        from ..sql import TABLES

        history = _readline(self.words())
        print(
            f"tracetui sql on {self.path} ({self.session.results.trace.n:,} events). Tables: {', '.join(TABLES)}.\n"
            "End a statement with ; (or an empty line). .schema shows the columns, .help the rest; Ctrl-D leaves."
        )
        buf: list[str] = []
        while True:
            try:
                line = input(MORE if buf else PROMPT)
            except EOFError:
                print()
                break
            except KeyboardInterrupt:
                print()
                buf = []
                continue
            if not buf and line.strip().startswith("."):
                if self.dot(line.strip()):
                    break
                continue
            buf = self.feed(buf, line)
        history()
        return 0

    def feed(self, buf: list[str], line: str) -> list[str]:
        """Add a line; run the statement when it ends with ; (or the line is empty). The lines still pending."""
        text = "\n".join([*buf, line]).strip()
        if not text:
            return []
        if line.strip() and not text.endswith(";"):
            return [*buf, line]
        self.run(text)
        return []

    def run(self, text: str) -> None:
        try:
            for statement in statements(self.session, text):
                fetch = self.max_rows + 1 if self.fmt in ("text", "md") and self.max_rows > 0 else None
                print(render(self.session.query(statement, fetch), self.fmt, self.max_rows))
        except QueryError as exc:
            print(f"Error: {exc}")

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
        elif word == ".mode" and rest.strip() in ("text", "csv", "json", "md"):
            self.fmt = rest.strip()
        else:
            print(HELP)
        return False

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
    from ..model.load.cache import cache_root

    path = cache_root() / "sql_history"
    try:
        readline.read_history_file(path)
    except OSError:
        pass
    readline.set_completer(lambda text, k: ([w for w in words if w.lower().startswith(text.lower())] + [None])[k])
    readline.parse_and_bind("tab: complete")

    def save() -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            readline.set_history_length(1000)
            readline.write_history_file(path)
        except OSError:
            pass

    return save


COMMANDS = {"sql": Command(add_sql, cmd_sql)}
