"""The texts and their JSON say the same figures: summary's launch line, explain's launch step, the cold start
against the other steps, and the what-if's saving as its Before and After print it."""

from __future__ import annotations

import re

import pytest
from conftest import SAMPLES

from tui.model import load_trace
from tui.model.analyses.results import Results
from tui.tables import summary as S
from tui.text.fmt import fmt_time

H200 = SAMPLES / "cuda-h200"
PER_LAUNCH = re.compile(
    r"; (?P<n>[\d,]+) launch(?:es)? in (?P<step>\S+): (?P<gpu>\S+) of GPU work per launch, "
    r"(?P<cpu>\S+) of the step's CPU work per launch$"
)


@pytest.fixture(scope="module")
def results() -> dict[str, Results]:
    return {}


def analysed(results: dict[str, Results], name: str) -> Results:
    if name not in results:
        results[name] = Results(load_trace(SAMPLES / name, use_cache=False))
    return results[name]


@pytest.mark.parametrize(
    ("name", "window_launches"),
    [("cuda-h200/matmul_add_64_warm_eager.json.gz", 4), ("a100-train-control.json.gz", 9450)],
)
def test_the_summary_json_carries_the_per_launch_figures_the_text_says(results, name, window_launches):
    """GIVEN a capture of several steps, whose launch line gives the window's count (4 calls on the H200's
    matmul_add_64) and then the typical step's figures (2 launches in ProfilerStep#3: 1.424us of GPU work each)
    WHEN the summary is written as JSON THEN it names that step as data and carries the same count and figures; the
    window's gpu_per_launch_us (1.416 us: 5.665 us over 4 launches) was beside the step's cpu_per_kernel_us."""
    s = analysed(results, name).summary
    text = dict((k, v) for k, _, v in S.lines(s))["cpu_launch_us"]
    said = PER_LAUNCH.search(text)
    assert said, text
    assert text.startswith(f"{window_launches:,} calls that put work on the GPU")
    doc = S.fields(s)
    assert doc["launches"] == window_launches  # the window's calls, as the line starts
    assert doc["launch_step"] == said["step"] and doc["per_launch_count"] == int(said["n"].replace(",", ""))
    assert doc["per_launch_count"] < doc["launches"]  # the step's launches, not the window's
    assert fmt_time(doc["gpu_per_launch_us"]) == said["gpu"]
    assert fmt_time(doc["cpu_per_kernel_us"]) == said["cpu"]


@pytest.mark.parametrize(
    ("name", "step", "said"),
    [
        ("h100-bert-small.json.gz", "ProfilerStep#6", "Each of the 61 launches in ProfilerStep#6 buys 5.1 us"),
        ("b300-moe-small.json.gz", None, "Launch calls are not the cost (each takes 5.1 us and buys 6.4 us"),
    ],
)
def test_explain_json_names_the_launch_step_as_data(results, name, step, said):
    """GIVEN the idle-GPU finding, whose note says where its launches ran ("in ProfilerStep#6", nothing without
    steps) WHEN it is written as JSON THEN the step is a name (null: the whole trace), not the note's fragment
    (launch_where was " in ProfilerStep#6"), and the note reads as before."""
    from tui.tables.explain import fields, note

    found = [f for f in analysed(results, name).findings if f.rule == "overhead-gaps"]
    assert len(found) == 1 and said in note(found[0]), note(found[0])
    figures = fields(found[0], [])["figures"]
    assert figures["launch_step"] == step and "launch_where" not in figures
    assert not any(isinstance(v, str) and v.startswith(" ") for v in figures.values())  # no sentence fragments


def nested_parentheses(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth > 1:
            return True
    return False


def cold_start(a: Results) -> tuple[str, dict, str]:
    """The cold-start finding's note, its JSON figures and the overview's reading of the same step."""
    from tui.model.analyses.explain.readings import cold_start_reading
    from tui.tables.explain import fields, note

    found = [f for f in a.findings if f.rule == "cold-start"]
    assert len(found) == 1
    return note(found[0]), fields(found[0], [])["figures"], cold_start_reading(a.summary) or ""


def test_a_cold_start_against_one_other_step_names_that_step(results):
    """GIVEN an H200 capture of two steps, the first cold WHEN explain and the overview measure it THEN they name
    the one other step and its time ("the median of the other steps" was one step's), with no parentheses inside
    parentheses, and the JSON names the step as data."""
    a = analysed(results, "cuda-h200/matmul_add_4096_cold_eager.json.gz")
    said, figures, reading = cold_start(a)
    assert said.startswith(
        "ProfilerStep#2 took 344.6 us until its CPU span (205.8 us) and its GPU work (198.4 us busy) both ended: "
        "1.8x the typical step, ProfilerStep#3's 195.5 us. It is a cold start: "
    ), said
    assert "median" not in said and not nested_parentheses(said)
    second = a.summary.steps[1]
    assert (figures["others"], figures["other_step"]) == (1, second.name)
    assert figures["typical"]["value"] == second.elapsed_us
    assert "_typical_said" not in figures  # words, not data
    assert "1.8x the typical step, ProfilerStep#3's 195.5 us; a cold start" in reading and "median" not in reading


@pytest.mark.parametrize(
    ("steps", "said"),
    [
        ((600, 100, 98), "6.1x the typical step, the mean of the other 2 steps (99.0 us)"),
        ((600, 100, 102, 98), "6.0x the typical step, the median of the other 3 steps (100.0 us)"),
        ((2400, 100, 102, 98), "24.0x the typical step, the median of the other 3 steps (0.10 ms)"),
    ],
)
def test_a_cold_start_says_what_its_typical_step_is_in_the_unit_of_the_first(tmp_path, steps, said):
    """GIVEN CPU steps whose first is cold WHEN explain measures it THEN the typical step is said as what it is
    (the mean of two others, the median of more) in the unit the first step's time is said in."""
    from conftest import X, write_trace

    events, ts = [], 0.0
    for n, dur in enumerate(steps, 1):
        events += [X(f"ProfilerStep#{n}", ts, dur, cat="user_annotation"), X("aten::mm", ts + 1, dur - 2)]
        ts += dur
    a = Results(load_trace(write_trace(tmp_path / "cold.json", events), use_cache=False))
    note, figures, reading = cold_start(a)
    assert said in note and said in reading and figures["other_step"] is None, note
    assert not nested_parentheses(note) and not nested_parentheses(reading)
