"""One word per thing: one typical step everywhere (said which), one launch-latency statistic named in the CLI, the
viewer and the JSON, counts and sizes written one way, every "At" saying from where, raw fields in words."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, X, write_trace

from tui.cli import main
from tui.model.analyses.diff import diff
from tui.model.analyses.ranks import rank_row
from tui.model.analyses.results import Results
from tui.model.load import load_trace
from tui.model.steps import typical_step
from tui.model.watch import summarize
from tui.tables import summary as S

GOLDEN = ROOT / "tests" / "data" / "golden"


def cold_then_warm(tmp: Path) -> Path:
    """Four CPU-only steps: the first 1000 us (a cold start), then 100, 102 and 98 us. The median of all four is
    101 us; the typical step leaves the cold one out: 100 us."""
    events, ts = [], 0.0
    for n, dur in enumerate((1000, 100, 102, 98), 1):
        events += [X(f"ProfilerStep#{n}", ts, dur, cat="user_annotation"), X("aten::mm", ts + 1, dur - 2)]
        ts += dur
    return write_trace(tmp / "cold.json", events)


def test_the_typical_step_leaves_a_cold_first_step_out_and_every_view_reads_it(tmp_path, capsys, monkeypatch):
    path = cold_then_warm(tmp_path)
    a = Results(load_trace(path, use_cache=False))
    t = typical_step(a.summary.steps)
    assert (t.us, t.of, t.left_out) == (100.0, 3, ("ProfilerStep#1",))
    assert t.step is not None and t.step.name == "ProfilerStep#2" and t.step.elapsed_us == t.us  # a step that ran
    said = (  # 98, 100 and 102 us: half their range is 2% of the median
        "Typical step: 100.000us, the median elapsed time of 3 steps, which ran within ±2.0% of it "
        "(ProfilerStep#1 left out: a cold start)."
    )
    assert S.typical_note(t) == said
    monkeypatch.setenv("TRACETUI_COLUMNS", "0")
    for command in ("summary", "steps"):
        assert main([command, str(path)]) == 0
        assert said in capsys.readouterr().out, command
    assert diff(a, a).step_time_a == 100.0  # diff and --fail-if-slower
    assert summarize(path, use_cache=False).step_us == 100.0  # watch
    assert rank_row(a, None, path.name).step_us == 100.0  # ranks
    from tui.model.analyses.explain.readings import cold_start_reading

    said = "took 1.00 ms: 10.0x the typical step, the median of the other 3 steps (0.10 ms)"
    assert said in (cold_start_reading(a.summary) or "")  # the overview


def test_without_a_cold_step_the_typical_step_is_the_median_of_all():
    steps = Results(load_trace(SAMPLES / "a100-train-control.json.gz", use_cache=False)).summary.steps
    t = typical_step(steps)
    assert t.of == len(steps) == 6 and not t.left_out
    ranked = sorted(steps, key=lambda s: s.elapsed_us)
    assert t.step is ranked[2] and t.us == ranked[2].elapsed_us  # of six, the lower of the middle two: a step that ran
    assert t.us != (ranked[2].elapsed_us + ranked[3].elapsed_us) / 2  # not their mean, a time no step took
    elapsed = [s.elapsed_us for s in steps]
    assert t.spread == (max(elapsed) - min(elapsed)) / 2 / t.us


def test_the_kernels_table_names_its_launch_latency_median_and_p95(capsys, monkeypatch):
    monkeypatch.setenv("TRACETUI_COLUMNS", "0")
    assert main(["kernels", str(SAMPLES / "h100-bert-small.json.gz")]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0]
    assert "Launch→start median" in header and "Launch→start p95" in header and " avg" not in header.split("Max")[1]
    assert "Launch→start: the launch latency, from the launch call's start to the kernel's start (median, p95)" in out


def text_goldens() -> list[Path]:
    return [p for p in GOLDEN.rglob("*.txt") if "json" not in p.name]


COUNTED_ONE = re.compile(r"(?<![\w.,])1 (calls|steps|kernels|launches|events|shapes|ranks|rows|captures|copies)\b")


def test_counts_and_sizes_read_one_way_in_every_report():
    """No `(1 calls`, no `call(s)`, no decimal `kB` beside torch's binary `KB`, in any text report of any trace."""
    files = text_goldens()
    assert len(files) > 300
    for path in files:
        text = path.read_text()
        where = path.relative_to(GOLDEN)
        assert not COUNTED_ONE.search(text), (where, COUNTED_ONE.search(text).group(0))  # type: ignore[union-attr]
        assert not re.search(r"\w\((?:s|es)\)", text), (where, re.search(r".{30}\w\((?:s|es)\).{10}", text))
        assert not re.search(r"\d kB\b", text), where


def test_every_at_says_from_where(capsys):
    assert main(["memory", str(SAMPLES / "h100-bert-small.json.gz")]) == 0
    out = capsys.readouterr().out
    assert "At: from the trace's first event" in out and "At: from the start of the window" not in out


def test_raw_fields_get_words_or_stay_out():
    from tui.widgets.details import footprint_text, no_roof

    raw = {
        "grid": "[8, 1, 1]",
        "registers per thread": "255",
        "shared memory": "156184",
        "est. achieved occupancy %": "0",
    }
    text = footprint_text(raw)
    assert text == "grid [8, 1, 1], registers/thread 255, shared mem 152.52 KiB"  # an estimate of 0: none was made
    assert footprint_text({**raw, "est. achieved occupancy %": "48.5"}).endswith("occupancy (est.) 48.5%")
    assert no_roof(0.0) == "no % of roof: no device time (the roofs are a GPU's)"  # a CPU capture: no "GPU" roofs
    assert "not known" in no_roof(12.5)


def test_an_op_of_a_cpu_capture_says_it_has_no_roofs_as_a_cpu_capture_not_that_its_gpu_is_unknown():
    """The details of aten::mm in a CPU capture said "this GPU's roofs are not known": its times are CPU times
    (the roofline of a CPU capture rates ops on the CPU), and the roofline view already says "a CPU capture"."""
    import numpy as np

    from tui.model.analyses.roofline.achieved import roofline_at
    from tui.model.loading import open_trace
    from tui.widgets.details import roofline_text

    results = open_trace(str(SAMPLES / "cpu" / "linear_fwd.json.gz"), cache=False).results  # (shapes recorded)
    trace = results.trace
    mm = [k for k, name in enumerate(trace.names) if name in ("aten::mm", "aten::addmm")]
    call = int(np.flatnonzero(np.isin(trace.x.name, mm))[0])
    roof = roofline_at(results.roofline, call)
    assert roof is not None and roof.on_cpu and roof.achieved.device_us > 0  # CPU time, rated
    assert "no % of roof: a CPU capture (the roofs are a GPU's)" in roofline_text(roof).plain
    assert " GFLOP/s, " in roofline_text(roof).plain  # one rate in the unit it reads best in (was "0.0x TFLOP/s")


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("Each of the 1 launches buys 2.0 us", "The one launch buys 2.0 us"),
        ("each of the 1 calls in ProfilerStep#3", "the one call in ProfilerStep#3"),
        ("Each of the 12 launches buys 2.0 us", "Each of the 12 launches buys 2.0 us"),
        ("Each of the 1,204 kernels", "Each of the 1,204 kernels"),
        ("3 call(s) and 1 call(s)", "3 calls and 1 call"),
    ],
)
def test_counts_in_templated_text_read_one_way(text, read):
    """explain's "Each of the {launches} launches" on a step of one launch read "Each of the 1 launches"."""
    from tui.text.fmt import plurals

    assert plurals(text) == read
