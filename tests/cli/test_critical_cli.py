"""`tracetui critical`: its JSON document, text and markdown, the window options, and bad usage in one line."""

from __future__ import annotations

import json
import re

import pytest
from conftest import SAMPLES, X, write_trace
from critical_traces import gpu_bound, serial_cpu, sync_middle

from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.critical import CLASSES
from tui.model.analyses.results import Results
from tui.tables.critical import critical_document

BERT = SAMPLES / "h100-bert-small.json.gz"
KINDS = {"cpu_op", "runtime", "kernel", "memcpy", "memset", "sync", "wait"}


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["critical", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def doc(capsys, *args: str) -> dict:
    code, out, err = run(capsys, *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_the_json_document_has_the_issues_keys_and_the_path_covers_the_window(capsys):
    d = doc(capsys, str(BERT))
    assert list(d) == [
        "window",
        "length_us",
        "verdict",
        "breakdown",
        "groups",
        "python_frames_folded",
        "advice",
        "path",
        "notes",
    ]
    assert list(d["window"]) == ["name", "start_us", "end_us"] and d["window"]["name"].startswith("ProfilerStep#")
    assert list(d["breakdown"]) == list(CLASSES)
    assert sum(d["breakdown"].values()) == pytest.approx(d["length_us"], abs=1e-6)
    assert d["length_us"] == pytest.approx(d["window"]["end_us"] - d["window"]["start_us"])
    t = d["window"]["start_us"]
    for item in d["path"]:
        assert list(item) == ["id", "name", "kind", "start_us", "dur_us", "bound_by", "waits_for"]
        assert item["kind"] in KINDS and item["bound_by"] in CLASSES
        assert item["start_us"] == pytest.approx(t, abs=1e-6)
        t = item["start_us"] + item["dur_us"]
    assert t == pytest.approx(d["window"]["end_us"], abs=1e-6)


def test_the_python_entry_point_returns_what_the_json_prints(capsys):
    a = Results(load_trace(BERT))
    assert critical_document(a, step=6) == doc(capsys, str(BERT), "--step", "6")
    assert critical_document(a, what_if=["cpu=2"])["what_if"]["specs"] == ["cpu=2"]


def test_step_annotation_and_instance_choose_the_window(capsys, tmp_path):
    trace = str(sync_middle(tmp_path))
    assert doc(capsys, trace, "--step", "1")["window"]["name"] == "ProfilerStep#1"
    d = doc(capsys, trace, "--annotation", "cudaStream", "--instance", "0")
    assert d["window"] == {"name": "cudaStreamSynchronize", "start_us": 20.0, "end_us": 102.0}
    assert d["breakdown"]["gpu_compute_bound"] == 80  # the call waits for the kernel launched before it


def test_text_shows_bars_the_top_of_the_path_and_advice_with_numbers(capsys, tmp_path):
    code, out, err = run(capsys, str(gpu_bound(tmp_path)))
    assert code == 0, err
    assert out.startswith("Critical path of ProfilerStep#1 (0.0 us to 155.0 us into the trace): 155.0 us\n")
    rows = {line.split("   ")[0]: line.split() for line in out.splitlines()}
    assert rows["GPU compute"][-5:] == ["gpu_compute_bound", "138.0", "us", "89.0%", "█████████████████████▍"]
    assert rows["Launch delays"][-5:] == ["gpu_kernel_launch_overhead", "7.0", "us", "4.5%", "█▏"]
    assert rows["K3"] == ["K3", "kernel", "60.0", "us", "38.7%", "1", "GPU", "compute"]  # one call of K3
    assert (
        "* GPU compute is 89% of the path (138.0 us): faster kernels shorten the step. Most of it: K3, K2, K1." in out
    )


def test_markdown_and_what_if_in_text(capsys, tmp_path):
    code, out, _ = run(capsys, str(gpu_bound(tmp_path)), "--format", "md", "--what-if", "kernel:K3=2")
    assert code == 0
    assert "| Bound by | HTA class | Time | Share |  |" in out
    assert "* K3 2× faster saves 30.0 us of 155.0 us (19%); the path still runs mostly through GPU compute" in out


def test_what_if_json_gives_the_new_length_saving_and_breakdown(capsys, tmp_path):
    d = doc(capsys, str(gpu_bound(tmp_path)), "--what-if", "kernel:K3=2", "--what-if", "kernel:K2=2")
    w = d["what_if"]
    assert (w["specs"], w["matched"]) == (["kernel:K3=2", "kernel:K2=2"], [["K3"], ["K2"]])
    assert (w["length_us"], w["saving_us"], w["bound_by"]) == (105.0, 50.0, "gpu_compute_bound")
    assert sum(w["breakdown"].values()) == pytest.approx(w["length_us"])
    assert w["sentence"].startswith("K3 2× faster and K2 2× faster saves 50.0 us of 155.0 us (32%)")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--what-if", "kernel:nothing=2"], "--what-if 'kernel:nothing=2' matches nothing in ProfilerStep#1"),
        (["--what-if", "kernal:x=2"], "--what-if 'kernal:x=2': start it with one of kernel, op, sync, launch, cpu"),
        (["--step", "9"], ": no ProfilerStep#9; the trace has ProfilerStep#1"),
        (["--annotation", "nope"], ": no span's name holds 'nope'"),
        (["--instance", "1"], "--instance goes with --annotation"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(capsys, tmp_path, args, says):
    trace = gpu_bound(tmp_path) if "kernel:nothing=2" in args else serial_cpu(tmp_path)
    code, out, err = run(capsys, str(trace), *args)
    assert (code, out) == (2, "") and err.count("\n") == 1 and err.startswith("tracetui: error: ") and says in err


def test_step_and_annotation_together_are_a_usage_error(capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_:
        run(capsys, str(serial_cpu(tmp_path)), "--step", "1", "--annotation", "A")
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1 and "not allowed with argument --step" in err


def test_a_bad_spec_is_reported_before_the_trace_is_read(capsys, tmp_path):
    code, _, err = run(capsys, str(tmp_path / "missing.json"), "--what-if", "cpu")
    assert code == 2 and "--what-if 'cpu': say how much faster" in err


def test_a_window_with_no_events_and_an_unreadable_trace_are_one_line(capsys, tmp_path):
    z = write_trace(tmp_path / "z.json", [X("ProfilerStep#1", 0, 0, "user_annotation"), X("a", 5, 1)])
    code, _, err = run(capsys, str(z))
    assert code == 2 and err == f"tracetui: error: {z}: ProfilerStep#1 holds no events (it lasts 0 us)\n"
    bad = tmp_path / "bad.json"
    bad.write_text("{ nope")
    code, _, err = run(capsys, str(bad))
    assert code == 2 and err.count("\n") == 1 and str(bad) in err and bad.read_text() == "{ nope"


def test_the_default_windows_path_is_kept_in_the_cache(monkeypatch):
    Results(load_trace(BERT)).critical  # noqa: B018 - computed and kept
    import tui.model.analyses.results as results

    def fail(*args, **kwargs):
        raise AssertionError("recomputed")

    monkeypatch.setattr(results, "critical_path", fail)
    again = Results(load_trace(BERT))
    assert again.critical.window.startswith("ProfilerStep#")


def _path_rows(out: str) -> list[list[str]]:
    """The rows of the 'On the path' table, split on runs of two or more spaces."""
    import re

    lines = out.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("On the path")) + 2
    rows = []
    for line in lines[start:]:
        if not line.strip() or line.startswith("…"):
            break
        rows.append(re.split(r"\s{2,}", line.strip()))
    return rows


def test_frames_are_their_ops_time_by_default_as_in_the_path_view(capsys, monkeypatch):
    """As the viewer's path view (frames hidden) and the ops table: a with_stack path has no frame rows, the step's
    own row is its hidden Python, and --python-frames lists the frames as the path ran through them."""
    monkeypatch.setenv("TRACETUI_COLUMNS", "0")
    code, out, _ = run(capsys, str(BERT))
    rows = _path_rows(out)
    assert code == 0 and rows[0][:4] == ["ProfilerStep#6 (self: its Python)", "annotation", "2.14 ms", "48.4%"]
    assert all(r[1] != "frame" for r in rows)
    assert "… 33 more (--format json lists the whole path: 3,773 stretches)" in out  # the path view's 43 groups
    assert "Python frames: each one's time is its op's (--python-frames lists them)" in out
    code, out, _ = run(capsys, str(BERT), "--python-frames")
    rows = _path_rows(out)
    assert code == 0 and rows[0][:4] == ["aten::addmm", "op", "562.6 us", "12.7%"]
    assert ["torch/nn/modules/module.py(1743): _call_impl", "frame", "190.7 us", "4.3%", "84", "CPU work"] in rows
    assert "--python-frames lists them" not in out


def _rows_and_advice(out: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The path table's rows as (name, bound by) in the table's order, and the CPU advice's "Most of it" names."""
    lines = out.splitlines()
    head = next(k for k, line in enumerate(lines) if line.startswith("On the path"))
    rows = []
    for line in lines[head + 2 :]:
        if not line.strip() or line.startswith(("…", "Python frames")):
            break
        cells = re.split(r"\s{2,}", line.strip())
        rows.append((cells[0], cells[-1]))
    advice = " ".join(lines[lines.index("Advice:") + 1 :])
    named = re.search(r"Most of it: (.+?)\. ", advice)
    assert named is not None, advice
    return rows, named.group(1).split(", ")


@pytest.mark.parametrize("frames", [False, True])
def test_the_advice_names_the_tables_leading_rows_in_its_grouping(capsys, frames):
    """The advice's "Most of it" is the table's first three CPU rows, word for word: without --python-frames the
    step's own Python (the table's top row) and no frame, which the table folds into its op; with it, the frames."""
    code, out, err = run(capsys, str(BERT), *(["--python-frames"] if frames else []))
    assert code == 0, err
    rows, named = _rows_and_advice(out)
    assert named == [name for name, bound in rows if bound == "CPU work"][:3]
    if frames:
        assert "torch/nn/modules/module.py(1743): _call_impl" in named
        assert not any("(self" in name for name in named)
    else:
        assert named[0] == "ProfilerStep#6 (self: its Python)"
        assert not any(".py(" in name for name in named)


def test_a_long_launch_wait_is_not_read_as_a_cpu_that_cannot_keep_up(capsys):
    """The vLLM piecewise replay (tests/data/vllm_piecewise, its README): the CPU launches from 2.2 ms on, but the
    first device activity, a copy, starts at 151 ms, 149 ms after its call, with launches queued behind it. That
    wait is half the path; the advice says the call was made and names it, never "the CPU cannot keep the GPU fed".
    The B300 replay's one 980.2 us graph-launch wait (the call itself uploading the graph) keeps the usual words."""
    from pathlib import Path

    data = Path(__file__).parents[1] / "data"
    assert main(["critical", str(data / "vllm_piecewise" / "graph_execution.json.gz")]) == 0
    advice = capsys.readouterr().out.split("Advice:")[1]
    line = next(a for a in advice.split("\n* ") if "wait" in a and "launch" in a)
    assert "most of it in 1 wait of over 1 ms: the longest, Memcpy DtoD (Device -> Device), started 149.02 ms" in line
    assert "cannot keep the GPU fed" not in advice
    assert main(["critical", str(next((data / "b300-sglang").glob("*.json.gz")))]) == 0
    out = capsys.readouterr().out
    assert "Kernels wait for their launch for 11% of the path (980.2 us): the CPU cannot keep the GPU fed" in out
    # a long span's name is cut to fit the advice, its "(self: its Python)" kept whole, as the table's row reads
    assert "Most of it: aten::arange, execute_16_context_0(…) (self: its Python), cudaLaunchKernel." in out


def test_a_ranks_cpu_in_collectives_is_not_called_a_wait_on_other_ranks(capsys):
    """On hta-2rank no rank waits for another (the job's line, from collectives matched across ranks), while rank 1's
    own path spends 866.0 us inside its NCCL calls (the `communication` class): its row says so, and the two do not
    read as a contradiction."""
    job = str(SAMPLES / "hta-2rank")
    code, out, err = run(capsys, job)
    assert code == 0, err
    assert "no rank waits for another on its path" in out
    [row] = [line.split() for line in out.splitlines() if line.startswith("CPU in collectives")]
    assert row[3:6] == ["cpu_bound", "866.0", "us"]  # HTA classes the CPU's side of a collective as CPU work
    d = doc(capsys, job)
    assert d["ranks"][1]["breakdown"]["communication"] == 866.0 and not any(d["job"]["held_us"].values())


HEAD = re.compile(r"^Critical path of .* into the trace\): (?P<length>[\d.,]+ (?:s|ms|us))(?: \(rank \d+\))?$", re.M)


@pytest.mark.parametrize(
    "trace",
    ["hta-2rank", "hta-2rank/sampled_rank-0.json.gz", "cpu/attn_sdpa_math.json.gz", "h100-bert-small.json.gz"],
)
def test_the_heads_length_is_the_tables_total_in_its_unit(capsys, trace):
    """The head said the path's length in the unit of where it ends ("0.85 s to 1.46 s into the trace): 0.61 s")
    above a table of ms whose Total said 607.90 ms; it says the Total's figure now, the same value."""
    code, out, err = run(capsys, str(SAMPLES / trace))
    assert code == 0, err
    heads = [m.group("length") for m in HEAD.finditer(out)]
    totals = re.findall(r"^Total: (.+)$", out, re.M)
    assert heads and heads == totals[: len(heads)], out
    if trace.endswith(".gz"):
        from tui.model.words import UNIT_US

        length_us = doc(capsys, str(SAMPLES / trace))["length_us"]
        value, unit = heads[0].split()
        digits = value.split(".")[1] if "." in value else ""
        assert (
            abs(float(value.replace(",", "")) * UNIT_US[unit] - length_us) <= 0.5 * 10 ** -len(digits) * UNIT_US[unit]
        )
