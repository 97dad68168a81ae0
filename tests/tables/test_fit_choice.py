"""Which columns stay when a table must fit: those that tell its rows apart before those that do not."""

from __future__ import annotations

import contextlib
import io

from conftest import SAMPLES

from tui.cli import main
from tui.cli.sql import answer_columns, fit_schema
from tui.reports.formats import table

BERT = str(SAMPLES / "h100-bert-small.json.gz")
CONTROL = str(SAMPLES / "a100-train-control.json.gz")


def printed(monkeypatch, width: int, *argv: str) -> str:
    monkeypatch.setenv("TRACETUI_COLUMNS", str(width))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return out.getvalue()


def body(text: str, title: str) -> list[str]:
    """The rows of the table under title (to the first line that is no row)."""
    lines = text.split(title, 1)[1].splitlines()[3:]
    return lines[: next((k for k, line in enumerate(lines) if not line or line.startswith("Left out")), len(lines))]


def test_memory_at_80_columns_keeps_its_rows_apart_by_code_line(monkeypatch):
    """At 80 columns the code line was dropped and three rows read 'aten::empty 4.00 MB 4 Linear ×4'."""
    out = printed(monkeypatch, 80, "memory", BERT)
    rows = body(out, "cuda:0: the ops that allocate the most, by module and line")
    assert len(rows) == 10 and len(set(rows)) == len(rows)
    assert "modeling_bert.py(465): forward" in out and "modeling_bert.py(538): forward" in out
    wide = printed(monkeypatch, 0, "memory", BERT)
    assert "Module" in wide and "Code line" in wide  # with room, both columns as they were


def test_ops_sorted_by_self_cpu_keeps_the_calls(monkeypatch):
    """--sort self_cpu kept Self CPU % (the first column of that sort) and dropped # of Calls."""
    head = printed(monkeypatch, 80, "ops", CONTROL, "--sort", "self_cpu").splitlines()[0]
    assert "Self CPU" in head and "# of Calls" in head
    assert "Self CPU %" not in head  # the share gives way, its time stays


def test_sql_leaves_out_first_the_columns_the_same_on_every_row():
    rows = [[k, f"aten::op{k}", "X", 3113936, "python main thread", 10.5 * k] for k in range(5)]
    heads = ["id", "name", "ph", "pid", "lane", "ts_us"]
    cells = [[str(v) for v in r] for r in rows]
    text = table("text", answer_columns(heads, rows), cells, None, 10**6, ["5 rows"], 40)
    assert text.splitlines()[0].split() == ["id", "name", "ts_us"]
    assert "The same on every row: ph X; pid 3113936; lane python main thread." in " ".join(text.split())
    assert max(len(line) for line in text.splitlines()) <= 40
    whole = table("text", answer_columns(heads, rows), cells, None, 10**6, ["5 rows"], None)
    assert whole.splitlines()[0].split() == heads  # no terminal: every column


def test_the_schema_wraps_each_meaning_under_itself():
    text = (
        "events: one row per event\n  id    BIGINT   the event's id: its index in the loaded trace, the same everywhere"
    )
    lines = fit_schema(text, 40).splitlines()
    assert max(len(line) for line in lines) <= 40
    assert all(line.startswith(" " * 17) for line in lines[2:]) and lines[1].startswith("  id    BIGINT   the")
