"""The texts and their JSON say the same figures: summary's launch line, explain's launch step, the cold start
against the other steps, and the what-if's saving as its Before and After print it."""

from __future__ import annotations

import re

import pytest
from conftest import SAMPLES

from tui.model import load_trace
from tui.model.analyses.results import Results
from tui.model.analyses.summary import launch_phrase
from tui.tables import summary as S
from tui.text.fmt import fmt_time

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
        ((600, 100, 98), "6.1x the typical step, the faster of the other 2 steps (ProfilerStep#3, 98.0 us)"),
        (
            (200_000, 35_700, 8_600, 706, 429),  # the mean of the middle two, 4.65 ms, is a time no step took
            "283.3x the typical step, the median of the other 4 steps (ProfilerStep#4, the lower of the middle two, "
            "0.71 ms)",
        ),
        ((600, 100, 102, 98), "6.0x the typical step, the median of the other 3 steps (100.0 us)"),
        ((2400, 100, 102, 98), "24.0x the typical step, the median of the other 3 steps (0.10 ms)"),
    ],
)
def test_a_cold_start_says_what_its_typical_step_is_in_the_unit_of_the_first(tmp_path, steps, said):
    """GIVEN CPU steps whose first is cold WHEN explain measures it THEN the typical step is said as what it is
    (the faster of two others, the median of more: of an even count the lower middle step, named) in the unit the
    first step's time is said in."""
    from conftest import X, write_trace

    events, ts = [], 0.0
    for n, dur in enumerate(steps, 1):
        events += [X(f"ProfilerStep#{n}", ts, dur, cat="user_annotation"), X("aten::mm", ts + 1, dur - 2)]
        ts += dur
    a = Results(load_trace(write_trace(tmp_path / "cold.json", events), use_cache=False))
    note, figures, reading = cold_start(a)
    assert said in note and said in reading and figures["other_step"] is None, note
    assert not nested_parentheses(note) and not nested_parentheses(reading)


UNIT_US = {"s": 1e6, "ms": 1000.0, "us": 1.0}
DURATION = r"([\d,]+\.\d+) (s|ms|us)\b"


def as_us(value: str, unit: str) -> float:
    return float(value.replace(",", "")) * UNIT_US[unit]


@pytest.mark.parametrize(
    "name",
    [
        "cuda-h200/matmul_add_64_warm_eager.json.gz",  # saves 46.5 us of 73.4 us, with Before - After 46.6 us
        "cuda-h200/matmul_add_4096_warm_eager.json.gz",  # costs 0.3 us: 325.2 us instead of 324.9 us
        "cuda-h200/attn_naive.json.gz",
        "h100-bert-small.json.gz",
        "a100-train-control.json.gz",
    ],
)
def test_the_what_if_saving_is_before_minus_after_as_printed_in_one_unit(name, capsys, monkeypatch):
    """GIVEN critical --what-if graphs WHEN it says what the change saves (or costs) THEN the figure is the Before
    total less the After total as the tables print them, in the unit of the duration it is of (unless it would read
    as zero there), and the path's length is said as the verdict below it says it: 0.32 ms was its 324.9 us."""
    from tui.cli import main

    monkeypatch.setenv("TRACETUI_COLUMNS", "0")
    assert main(["critical", str(SAMPLES / name), "--what-if", "graphs"]) == 0
    out = capsys.readouterr().out
    head, verdict = out.splitlines()[:2]
    length = re.search(rf"into the trace\): {DURATION}$", head)
    assert length and f"{length[1]} {length[2]}" in verdict, (head, verdict)
    where = head.rsplit("): ", 1)[0]
    assert len({u for _, u in re.findall(DURATION, where)}) == 1, head  # where it starts and ends: one unit, the end's
    totals = re.findall(rf"^Total: {DURATION}$", out, re.M)
    (before, after) = (as_us(*totals[0]), as_us(*totals[-1]))
    saves = re.search(rf"saves {DURATION} of {DURATION}", out)
    costs = re.search(rf"costs {DURATION}: {DURATION} instead of {DURATION}", out)
    effect = saves or costs
    assert effect, out
    by, by_unit, *_, of, of_unit = effect.groups()
    if costs:  # after instead of before, in the unit the cost is said in: the totals, as the tables print them
        then, then_unit = costs.groups()[2:4]
        assert then_unit == of_unit == by_unit, costs[0]
        printed = 10 ** -len(totals[0][0].split(".")[1]) * UNIT_US[totals[0][1]]  # the totals' last digit
        assert as_us(then, then_unit) == pytest.approx(after, abs=printed), costs[0]
        assert as_us(of, of_unit) == pytest.approx(before, abs=printed), costs[0]
        of, of_unit = totals[0]
    else:
        assert (of, of_unit) == totals[0]
    last = 10 ** -len(of.split(".")[1]) * UNIT_US[of_unit]  # the totals' last digit
    if by_unit == of_unit:  # in the totals' unit: their difference as printed
        decimals = len(by.split(".")[1])
        assert as_us(by, by_unit) == pytest.approx(abs(before - after), abs=0.5 * 10**-decimals * UNIT_US[by_unit])
    else:  # a finer unit, where the totals' unit would leave it under two digits (2.0 us of 1.52 ms): as it is
        assert as_us(by, by_unit) < 0.1 * UNIT_US[of_unit], effect[0]
        assert as_us(by, by_unit) == pytest.approx(abs(before - after), abs=last)


@pytest.mark.parametrize(
    ("before", "after", "said"),
    [
        (73.35, 26.84, ("46.5 us", "73.3 us")),  # 73.3 - 26.8, as printed
        (324.9, 325.2, ("0.3 us", "324.9 us")),
        (1520.0, 912.3, ("0.61 ms", "1.52 ms")),  # 912.3 us is said beside 1.52 ms in its unit
        (6300.0, 6298.7, ("1.3 us", "6.30 ms")),  # too small for ms: said as it is
        (4430.0, 4397.3, ("32.7 us", "4.43 ms")),  # 0.03 ms would lose its digits
        (2.5e6, 1.2e6, ("1.30 s", "2.50 s")),
    ],
)
def test_a_saving_is_said_in_the_unit_of_what_it_is_of(before, after, said):
    from tui.model.words import saving_said

    assert saving_said(before, after) == said


def test_without_steps_the_cpu_work_per_launch_is_the_windows(results):
    """GIVEN a capture with no profiler step (b300-moe-small: its critical path is the whole trace's) WHEN the summary
    and explain say the CPU work per launch THEN it is the window's: they said "of the step's CPU work" of no step."""
    a = analysed(results, "b300-moe-small.json.gz")
    s = a.summary
    assert s.launch_step is None
    line = dict((k, v) for k, _, v in S.lines(s))["cpu_launch_us"]
    assert line.endswith("of the window's CPU work per launch") and "step" not in line, line
    assert "of the window's CPU work (the call itself" in launch_phrase(s), launch_phrase(s)
    with_step = dict((k, v) for k, _, v in S.lines(analysed(results, "h100-bert-small.json.gz").summary))
    assert with_step["cpu_launch_us"].endswith("of the step's CPU work per launch")


def test_the_steps_launches_are_said_with_the_steps_own_call_cost():
    """GIVEN the H200 64x64 warm capture: 4 launch calls in the window (28.8, 7.5, 7.6 and 5.9 us), 2 of them in
    ProfilerStep#3 (7.6 and 5.9 us) WHEN the summary, explain and the overview speak of the step's launches THEN
    the call's cost is those two's (6.7 us), not the window's (12.5 us); the window's line keeps the window's."""
    from tui.model.analyses.explain.readings import launch_reading

    a = Results(load_trace(SAMPLES / "cuda-h200" / "matmul_add_64_warm_eager.json.gz", use_cache=False))
    s = a.summary
    assert s.launch_step == "ProfilerStep#3" and s.per_launch_count == 2
    assert s.call_us == pytest.approx((7.642 + 5.856) / 2) and s.call_median_us == s.call_us
    assert s.typical_launch_us == pytest.approx((28.803 + 7.509 + 7.642 + 5.856) / 4)
    assert "2 launches in ProfilerStep#3" in s.reason and "(the call itself 6.7 us on average)" in s.reason
    assert "A launch call in ProfilerStep#3 takes 6.7 us of CPU (median 6.7 us)" in (launch_reading(s) or "")
    overhead = next(f for f in a.findings if f.rule == "overhead-gaps")
    assert overhead.figures["call_cpu"].value == overhead.figures["median_call"].value == pytest.approx(s.call_us)


def test_two_findings_of_one_op_against_its_roof_are_told_apart_by_their_shapes(results):
    """GIVEN the H200's compiled MLP, whose two GEMM shapes of aten::mm each have a roofline finding WHEN explain
    titles them THEN the titles differ by the shapes: both read "aten::mm against its roof"."""
    titles = [
        f.title for f in analysed(results, "cuda-h200/mlp_fwd_compiled.json.gz").findings if f.rule == "roofline-gemm"
    ]
    assert len(titles) == 2 and len(set(titles)) == 2, titles
    assert all(t.startswith("aten::mm [[") and t.endswith("] against its roof") for t in titles), titles


def test_a_count_of_one_shape_takes_a_verb_of_one(results):
    """GIVEN b300-moe-small, where one GEMM shape runs below both roofs WHEN explain says so THEN the verb agrees
    with the count: "1 GEMM shape ... runs far below", not "run"; of 2 or more, "run"."""
    from tui.tables.explain import note

    def said(name: str) -> str:
        (found,) = [f for f in analysed(results, name).findings if f.rule == "roofline-tiny-gemm"]
        return note(found)

    assert re.search(
        r"\b1 GEMM shape with M <= \d+ \([^)]*\) runs far below both roofs", said("b300-moe-small.json.gz")
    )
    assert re.search(r"\b\d+ GEMM shapes with M <= \d+ \([^)]*\) run far below", said("a100-train-control.json.gz"))


def _one_gemm_trace(path, kernel_us: float):
    """An A100 run of one fp32 addmm of M = 8 (3 calls, 1 MFLOP each), its sgemm kernel kernel_us long (after a
    fresh-eyes run's hand-written trace)."""
    import json

    device = {"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85049802752, "computeMajor": 8,
              "computeMinor": 0, "numSms": 108}  # fmt: skip
    events = []
    for k in range(3):
        t, corr = 1000 * k, 100 + k
        dims = {"Input Dims": [[256], [8, 256], [256, 256], [], []], "Input type": ["float"] * 3 + ["Scalar"] * 2}
        events += [
            {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": t, "dur": 50,
             "args": {"External id": k + 1, **dims}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t + 10, "dur": 8,
             "args": {"External id": k + 1, "correlation": corr}},
            {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_tn", "pid": 0, "tid": 7, "ts": t + 20,
             "dur": kernel_us, "args": {"External id": k + 1, "device": 0, "stream": 7, "correlation": corr}},
        ]  # fmt: skip
    path.write_text(json.dumps({"deviceProperties": [device], "record_shapes": 1, "traceEvents": events}))
    return path


@pytest.mark.parametrize(
    ("kernel_us", "said"),
    [(4.0, "launch overhead and latency bound them"), (200.0, "at 200.0 us a call, launching them is not the cost")],
)
def test_tiny_gemms_blame_their_launches_only_when_their_calls_are_short(tmp_path, kernel_us, said):
    """A fresh-eyes run's case: a GEMM of M = 64 whose kernel ran 200 us was said to be bound by launch overhead
    and latency, beside a launch call of 9 us; the CUDA-graph advice went with it."""
    from tui.tables.explain import note

    results = Results(load_trace(_one_gemm_trace(tmp_path / "gemm.json", kernel_us), use_cache=False))
    (found,) = [f for f in results.findings if f.rule == "roofline-tiny-gemm"]
    text = note(found)
    assert said in text, text
    assert ("CUDA graph" in text) == (kernel_us < 20), text
