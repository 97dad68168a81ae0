"""Steps as the GPU sees them: the device work each step launched, when it ended, and the step as the user waits.

On the 4096 matmul_add the steps' CPU spans read 341, 87 and 41 us while each step's kernels run 2.18 ms on
the GPU; the typical step and the cold-step rule read the step as the user waits for it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import SAMPLES, SHARED
from matmul_add import LARGE, SMALL, matmul_add

from tui.cli import main
from tui.model.analyses.diff import diff
from tui.model.analyses.results import Results
from tui.model.load import load_trace
from tui.model.steps import cold_first
from tui.tables import diff as D
from tui.tables import summary as S

# Inference captures: every launch inside a step comes from the step's own thread, on one stream at a time,
# so the steps' device work adds up to torch's ProfilerStep* CUDA total exactly.
ONE_THREAD = [
    SAMPLES / "h100-bert-small.json.gz",
    SHARED / "tracelens-2025-07-h100-qwen1.5-0.5b" / "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    SHARED / "tracelens-2025-07-mi300vf-bert-small" / "gaunernst_bert-small-uncased__1016001.json.gz",
]


def _torch_step_total(a: Results) -> float:
    return next(r.device_total_us for r in a.ops.rows if r.name == "ProfilerStep*" and not r.is_device)


def test_the_4096_run_steps_read_their_gpu_work_not_only_their_cpu_spans(tmp_path):
    a = Results(load_trace(matmul_add(tmp_path, LARGE), use_cache=False))
    steps = a.summary.steps
    assert [st.dur_us for st in steps] == [341.0, 87.0, 41.0]
    assert [st.device_us for st in steps] == pytest.approx([2181.0, 2182.0, 2183.0])
    assert [st.launches for st in steps] == [2, 2, 2]
    # the GPU runs one step's kernels after the last's: each step ends when its own kernels do
    assert [st.end_us - st.start_us for st in steps] == pytest.approx([2193.0, 4026.0, 6113.0])
    assert [st.elapsed_us for st in steps] == pytest.approx([2193.0, 2184.0, 2184.0])
    assert sum(st.device_us for st in steps) == pytest.approx(_torch_step_total(a)) == pytest.approx(6546.0)


def test_work_queued_before_a_step_does_not_count_as_the_steps_own(tmp_path):
    """The warm-up's kernel still runs 2.5 ms into the window: the first step's kernels wait behind it."""
    a = Results(load_trace(matmul_add(tmp_path, LARGE, leftover_ns=2_500_000), use_cache=False))
    first = a.summary.steps[0]
    assert first.end_us - first.start_us == pytest.approx(4674.0)  # from 10 us: the warm-up's work, then its own
    # its CPU span (341 us), then its own kernels from the leftover's end (2501 us) to theirs (4684 us): the wait
    # after its CPU span, for the warm-up's work alone, is not the step's
    assert first.elapsed_us == pytest.approx(341.0 + 2183.0)
    assert first.queued_us == pytest.approx(2491.0)  # the device ran the warm-up's work from its start (10 us)
    (tmp_path / "64").mkdir()
    small = Results(load_trace(matmul_add(tmp_path / "64", SMALL, leftover_ns=50_000), use_cache=False))
    assert small.summary.steps[0].elapsed_us == 90.0  # the CPU span, longer than its late kernels


QWEN = SHARED / "tracelens-2025-07-h100-qwen1.5-0.5b" / "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"


@pytest.mark.skipif(not QWEN.exists(), reason="the shared Qwen trace is not present here")
def test_a_step_whose_cpu_span_waits_for_the_queue_ahead_counts_that_wait_as_its_path_does(capsys):
    """GIVEN the Qwen H100 step, whose device still runs 14.2 ms of work launched before the profiler started while
    its CPU span (47.15 ms, a synchronize in it waiting for that work) runs WHEN its elapsed time is read THEN it
    runs from its start to the end of its device work (49.38 ms), as its critical path's window does, and the
    summary says why its GPU busy (only what it launched) is smaller than the path's GPU compute."""
    a = Results(load_trace(QWEN))
    (st,) = a.summary.steps
    assert st.dur_us == pytest.approx(47151.395)
    assert st.elapsed_us == pytest.approx(st.end_us - st.start_us) == pytest.approx(49378.903)
    assert st.queued_us == pytest.approx(14195.541)
    assert a.summary.path.length_us == pytest.approx(st.elapsed_us, abs=1e-3)
    assert "49.38 ms) is 88% GPU compute" in a.summary.reason and "elapsed)" not in a.summary.reason
    assert main(["summary", str(QWEN)]) == 0
    assert "Queued ahead: ProfilerStep#6 for its first 14.196ms" in capsys.readouterr().out


def test_the_typical_step_and_the_cold_rule_read_the_step_as_the_user_waits(tmp_path):
    a = Results(load_trace(matmul_add(tmp_path, LARGE), use_cache=False))
    # by CPU span alone the first step (341 us) is 5.8x the others (64 us) and would be called cold
    assert cold_first([st.dur_us for st in a.summary.steps]) is not None
    assert cold_first([st.elapsed_us for st in a.summary.steps]) is None
    assert not any(f.rule == "cold-start" for f in a.findings)
    (tmp_path / "64").mkdir()
    small = Results(load_trace(matmul_add(tmp_path / "64", SMALL), use_cache=False))
    assert [st.elapsed_us for st in small.summary.steps] == [90.0, 90.0, 90.0]  # the CPU span covers the GPU work


@pytest.mark.parametrize("path", ONE_THREAD, ids=lambda p: p.parent.name if p.parent != SAMPLES else p.name)
def test_summed_over_the_steps_device_work_is_torchs_step_cuda_total(path):
    if not path.exists():
        pytest.skip(f"{path} is not present here")
    a = Results(load_trace(path))
    assert a.summary.steps
    assert sum(st.device_us for st in a.summary.steps) == pytest.approx(_torch_step_total(a), abs=1e-3)


def test_a_training_step_counts_the_backward_threads_work_that_torchs_step_row_leaves_out():
    """torch nests ops per thread: ProfilerStep* holds only its own thread's launches. The user waits for the
    autograd thread's backward too, so a step's device work counts every launch inside its span."""
    a = Results(load_trace(SAMPLES / "a100-ddp-nccl.json.gz"))
    steps = a.summary.steps
    assert sum(st.device_us for st in steps) > 3 * _torch_step_total(a)
    assert sum(st.device_us for st in steps) == pytest.approx(a.summary.gpu_busy_us, rel=1e-6)
    assert all(st.end_us >= st.start_us + st.dur_us for st in steps)


def test_summary_json_and_text_show_the_gpu_work_beside_the_cpu_span(tmp_path, capsys):
    path = matmul_add(tmp_path, LARGE)
    assert main(["summary", str(path), "--format", "json", "--no-cache"]) == 0
    first = json.loads(capsys.readouterr().out)["steps"][0]
    assert first == {
        "name": "ProfilerStep#2",
        "dur_us": 341.0,
        "start_us": 9.0,
        "device_us": 2181.0,
        "end_us": 2202.0,
        "elapsed_us": 2193.0,
        "queued_us": 0.0,
        "launches": 2,
        "rank": 0,
    }
    assert main(["summary", str(path), "--no-cache"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()]
    assert ["Step", "CPU", "span", "GPU", "busy", "Elapsed"] in rows
    assert ["ProfilerStep#3", "87.000us", "2.182ms", "2.184ms"] in rows


def test_a_cpu_only_trace_keeps_one_duration_per_step():
    s = Results(load_trace(SAMPLES / "cpu" / "matmul_add_64_warm_eager.json.gz")).summary
    assert S.step_heads(s) == ["Step", "Duration"]
    assert all(st.device_us == 0 and st.elapsed_us == st.dur_us for st in s.steps)


def test_diff_compares_the_steps_as_the_user_waits(tmp_path):
    a = Results(load_trace(matmul_add(tmp_path, SMALL), use_cache=False))
    (tmp_path / "b").mkdir()
    b = Results(load_trace(matmul_add(tmp_path / "b", LARGE), use_cache=False))
    d = diff(a, b)
    assert d.step_time_a == 90.0 and d.step_time_b == 2184.0  # medians of the elapsed steps
    row = D.step_rows(d.steps_a, d.steps_b)[1]
    assert row == ["ProfilerStep#3", "90.000us", "87.000us", "2.810us", "2.182ms", "90.000us", "2.184ms", "2", "2"]
    assert D.STEP_HEADS[5:7] == ["Elapsed A", "Elapsed B"]


def test_the_steps_command_the_api_and_sql_give_the_same_rows(capsys):
    """`tracetui steps` prints the SQL steps table's rows (and the API returns them), in every format."""
    import tracetui

    trace = SAMPLES / "a100-ddp-nccl.json.gz"
    assert main(["steps", str(trace), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["steps"]
    assert rows == tracetui.load(trace).steps()
    assert [r["name"] for r in rows] == sorted((r["name"] for r in rows), key=lambda n: int(n.split("#")[1]))
    assert all(r["elapsed_us"] >= r["dur_us"] - 1e-6 and r["launches"] > 0 for r in rows)
    sql = tracetui.load(trace).sql("SELECT name, elapsed_us FROM steps ORDER BY rank, number")
    assert [(r["name"], r["elapsed_us"]) for r in rows] == [(r["name"], r["elapsed_us"]) for r in sql["rows"]]
    assert main(["steps", str(trace)]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].split() == [
        "Step",
        "Start",
        "CPU",
        "span",
        "GPU",
        "busy",
        "Ended",
        "Elapsed",
        "Launches",
    ]
    assert sum(line.startswith("ProfilerStep#") for line in text.splitlines()) == len(rows)
    assert main(["steps", str(SAMPLES / "cpu-only-gloo.json.gz"), "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("id,name,number,rank,start_us,")


@pytest.mark.parametrize("name", ["h100-bert-small.json.gz", "a100-ddp-nccl.json.gz"])
def test_the_summary_and_the_steps_command_count_step_times_from_one_origin(name, capsys):
    """Every time shown counts from the trace's first event (Python frames included): the summary's steps read
    as the steps command's, SQL's and the API's (the summary counted from the first non-frame event)."""
    assert main(["summary", str(SAMPLES / name), "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)["steps"]
    assert main(["steps", str(SAMPLES / name), "--format", "json"]) == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert [(s["name"], s["start_us"], s["end_us"]) for s in summary] == [
        (s["name"], s["start_us"], s["end_us"]) for s in steps
    ]


@pytest.mark.parametrize("spread", [50, 2**58])  # the second cannot be laid end to end in 64 bits
def test_the_union_of_many_steps_at_once_is_each_steps_union(spread):
    """_union_lengths lays the steps' intervals end to end: each step's covered time is its own union (overlaps,
    nesting and touching intervals counted once), as one step at a time, on 300 random steps."""
    import numpy as np

    from tui.model.steps import _union_length, _union_lengths

    rng = np.random.default_rng(7)
    sizes = rng.integers(0, 6, 300)
    seg = np.repeat(np.arange(300), sizes)
    starts = rng.integers(0, spread, len(seg)) + 1_000_000_000_000_000_000
    ends = starts + rng.integers(0, 20, len(seg))
    got = _union_lengths(seg, starts, ends, 300)
    want = [_union_length(starts[seg == g], ends[seg == g]) if sizes[g] else 0 for g in range(300)]
    assert got.tolist() == want and got.sum() > 0


def test_a_step_that_launched_nothing_is_no_typical_step():
    """GIVEN the MI250 sample (ProfilerStep#1 launches 16 kernels and copies in 9.29 ms; ProfilerStep#2, 49 us,
    launches nothing: the profiler closed it around no work) WHEN the typical step is chosen THEN it is
    ProfilerStep#1, #2 is left out as empty (said so), the verdict reads #1's path, and #1 is no cold start
    measured against the empty step."""
    a = Results(load_trace(SAMPLES / "mi250-rocm-train.json.gz", use_cache=False))
    s = a.summary
    assert [(st.name, st.launches) for st in s.steps] == [("ProfilerStep#1", 16), ("ProfilerStep#2", 0)]
    t = s.typical
    assert t.step is not None and t.step.name == "ProfilerStep#1" and t.of == 1
    assert t.left_out == t.empty == ("ProfilerStep#2",)
    assert s.path.window == "ProfilerStep#1"
    assert not [f for f in a.findings if f.rule == "cold-start"]


def test_every_step_is_kept_when_none_launched():
    """GIVEN a CPU-only capture (no step launches device work) THEN no step is left out as empty."""
    a = Results(load_trace(SAMPLES / "cpu" / "matmul_add_512_warm_eager.json.gz", use_cache=False))
    assert a.summary.steps and not a.summary.typical.empty


def test_a_jobs_typical_step_is_its_first_ranks_and_its_json_rows_carry_their_rank(capsys):
    """GIVEN the 2-rank HTA folder (rank 0: 607.31 and 622.93 ms; rank 1: 607.90 and 630.64 ms) WHEN the summary
    reads its typical step THEN it is rank 0's, the step whose path the verdict reads (it was the mean of 607.90 ms,
    rank 1's, and 622.93 ms, rank 0's, beside rank 0's path), and each JSON step row says its rank."""
    a = Results(load_trace(SAMPLES / "hta-2rank"))
    t = a.summary.typical
    assert t.step is not None and t.step.rank == 0 and t.step is a.typical and t.of == 2
    assert t.us == t.step.elapsed_us == pytest.approx(a.summary.path.length_us, abs=1e-3)
    assert main(["summary", str(SAMPLES / "hta-2rank"), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["steps"]
    assert sorted((r["rank"], r["name"]) for r in rows) == [
        (0, "ProfilerStep#551"),
        (0, "ProfilerStep#552"),
        (1, "ProfilerStep#551"),
        (1, "ProfilerStep#552"),
    ]


def test_percentile_is_numpys_to_the_float():
    """steps.percentile gives np.percentile's default to the last bit, on integers and floats, ties and spreads."""
    from tui.model.steps import percentile

    rng = np.random.default_rng(7)
    for n in [1, 2, 3, 9, 10, 11, 57, 200]:
        for values in (rng.integers(0, 10**9, n), rng.random(n) * 1e6, rng.integers(0, 3, n), rng.lognormal(8, 2, n)):
            ordered = sorted(values.tolist())
            for q in (0, 10, 25, 50, 90, 99.5, 100):
                assert percentile(ordered, q) == float(np.percentile(values, q)), (n, q)
