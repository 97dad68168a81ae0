"""`tracetui sql`: each table's rows and totals against the commands, the schema, the formats, the prompt, the lock."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES, SHARED, X, raw_events, write_trace

import tracetui
from tui.cli import main
from tui.model.errors import QueryError
from tui.sql import TABLES, Session

pytest.importorskip("duckdb")

BERT = SAMPLES / "h100-bert-small.json.gz"
TRACES = [
    BERT,
    SAMPLES / "a100-train-control.json.gz",
    SAMPLES / "v100-cudagraph-test.json.gz",
    SAMPLES / "mi250-rocm-train.json.gz",
    SAMPLES / "cpu" / "mlp_fwd.json.gz",
    SAMPLES / "hta-2rank",
    SHARED / "hta-2022-11-v100-ddp-memory-216k" / "df_index_resolver.json.gz",
    SHARED / "tracelens-2026-07-mi300-vllm-piecewise-graph-pair" / "graph_execution.json.gz",
]


def one(t: tracetui.Trace, query: str):
    rows = t.sql(query)["rows"]
    return next(iter(rows[0].values()))


def _present(path: Path):
    if not path.exists():
        pytest.skip(f"{path} is absent (../shared)")
    return tracetui.load(path)


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_tables_agree_with_the_commands(path):
    t = _present(path)
    a = t.results
    assert one(t, "SELECT count(*) FROM events") == a.trace.n
    assert one(t, "SELECT count(DISTINCT id) FROM events") == a.trace.n
    ops, kernels = t.ops(), t.kernels()
    keys = list(TABLES["ops"].columns[k].name for k in range(len(TABLES["ops"].columns)))
    assert t.sql("SELECT * FROM ops")["rows"] == [{k: r.get(k) for k in keys} for r in ops["rows"]]
    assert t.sql("SELECT * FROM kernels")["rows"] == kernels["rows"]
    busy = one(t, "SELECT coalesce(sum(dur_us), 0) FROM events WHERE kind IN ('kernel', 'memcpy', 'memset')")
    assert busy == pytest.approx(kernels["gpu_time_us"])
    assert one(t, "SELECT count(*) FROM launches") == int((a.links.launcher >= 0).sum())
    latency = t.sql(
        "SELECT e.name, quantile_cont(l.latency_us, 0.5) AS us FROM launches l JOIN events e ON e.id = l.activity_id "
        "WHERE e.kind IN ('kernel', 'memcpy', 'memset') GROUP BY e.name"
    )["rows"]
    by_name = {r["name"]: r["launch_latency_median_us"] for r in kernels["rows"]}  # the median, as the viewer's
    assert all(r["us"] == pytest.approx(by_name[r["name"]], abs=1e-3) for r in latency)
    assert t.sql("SELECT * FROM steps")["rows"] == t.steps()
    if not a.trace.job:
        assert one(t, "SELECT coalesce(list(dur_us ORDER BY number), []) FROM steps") == [
            s["dur_us"] for s in t.summary()["steps"]
        ]


def test_memory_table_holds_the_samples_the_report_counts():
    t = tracetui.load(BERT)
    for d in t.memory()["devices"]:
        where = f"FROM memory WHERE device = '{d['device']}'"
        assert one(t, f"SELECT count(*) {where} AND bytes > 0") == d["allocs"]
        assert one(t, f"SELECT count(*) {where} AND bytes < 0") == d["frees"]
        assert one(t, f"SELECT max(total_allocated) {where}") == d["peak_allocated_bytes"]
    op = t.sql("SELECT op_id, ts_us FROM memory WHERE op_id IS NOT NULL LIMIT 1")["rows"][0]
    e = t.event(op["op_id"])
    assert e["kind"] == "cpu_op" and e["ts_us"] <= op["ts_us"] <= e["ts_us"] + e["dur_us"]


def test_flows_pair_the_arrows_the_file_writes():
    """ac2g arrows with both ends, as the file's own s and f events pair them (read with the standard library)."""
    t = tracetui.load(BERT)
    raw = [e for e in raw_events(BERT) if e.get("ph") in ("s", "f")]
    starts, ends = ({e["id"] for e in raw if e["ph"] == ph} for ph in ("s", "f"))
    both = t.sql("SELECT count(*) AS n FROM flows WHERE from_ts_us IS NOT NULL AND to_ts_us IS NOT NULL")
    assert both["rows"][0]["n"] == len(starts & ends)
    assert one(t, "SELECT count(*) FROM flows") == len(starts | ends)
    linked = t.sql(
        "SELECT f.from_id, f.to_id, l.launch_id FROM flows f JOIN launches l ON l.activity_id = f.to_id "
        "WHERE f.kind = 'ac2g'"
    )["rows"]
    assert linked and all(r["from_id"] == r["launch_id"] for r in linked)  # the arrows agree with the launch links


def test_counters_and_ids_on_an_inline_trace(tmp_path):
    events = [
        X("aten::mm", 0, 50),
        X("child", 10, 20),
        {"ph": "C", "name": "GPU Utilization", "pid": 0, "ts": 5, "args": {"value": 0.5}},
        {"ph": "C", "name": "GPU Utilization", "pid": 0, "ts": 30, "args": {"value": 0.75}},
    ]
    t = tracetui.load(write_trace(tmp_path / "c.json", events))
    assert t.sql("SELECT name, ts_us, value FROM counters ORDER BY ts_us")["rows"] == [
        {"name": "GPU Utilization", "ts_us": 5.0, "value": 0.5},
        {"name": "GPU Utilization", "ts_us": 30.0, "value": 0.75},
    ]
    rows = t.sql("SELECT id, name, parent_id, depth, ph, step FROM events ORDER BY id")["rows"]
    assert rows == [
        {"id": 0, "name": "aten::mm", "parent_id": None, "depth": 0, "ph": "X", "step": None},
        {"id": 1, "name": "child", "parent_id": 0, "depth": 1, "ph": "X", "step": None},
    ]


def test_every_column_has_its_declared_type_and_meaning():
    t = tracetui.load(BERT)
    con = t.duckdb()
    for table in TABLES.values():
        got = {name: kind for name, kind, *_ in con.execute(f"DESCRIBE {table.name}").fetchall()}
        assert list(got) == [c.name for c in table.columns], table.name
        for c in table.columns:
            assert got[c.name] == c.type and c.meaning, f"{table.name}.{c.name}: {got[c.name]}"


def test_a_locked_session_reads_and_writes_no_file(tmp_path):
    """The MCP server's session: DuckDB's external access off, its settings locked."""
    s = Session(tracetui.load(BERT).results, locked=True)
    target = tmp_path / "out.csv"
    refused = [
        "SELECT * FROM read_csv('/etc/passwd')",
        f"COPY (SELECT * FROM events) TO '{target}'",
        f"COPY events TO '{target}' (FORMAT parquet)",
        "SET enable_external_access = true",
        "RESET enable_external_access",
        f"ATTACH '{tmp_path / 'x.db'}'",
        "INSTALL httpfs",
        "SELECT * FROM read_text('/etc/hostname')",
    ]
    for query in refused:
        with pytest.raises(QueryError) as caught:
            s.query(query)
        assert "\n" not in str(caught.value), query
    assert not target.exists() and not (tmp_path / "x.db").exists()
    assert s.query("SELECT count(*) FROM events").rows == [(2060,)]  # still answers


def test_a_locked_session_cannot_change_what_later_queries_read(tmp_path, monkeypatch):
    """DROP, CREATE, INSERT, a transaction's end, EXPLAIN ANALYZE of a DROP, a second statement after a SELECT:
    refused or undone, so every later query reads the tables as they were made."""
    s = Session(tracetui.load(BERT).results, locked=True)
    kernels = s.query("SELECT name, total_us FROM kernels ORDER BY name").rows
    refused = [
        "DROP TABLE kernels",
        "DROP VIEW events",
        "CREATE TABLE kernels2 AS SELECT 1 AS x",
        "CREATE OR REPLACE VIEW kernels AS SELECT 'fake' AS name, 1.0 AS total_us",
        "CREATE TEMP TABLE t AS SELECT 1 AS x",
        "CREATE MACRO m(a) AS a",
        "SELECT 1; DROP VIEW events",
        "COMMIT; DROP VIEW events",
        "BEGIN",
        "SET threads = 1",
        "DETACH memory",
        "USE system",
        "CHECKPOINT",
    ]
    for query in refused:
        with pytest.raises(QueryError, match="read-only|locked|disabled") as caught:
            s.query(query)
        assert "\n" not in str(caught.value), query
    s.query("EXPLAIN ANALYZE DROP VIEW events")  # it runs the DROP, inside a transaction rolled back after
    assert s.query("SELECT name, total_us FROM kernels ORDER BY name").rows == kernels
    assert s.query("SELECT count(*) FROM events").rows == [(2060,)]
    assert s.query("SELECT count(*) FROM duckdb_tables() WHERE NOT internal AND temporary").rows == [(0,)]


def test_copy_reaches_no_file_even_in_duckdbs_temporary_folder(tmp_path, monkeypatch):
    """DuckDB lets COPY write into its temporary folder (.tmp/ in the working folder) with external access off:
    a locked session has none, and refuses COPY before that."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tmp").mkdir()
    s = Session(tracetui.load(BERT).results, locked=True)
    for query in ("COPY (SELECT 'echo pwned') TO '.tmp/x.sh'", "SELECT * FROM read_text('.tmp/x.sh')"):
        with pytest.raises(QueryError):
            s.query(query)
    assert s.query("SELECT current_setting('temp_directory')").rows == [("",)]
    assert list(tmp_path.rglob("*")) == [tmp_path / ".tmp"]


def test_a_locked_sessions_memory_is_limited(monkeypatch):
    import duckdb

    monkeypatch.setenv("TRACETUI_SQL_MEMORY_GB", "0.5")
    s = Session(tracetui.load(BERT).results, locked=True)
    assert s.query("SELECT current_setting('memory_limit')").rows == [("476.8 MiB",)]
    with pytest.raises(QueryError, match="read-only"):
        s.query("PRAGMA memory_limit = '64GB'")  # (DuckDB reads it as SET)
    cur = s.cursor()
    with pytest.raises(duckdb.Error, match="locked"):  # and a connection of its own cannot change it either
        cur.execute("SET memory_limit = '64GB'")


def test_an_endless_query_is_stopped_at_its_time_limit_and_the_session_goes_on():
    s = Session(tracetui.load(BERT).results, locked=True, timeout_s=1.0)
    began = time.monotonic()
    with pytest.raises(QueryError, match=r"stopped after 1 s, its time limit"):
        s.query("SELECT count(*) FROM range(1e15::BIGINT) a, range(10) b")
    assert 0.9 < time.monotonic() - began < 10
    assert s.query("SELECT count(*) FROM events").rows == [(2060,)]


def test_the_cli_is_read_only_and_bounded_unless_asked(tmp_path, capsys):
    assert main(["sql", str(BERT), "DROP TABLE kernels"]) == 2
    err = capsys.readouterr().err
    assert "read-only" in err and "--writable" in err and err.count("\n") == 1
    assert main(["sql", "--timeout", "0.5", str(BERT), "SELECT count(*) FROM range(1e15::BIGINT)"]) == 2
    assert "stopped after 0.5 s" in capsys.readouterr().err
    assert main(["sql", "--timeout", "-1", str(BERT), "SELECT 1"]) == 2
    assert "--timeout" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:  # (argparse's usage error)
        main(["sql", "--max-rows", "1e21", str(BERT), "SELECT 1"])
    assert usage.value.code == 2 and "--max-rows: a whole number of rows" in capsys.readouterr().err
    assert main(["sql", "--max-rows", str(10**23), str(BERT), "SELECT 1 AS one"]) == 0  # more than any answer: all
    assert "1 row" in capsys.readouterr().out


def test_the_cli_writes_files_when_asked(tmp_path, capsys):
    """The command line is the user's own shell: COPY ... TO a file works there, asked for (to Parquet, CSV, ...)."""
    out = tmp_path / "kernels.csv"
    query = f"COPY (SELECT name, total_us FROM kernels) TO '{out}' (HEADER)"
    assert main(["sql", str(BERT), query]) == 2 and not out.exists()
    assert main(["sql", "--writable", str(BERT), query]) == 0
    written = list(csv.reader(io.StringIO(out.read_text())))
    assert written[0] == ["name", "total_us"] and [r[0] for r in written[1:]] == [
        r["name"] for r in tracetui.load(BERT).kernels()["rows"]
    ]


def test_cli_formats(capsys):
    query = "SELECT name, count(*) AS n, sum(dur_us) AS us FROM events WHERE kind = 'kernel' GROUP BY name ORDER BY n DESC, name"
    assert main(["sql", str(BERT), query, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["columns"] == ["name", "n", "us"] and sum(r["n"] for r in doc["rows"]) == 60
    assert main(["sql", str(BERT), query, "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["name", "n", "us"] and [int(r[1]) for r in rows[1:]] == [r["n"] for r in doc["rows"]]
    assert main(["sql", str(BERT), query, "--max-rows", "2"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].split() == ["name", "n", "us"] and len(text) == 5 and "more not shown" in text[-1]
    assert main(["sql", str(BERT), "SELECT 1 AS a, NULL AS b", "--format", "md"]) == 0
    assert capsys.readouterr().out.splitlines()[:3] == ["| a | b |", "|---|---:|", "| 1 | NULL |"]


def test_cli_errors_are_one_line(tmp_path, capsys):
    cases = [
        (["sql", str(tmp_path / "nope.json"), "SELECT 1"], f"tracetui: error: {tmp_path / 'nope.json'}: no such file"),
        (["sql", str(BERT), "SELECT * FROM stepz"], 'Did you mean "steps"?'),
        (["sql", str(BERT), "SELECT nme FROM events"], 'Candidate bindings: "name"'),
        (["sql", str(BERT), "SELECT * FROM events WHERE regexp_matches(name, '(')"], "tracetui: error: "),
    ]
    for argv, message in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err


def test_schema_lists_every_table_without_loading(capsys):
    assert main(["sql", str(BERT), "--schema"]) == 0
    text = capsys.readouterr().out
    for table in TABLES.values():
        assert f"{table.name}: {table.doc}" in text
        assert all(c.name in text for c in table.columns)
    assert main(["sql", str(BERT), "--schema", "--format", "json"]) == 0
    assert [t["name"] for t in json.loads(capsys.readouterr().out)["tables"]] == list(TABLES)


def test_statements_on_stdin(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("SELECT 1 AS a;\nSELECT count(*) AS n\nFROM steps;"))
    assert main(["sql", str(BERT), "--format", "csv"]) == 0
    assert capsys.readouterr().out == "a\n1\nn\n1\n"


def test_several_statements_in_the_query_are_each_answered(capsys):
    query = "SELECT count(*) AS n FROM events WHERE cat = 'kernel'; SELECT count(*) AS k FROM kernels"
    assert main(["sql", str(BERT), query, "--format", "csv"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "n" and out[2] == "k" and int(out[1]) > 0 and int(out[3]) > 0


def test_the_prompt_survives_errors_and_keeps_history(monkeypatch, capsys, isolated_cache):
    """A bad query is one line and the prompt stays; a statement may span lines; history is kept in the cache."""
    lines = iter(
        [
            "SELEC 1",  # no ; yet: waits for more
            "",  # an empty line runs it: the error
            "SELECT count(*) AS n",
            "FROM events;",  # two lines, one statement
            ".schema steps",
            ".mode csv",
            "SELECT 2 AS b;",
            ".quit",
        ]
    )

    def fake_input(prompt: str) -> str:
        print(prompt, end="")
        return next(lines)

    monkeypatch.setattr("builtins.input", fake_input)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    assert main(["sql", str(BERT)]) == 0
    out = capsys.readouterr().out
    assert 'Error: Parser Error: syntax error at or near "SELEC"' in out
    assert out.index("Error: Parser Error") < out.index("\n2060\n")  # the count ran after the error
    assert "steps: one row per ProfilerStep#N" in out and "events:" not in out.split(".schema")[-1]
    assert "b\n2\n" in out
    assert (isolated_cache / "sql_history").exists()


def test_what_the_events_table_adds_is_kept_in_the_cache():
    """The depth and step of every event are computed once, then read back memory-mapped (never again)."""
    from tui.model.query.tables import EventFacts

    first = tracetui.load(BERT)
    assert one(first, "SELECT max(depth) FROM events") > 0
    again = EventFacts(tracetui.load(BERT).results)
    assert isinstance(again.event_depth, np.memmap) and isinstance(again.event_step, np.memmap)
    assert one(first, "SELECT count(*) FROM events WHERE step = 6") == int((again.event_step == 6).sum())


def test_a_piped_script_answers_each_statement_then_stops_at_the_first_error_with_its_line(monkeypatch, capsys):
    """The first answer is printed before the error; the error names its line; what follows it does not run."""
    script = "select count(*) as n from kernels;\nselec bad;\nselect 3 as never;\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(script))
    assert main(["sql", str(BERT), "--format", "csv"]) == 2
    out, err = capsys.readouterr()
    assert out.splitlines() == ["n", "12"]
    assert err.startswith("tracetui: error: line 2: Parser Error: syntax error at or near") and err.count("\n") == 1
    monkeypatch.setattr("sys.stdin", io.StringIO("select 1 as a;\n\nselect *\nfrom nope;\n"))
    assert main(["sql", str(BERT), "--format", "csv"]) == 2
    out, err = capsys.readouterr()
    assert out == "a\n1\n" and err.startswith("tracetui: error: line 3: Catalog Error")  # where that statement starts


def test_dot_commands_work_from_a_pipe(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(".mode csv\nselect 1 as a;\n.mode json\nselect 2 as b;\n.tables\n"))
    assert main(["sql", str(BERT)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("a\n1\n") and '"rows": [\n    {\n      "b": 2\n    }\n  ]' in out
    assert "kernels: " in out  # .tables
    monkeypatch.setattr("sys.stdin", io.StringIO(".nonsense\n"))
    assert main(["sql", str(BERT)]) == 2
    assert "line 1: .nonsense: no such dot command" in capsys.readouterr().err


def test_schema_needs_no_trace_and_querying_does(capsys):
    assert main(["sql", "--schema"]) == 0
    out = capsys.readouterr().out
    assert all(f"{t.name}: " in out for t in TABLES.values())
    assert main(["sql"]) == 2
    assert "give a TRACE" in capsys.readouterr().err


def test_a_suggestion_names_our_tables_never_the_internal_ones_behind_them(capsys):
    for typed, ours in (("_counter", "counters"), ("_event", "events"), ("countrs", "counters")):
        assert main(["sql", str(BERT), f"SELECT * FROM {typed}"]) == 2
        err = capsys.readouterr().err
        assert f'Did you mean "{ours}"?' in err and '"_' not in err, err
