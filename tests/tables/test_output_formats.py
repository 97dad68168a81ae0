"""The headless outputs as a reader or a script takes them (a user's report, 2026-12): markdown that renders as
meant on GitHub, no empty table over a sentence, and no float noise in JSON or CSV.

1. A markdown table is followed (and preceded) by a blank line: GitHub reads a line touching a table as its row.
2. Markdown aligns text columns (names, kinds, descriptions) left and numbers right.
3. `kernels` on a CPU-only trace prints only its sentence in text and markdown; CSV keeps its header, JSON its rows.
4. Microseconds in JSON and CSV are rounded to the nanosecond (the trace's resolution): 9214.157, never
   9214.157000000001; every other number keeps its digits.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re

import pytest
from conftest import SAMPLES

from tui.cli import main
from tui.reports.formats import grid, in_us, written
from tui.tables import kernels as kernels_table

BERT = str(SAMPLES / "h100-bert-small.json.gz")  # H100: memory events, Python frames, input shapes
MLP = str(SAMPLES / "cpu" / "mlp_fwd.json.gz")  # CPU only, three ProfilerSteps
STACK = str(SAMPLES / "cpu" / "attn_sdpa_math.json.gz")  # CPU only, with Python frames (code)
LINEAR = str(SAMPLES / "cpu" / "linear_fwd.json.gz")  # CPU only, with input shapes (roofline)
GLOO = str(SAMPLES / "cpu-only-gloo.json.gz")  # CPU only, no GPU activity
JOB = str(SAMPLES / "hta-2rank")  # a folder of two ranks
NO_GPU = "No GPU activity in this trace: it ran on the CPU only."

# every command with --format md, on the traces where it has something to say
MD_RUNS = {
    "cpu": [
        ["summary", MLP],
        ["ops", MLP],
        ["ops", MLP, "--group-by-shape"],
        ["kernels", MLP],
        ["steps", MLP],
        ["critical", MLP],
        ["explain", MLP],
        ["breakdown", MLP],
        ["code", STACK],
        ["roofline", LINEAR],
        ["diff", MLP, LINEAR],
    ],
    "gpu": [
        ["summary", BERT],
        ["ops", BERT],
        ["ops", BERT, "--kernels"],
        ["kernels", BERT],
        ["kernels", BERT, "--queues"],
        ["kernels", BERT, "--sequences"],
        ["code", BERT],
        ["memory", BERT],
        ["steps", BERT],
        ["critical", BERT],
        ["critical", BERT, "--what-if", "kernel:.*=2"],
        ["explain", BERT],
        ["breakdown", BERT],
        ["breakdown", BERT, "--by", "stream"],
        ["roofline", BERT],
    ],
    "ranks": [
        ["ranks", JOB, "--workers", "1"],
        ["summary", JOB],
        ["steps", JOB],
        ["critical", JOB],
        ["breakdown", JOB],
    ],
}


def run(capsys, *argv: str) -> str:
    code = main(list(argv))
    out = capsys.readouterr().out
    assert code == 0, argv
    return out


def md_tables(text: str) -> list[tuple[int, int]]:
    """Each markdown table's first line and the line after its last (a table: consecutive lines starting `|`)."""
    lines = text.rstrip("\n").split("\n")
    out, k = [], 0
    while k < len(lines):
        if lines[k].startswith("|"):
            end = k
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            out.append((k, end))
            k = end
        else:
            k += 1
    return out


def cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def columns(text: str) -> list[tuple[str, str, list[str]]]:
    """Every markdown column of every table: (header, alignment rule, values)."""
    lines = text.rstrip("\n").split("\n")
    out = []
    for start, end in md_tables(text):
        heads, rule, rows = cells(lines[start]), cells(lines[start + 1]), [cells(r) for r in lines[start + 2 : end]]
        assert all(len(r) == len(heads) for r in rows) and len(rule) == len(heads), lines[start]
        out += [(h, rule[k], [r[k] for r in rows]) for k, h in enumerate(heads) if k > 0]  # the first: always left
    return out


def is_number(cell: str) -> bool:
    """A figure: 1,234 · 4.41 ms · 92.1% · 3.598ms  92.1% · +0.189us · 201.3 MFLOP · 1.8x."""
    return re.fullmatch(r"[-+]?[\d,]*\.?\d+\s*[a-zA-Z%×/]*(\s+[\d.]+%)?", cell) is not None


def is_words(cell: str) -> bool:
    """Text: it holds a letter and does not start with a number (kernel, GEMM, cpu_bound, tensor cores, bf16)."""
    return re.search(r"[a-zA-Z]", cell) is not None and not re.match(r"[-+]?\.?\d", cell)


# ---- 1. a blank line after (and before) every markdown table ------------------------------------------


@pytest.mark.parametrize("group", list(MD_RUNS))
def test_every_markdown_table_stands_apart_from_the_text_around_it(capsys, group):
    """GIVEN every command with --format md WHEN a table ends or starts THEN a blank line is beside it (GitHub
    renders a line touching a table as one of its rows: summary's `Why:` was one)."""
    for argv in MD_RUNS[group]:
        out = run(capsys, *argv, "--format", "md")
        lines = out.rstrip("\n").split("\n")
        for start, end in md_tables(out):
            assert end - start >= 2 and set(lines[start + 1].replace("|", "")) <= set("-:"), (argv, lines[start])
            assert end == len(lines) or lines[end] == "", (argv, lines[end])
            assert start == 0 or lines[start - 1] == "", (argv, lines[start - 1])


def test_summary_markdown_puts_why_in_its_own_paragraph(capsys):
    out = run(capsys, "summary", MLP, "--format", "md").split("\n")
    why = next(k for k, line in enumerate(out) if line.startswith("Why: "))
    assert out[why - 1] == "" and out[why - 2].startswith("| Verdict |")


def test_a_title_over_a_markdown_table_is_a_paragraph_of_its_own(capsys):
    memory = run(capsys, "memory", BERT, "--format", "md").split("\n")
    title = memory.index("cuda:0: the ops that allocate the most, by module and line")
    assert memory[title + 1] == "" and memory[title + 2].startswith("| Op |")
    job = run(capsys, "summary", JOB, "--format", "md").split("\n")
    title = job.index("A job of 2 ranks: steps per rank")
    assert job[title + 1] == "" and job[title + 2].startswith("| Step |")


# ---- 2. text left, numbers right ----------------------------------------------------------------------


@pytest.mark.parametrize("group", list(MD_RUNS))
def test_markdown_aligns_text_left_and_numbers_right(capsys, group):
    """GIVEN every command with --format md WHEN a column holds only words THEN it is left-aligned (`---`); WHEN
    it holds only figures THEN right-aligned (`---:`); the first column is always left."""
    checked = 0
    for argv in MD_RUNS[group]:
        for head, rule, values in columns(run(capsys, *argv, "--format", "md")):
            shown = [v for v in values if v not in ("", "-")]
            if shown and all(is_words(v) for v in shown):
                assert rule == "---", (argv, head, shown[:3])
                checked += 1
            elif shown and all(is_number(v) for v in shown) and head:
                assert rule == "---:", (argv, head, shown[:3])
                checked += 1
    assert checked > 10


def test_kernels_and_explain_markdown_columns(capsys):
    """The reported tables: kernels' Kind, Role and Runs on are left; explain's descriptions are left."""
    out = run(capsys, "kernels", BERT, "--format", "md", "--limit", "3").split("\n")
    assert cells(out[0])[:6] == ["Name", "Kind", "Role", "Runs on", "# of Calls", "Total"]
    assert cells(out[1]) == ["---"] * 4 + ["---:"] * 9
    out = run(capsys, "explain", MLP, "--format", "md").split("\n")
    assert out[:2] == ["| Pattern | Count | Fixing it | What it means |", "|---|---:|---|---|"]
    summary = run(capsys, "summary", MLP, "--format", "md").split("\n")
    assert summary[:2] == ["| Summary |  |", "|---|---|"]  # label and value, both words


def test_markdown_alignment_follows_the_cells_unless_a_column_says_left():
    md = grid(
        "md", ["Name", "Kind", "Calls", "Share", "Note"], [["a", "op", "3", "-", "x"]], [], left=[False] * 4 + [True]
    )
    assert md.split("\n")[1] == "|---|---|---:|---:|---|"
    mixed = [["Wall", "1.2ms", "1.5ms"], ["Self", "1.0ms", "2.0ms"], ["Verdict", "cpu-bound", "cpu-bound"]]
    assert grid("md", ["Summary", "A", "B"], mixed, []).split("\n")[1] == "|---|---:|---:|"  # figures, one word
    assert grid("md", ["a", "b"], [], []).split("\n")[1] == "|---|---:|"  # no rows: as it always was


# ---- 3. no empty table over the sentence that says there are no rows ----------------------------------


@pytest.mark.parametrize("trace", [MLP, GLOO], ids=["mlp", "gloo"])
def test_kernels_on_a_cpu_only_trace_prints_only_its_sentence(capsys, trace):
    assert run(capsys, "kernels", trace) == NO_GPU + "\n"
    assert run(capsys, "kernels", trace, "--format", "md") == NO_GPU + "\n"
    assert json.loads(run(capsys, "kernels", trace, "--format", "json")) == {"rows": [], "gpu_time_us": 0}
    header = run(capsys, "kernels", trace, "--format", "csv")
    assert header.splitlines() == [",".join(f.key for f in kernels_table.FIELDS)]  # the header, no rows


def test_kernels_on_a_gpu_trace_cut_before_its_gpu_records_says_they_may_be_lost(capsys, tmp_path):
    """The BERT sample's first 300 KB hold CPU events only (torch writes the GPU records after them): kernels says the
    file is cut short, as summary does, never that the run was CPU only."""
    cut = tmp_path / "cut.json"
    cut.write_bytes(gzip.decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes())[:300_000])
    said = run(capsys, "kernels", str(cut))
    assert said.startswith("No GPU activity in the part of the file that was read; the file is cut short")
    assert "kernels may be in the lost part" in said and "CPU only" not in said


@pytest.mark.parametrize(
    "argv, sentence",
    [
        (["kernels", MLP, "--queues"], "No launched device work in this trace: no launch queue."),
        (["ops", MLP, "--kernels"], "No op launched device work in this trace."),
        (["kernels", MLP, "--sequences"], "No sequence of 3 device activities or more recurs in this trace."),
    ],
    ids=["queues", "op-kernels", "sequences"],
)
def test_the_other_tables_without_rows_print_only_what_they_say(capsys, argv, sentence):
    for fmt in ("text", "md"):
        assert run(capsys, *argv, "--format", fmt) == sentence + "\n"


def test_roofline_without_rows_prints_its_notes_and_no_header(capsys):
    out = run(capsys, "roofline", GLOO)
    assert "No op with a FLOPs model ran device work in this trace." in out
    assert "Name" not in out.split("\n")[0] and "─" not in out


# ---- 4. microseconds to the nanosecond in JSON and CSV ------------------------------------------------


def test_steps_json_and_csv_have_no_float_noise(capsys):
    """The user's report: cpu_end_us 4897.7429999999995 beside end_us 4897.743 (CPU-only MLP steps)."""
    steps = json.loads(run(capsys, "steps", MLP, "--format", "json"))["steps"]
    assert [s["cpu_end_us"] for s in steps] == [464.329, 673.503, 856.047]
    assert all(s["cpu_end_us"] == s["end_us"] for s in steps)  # no device work: the CPU span ends the step
    rows = list(csv.DictReader(io.StringIO(run(capsys, "steps", MLP, "--format", "csv"))))
    assert [r["cpu_end_us"] for r in rows] == ["464.329", "673.503", "856.047"]
    assert all(r["cpu_end_us"] == r["end_us"] for r in rows)


def _us_values(doc: object, us: bool = False) -> list[float]:
    """Every float a document holds in microseconds (by its key, as written() reads them)."""
    if isinstance(doc, float):
        return [doc] if us else []
    if isinstance(doc, dict):
        figure = doc.get("unit") == "us"
        return [x for k, v in doc.items() for x in _us_values(v, us or in_us(k) or (figure and k == "value"))]
    if isinstance(doc, list):
        return [x for v in doc for x in _us_values(v, us)]
    return []


JSON_RUNS = [
    ["summary", BERT],
    ["ops", BERT],
    ["kernels", BERT],
    ["steps", MLP],
    ["critical", BERT],
    ["memory", BERT],
    ["code", BERT],
    ["explain", BERT],
    ["breakdown", BERT],
    ["roofline", BERT],
    ["kernels", BERT, "--queues"],
    ["kernels", BERT, "--sequences"],
    ["ops", BERT, "--kernels"],
    ["ranks", JOB, "--workers", "1"],
]


@pytest.mark.parametrize("argv", JSON_RUNS, ids=lambda a: " ".join(a[:1] + a[2:]))
def test_json_microseconds_have_at_most_three_decimals(capsys, argv):
    us = _us_values(json.loads(run(capsys, *argv, "--format", "json")))
    assert us and all(round(v, 3) == v for v in us), [v for v in us if round(v, 3) != v][:5]


@pytest.mark.parametrize(
    "argv",
    [a for a in JSON_RUNS if a[0] in ("ops", "kernels", "steps", "memory", "code")],
    ids=lambda a: " ".join(a[:1] + a[2:]),
)
def test_csv_microseconds_have_at_most_three_decimals(capsys, argv):
    rows = list(csv.DictReader(io.StringIO(run(capsys, *argv, "--format", "csv"))))
    us = [v for r in rows for k, v in r.items() if in_us(k) and v not in ("", "None")]
    assert us and all(len(v.partition(".")[2]) <= 3 for v in us), [v for v in us if len(v.partition(".")[2]) > 3][:5]


def test_the_api_returns_the_figures_the_json_prints(capsys):
    import tracetui

    t = tracetui.load(BERT)
    assert t.summary() == json.loads(run(capsys, "summary", BERT, "--format", "json"))
    assert t.ops() == json.loads(run(capsys, "ops", BERT, "--format", "json"))
    assert t.critical() == json.loads(run(capsys, "critical", BERT, "--format", "json"))


def test_written_rounds_only_microseconds():
    doc = {
        "wall_us": 9214.157000000001,
        "gpu_utilization": 0.015495288502304461,  # a share keeps its digits
        "step_us": {"min": 10841.973999999998, "rank": 1},  # under a _us key: microseconds
        "breakdown": {"cpu_bound": 4897.7429999999995},
        "collectives": {"ncclSendRecv": 114.33399999999999},
        "figures": {"time": {"value": 37.120000000000005, "unit": "us"}, "share": {"value": 0.7082982223827294}},
        "rows": [{"us": -0.0001, "gbps": 0.0004464285714285714}],
        "shifts": (1.5000000001,),
    }
    assert written(doc) == {
        "wall_us": 9214.157,
        "gpu_utilization": 0.015495288502304461,
        "step_us": {"min": 10841.974, "rank": 1},
        "breakdown": {"cpu_bound": 4897.743},
        "collectives": {"ncclSendRecv": 114.334},
        "figures": {"time": {"value": 37.12, "unit": "us"}, "share": {"value": 0.7082982223827294}},
        "rows": [{"us": 0.0, "gbps": 0.0004464285714285714}],
        "shifts": (1.5000000001,),
    }
    assert json.dumps(written({"x_us": -0.0001})) == '{"x_us": 0.0}'  # never -0.0
    assert written(float("nan"), us=True) != written(float("nan"), us=True)  # NaN stays NaN
