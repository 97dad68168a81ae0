"""Text from a trace shown, never run: control characters as visible escapes, widths in terminal cells, CSV cells a
spreadsheet cannot run (tui/text/sanitize.py and the renderers that use it)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass

import pytest
from golden import run
from hostile import ATTACKS, WIDE, hostile_trace, leaks
from rich.cells import cell_len

from tui.reports.formats import grid, text_grid, to_csv
from tui.tables.base import Field
from tui.text.sanitize import crop_cells, csv_cell, visible, visible_data, visible_lines


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\x1b]0;PWNED\x07b", "a\\x1b]0;PWNED\\x07b"),
        ("\x1b]52;c;ZWNobw==\x07", "\\x1b]52;c;ZWNobw==\\x07"),
        ("x\x1b[2Jy", "x\\x1b[2Jy"),
        ("\x9b31m", "\\x9b31m"),  # C1 CSI: one byte in 8-bit terminals
        ("a\rb\nc\td", "a\\x0db\\x0ac\\x09d"),
        ("del\x7f", "del\\x7f"),
        ("abc\u202edef\u2066g\u2069", "abc\\u202edef\\u2066g\\u2069"),
        ("line\u2028sep", "line\\u2028sep"),
        ("lone\ud800", "lone\\ud800"),  # a JSON "\ud800": no stream could encode it
    ],
)
def test_controls_are_shown_as_escapes(raw, shown):
    assert visible(raw) == shown
    assert not leaks(visible(raw))


def test_ordinary_text_is_left_as_it_is():
    for text in ("aten::mm", "void f<128, 4>(float*)", *WIDE, "ncclDevKernel_AllReduce_Sum_f32", "a\\x1b"):
        assert visible(text) == text


def test_plain_data_is_shown_to_its_last_string():
    """A model's plain result (an event's details: a dataclass with args and frames) made ready to show."""

    @dataclass(frozen=True)
    class Event:
        name: str
        args: dict
        stack: list
        launch: tuple | None
        calls: int

    e = Event("k\x1b[2J", {"Call\x9b": ["a\u202e", 3]}, ["f\r"], (7, "cuda\x07"), 5)
    shown = visible_data(e)
    assert shown == Event("k\\x1b[2J", {"Call\\x9b": ["a\\u202e", 3]}, ["f\\x0d"], (7, "cuda\\x07"), 5)
    assert visible_data(e.calls) == 5


def test_lines_keep_their_newlines():
    assert visible_lines("a\tb\nc\x1b[2J\r\n") == "a\\x09b\nc\\x1b[2J\\x0d\n"


def test_crop_counts_cells():
    assert cell_len(crop_cells("注意力机制", 5)) <= 5
    assert crop_cells("注意力机制", 5).endswith("…")
    assert crop_cells("short", 10) == "short"


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\\x09=1"),
        (-1.5, "-1.5"),  # a number in a numeric column stays one
        ("-1.5", "-1.5"),
        (float("-inf"), "-inf"),
        (-3, "-3"),
        ("aten::mm", "aten::mm"),
        (None, ""),  # nothing is an empty cell (a kernel run once has no std), never Python's word for it
    ],
)
def test_csv_cells_a_spreadsheet_cannot_run(value, cell):
    assert csv_cell(value) == cell


def test_csv_reads_back_one_row_per_row():
    fields = [Field("name", lambda r: r[0]), Field("total_us", lambda r: r[1])]
    rows = [("=1+1\r\nx", -1.5), ("\x1b[2J注意", 2.0)]
    text = to_csv(fields, rows)
    assert not leaks(text.replace("\n", ""))
    back = list(csv.reader(io.StringIO(text)))
    assert back == [["name", "total_us"], ["'=1+1\\x0d\\x0ax", "-1.5"], ["\\x1b[2J注意", "2.0"]]


def _rows(n: int = 12) -> list[list[str]]:
    """Name cells with wide, combining and control characters, and a number column."""
    names = [
        f"{WIDE[k % len(WIDE)]}op{k}{ATTACKS[k % len(ATTACKS)]}{WIDE[(k + 1) % len(WIDE)] * (k % 3)}" for k in range(n)
    ]
    return [[name, f"{k * 1.5:.3f}us", f"{k}"] for k, name in enumerate(names)]


@pytest.mark.parametrize("width", [None, 40, 200])
def test_wide_names_keep_a_grid_aligned(width):
    """Every row as wide in terminal cells as the rule under the header; a carriage return no longer splits one."""
    rows = _rows()
    lines = text_grid(["Name", "Total", "Calls"], rows, width).split("\n")
    assert len(lines) == 2 + len(rows)
    assert not leaks("\n".join(lines))
    assert {cell_len(line) for line in lines[2:]} == {cell_len(lines[1])}
    if width == 40:  # the name column cut (by cells) toward the width, down to its narrowest
        assert cell_len(lines[1]) < cell_len(text_grid(["Name", "Total", "Calls"], rows).split("\n")[1])


def test_markdown_rows_stay_rows():
    rows = _rows()
    lines = grid("md", ["Name", "Total", "Calls"], rows, ["a note\x1b[2J"]).split("\n")
    assert len(lines) == 2 + len(rows) + 2
    assert not leaks("\n".join(lines))
    assert all(line.count(" | ") == 2 for line in lines[2 : 2 + len(rows)])


@pytest.mark.parametrize("columns", ["0", "100", "160"])
@pytest.mark.parametrize("command", ["kernels", "ops"])
def test_a_hostile_traces_tables_stay_aligned(tmp_path, monkeypatch, command, columns):
    """A real table (the kernels' and ops' definitions, fitted to the width) of names with wide characters: each
    row takes the cells its rule does, the names cut by cells to fit."""
    monkeypatch.setenv("TRACETUI_COLUMNS", columns)
    path = hostile_trace(tmp_path, "b300-moe-small.json.gz", 3)
    out = run([command, str(path)]).split("---\n", 1)[1]
    lines = out.split("\n")
    rule = next(k for k, line in enumerate(lines) if line.startswith("──"))
    rows = len(json.loads(run([command, str(path), "--format", "json"]).split("---\n", 1)[1])["rows"])
    body = lines[rule + 1 : rule + 1 + rows]
    assert len(body) >= 10
    assert any(cell_len(line) != len(line) for line in body)  # wide characters are in the rows
    assert {cell_len(line) for line in body} == {cell_len(lines[rule])}
    if columns != "0":
        assert cell_len(lines[rule]) <= int(columns)


def test_no_csv_output_writes_pythons_none(capsys):
    """GIVEN the BERT sample (kernels that ran once: no std) WHEN kernels and breakdown --idle-stats are CSV THEN
    an absent value is an empty cell, and no cell reads None."""
    import csv
    import io

    from conftest import SAMPLES

    from tui.cli import main

    bert = str(SAMPLES / "h100-bert-small.json.gz")
    for argv in (["kernels", bert], ["breakdown", bert, "--idle-stats"]):
        assert main([*argv, "--format", "csv"]) == 0
        rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
        assert rows and not any(v == "None" for r in rows for v in r.values()), argv
    assert main(["kernels", bert, "--format", "csv"]) == 0
    assert any(r["std_us"] == "" for r in csv.DictReader(io.StringIO(capsys.readouterr().out)))
