"""The Python API (import tracetui): every method returns what --format json prints, on every sample and shared trace."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import golden
import numpy as np
import pytest
from conftest import SAMPLES, X, write_trace

import tracetui
from tui.cli import main

BERT = SAMPLES / "h100-bert-small.json.gz"
# golden command -> the API call that returns its JSON
CALLS = {
    "summary-json": lambda t: t.summary(),
    "ops-json": lambda t: t.ops(),
    "ops-shapes-json": lambda t: t.ops(group_by_shape=True),
    "kernels-json": lambda t: t.kernels(),
    "explain-json": lambda t: t.explain(),
    "code-json": lambda t: t.code(all_frames=True),
    "memory-json": lambda t: t.memory(),
    "roofline-json": lambda t: t.roofline(),
    "breakdown-json": lambda t: t.breakdown(by="stream"),
}


def _placed(doc: object, places: dict[str, str]) -> object:
    """The document with the paths the goldens write as placeholders replaced, as the goldens hold it."""
    text = json.dumps(doc)
    for path, placeholder in places.items():
        text = text.replace(path, placeholder)
    return json.loads(text)


def _golden(text: str) -> tuple[int, list[str], str]:
    """A golden file: its exit code, its stderr lines, its stdout."""
    head, _, out = text.partition("---\n")
    code, *err = head.splitlines()
    return int(code.split()[1]), err, out


@pytest.mark.parametrize("tid", sorted(t for t in golden.traces() if golden.load_golden(t)))
def test_every_method_returns_the_clis_json(tid):
    """GIVEN a trace with goldens (the CLI's output, pinned by test_golden) WHEN each method is called THEN it
    returns the JSON the CLI prints as data, says what the CLI says on stderr, and fails with the CLI's line."""
    path = golden.traces()[tid]
    places = {str(path): "<TRACE>", f"{path.parent}/": "<FOLDER>/"}
    t: tracetui.Trace | tracetui.Snapshot = (
        tracetui.load(path) if not golden.is_snapshot(path) else tracetui.snapshot(path)
    )
    # a folder of captures: the CLI's JSON says which capture it read (capture, other_captures), not stderr
    notices = (
        t.notes
        if isinstance(t, tracetui.Snapshot)
        else [n for n in t._opened.notices if not (t.capture and " captures; this is the newest" in str(n))]
    )
    told = [str(_placed(f"tracetui: {n}", places)) for n in notices]
    for cid, text in golden.load_golden(tid).items():
        if cid not in CALLS:
            continue
        code, err, out = _golden(text)
        if code == 0:
            assert _placed(CALLS[cid](t), places) == json.loads(out), f"{tid} {cid}"
            assert told == err, f"{tid} {cid}: what loading told"
            continue
        with pytest.raises((tracetui.TraceError, tracetui.UsageError)) as caught:
            CALLS[cid](t)
        assert err[-1] == _placed(f"tracetui: error: {caught.value}", places)


@pytest.mark.parametrize("pair", sorted(golden.PAIRS))
def test_diff_returns_the_clis_json(pair):
    a, b = (str(SAMPLES / p) for p in golden.PAIRS[pair])
    code, _, out = _golden(golden.load_golden(pair)["json"])
    doc = tracetui.diff(a, b, cache=False)
    assert code == 0 and _placed(doc, {a: "<A>", b: "<B>"}) == json.loads(out)
    if not golden.is_snapshot(Path(a)):
        assert tracetui.diff(tracetui.load(a), b) == doc  # a loaded Trace or a path, the same


def test_ranks_returns_the_clis_json():
    folder = SAMPLES / "hta-2rank"
    code, _, out = _golden(golden.load_golden("samples/hta-2rank")["ranks-json"])
    assert code == 0 and _placed(tracetui.ranks(folder, workers=1), {str(folder): "<TRACE>"}) == json.loads(out)


def test_import_is_lazy_and_cheap():
    """import tracetui loads neither numpy nor the model: the first call does."""
    probe = "import sys, tracetui; print(','.join(m for m in ('numpy', 'tui.model', 'duckdb') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
    assert tracetui.load.__module__ == "tracetui._trace" and "load" in dir(tracetui)
    with pytest.raises(AttributeError):
        tracetui.nothing_here  # noqa: B018


def test_warnings_and_notes_are_data(tmp_path, capsys):
    """A truncated trace: the warning the CLI prints is on the trace, in the same words."""
    whole = json.dumps({"traceEvents": [X("aten::mm", 0, 10), X("aten::add", 20, 10), X("aten::relu", 40, 5)]})
    cut = tmp_path / "cut.json"
    cut.write_text(whole[: whole.rindex("aten::relu") - 20])
    t = tracetui.load(cut)
    assert main(["summary", str(cut), "--format", "json"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert t.warnings and [f"tracetui: warning: {w}" for w in t.warnings] == err
    assert "truncated" in t.warnings[0] and t.notes == []


def test_a_folder_of_captures_opens_its_newest(tmp_path, capsys):
    """As the CLI: the newest capture, its JSON naming it and the others; the note says which was opened."""
    folder = tmp_path / "runs"
    folder.mkdir()
    for k, name in enumerate(["linear_fwd", "matmul_add_64_warm_eager"]):
        shutil.copy(SAMPLES / "cpu" / f"{name}.json.gz", folder / f"host_1.{1_700_000_000_000 + k}.pt.trace.json.gz")
    t = tracetui.load(folder)
    assert main(["kernels", str(folder), "--format", "json"]) == 0
    assert t.kernels() == json.loads(capsys.readouterr().out)
    assert t.capture and t.capture.endswith("1700000000001.pt.trace.json.gz")
    assert t.summary()["other_captures"] == [str(folder / "host_1.1700000000000.pt.trace.json.gz")]
    assert "is a folder of 2 captures" in t.notes[0]
    assert tracetui.diff(folder)["b"] == t.capture  # the newest two, B the newer


def test_events_filter_page_and_carry_the_sql_ids():
    t = tracetui.load(BERT)
    kernels = t.events(cat="kernel", limit=0)
    assert len(kernels) == 60 and all(e["kind"] == "kernel" for e in kernels)
    assert [e["ts_us"] for e in kernels] == sorted(e["ts_us"] for e in kernels)
    gemm = t.events(name="GEMM", cat="kernel", limit=0)  # case-insensitive, anywhere in the name
    assert gemm and all("gemm" in e["name"].lower() for e in gemm) and len(gemm) < len(kernels)
    assert t.events(cat="kernel", limit=5, offset=5) == kernels[5:10]
    assert t.events(cat="KERNEL", limit=0) == kernels and t.events(cat="cuda_driver", limit=0)
    first = kernels[0]
    window = t.events(start_us=first["ts_us"], end_us=first["ts_us"] + first["dur_us"], limit=0)
    assert first in window and all(e["ts_us"] <= first["ts_us"] + first["dur_us"] for e in window)
    rows = t.sql(f"SELECT * FROM events WHERE id IN ({', '.join(str(e['id']) for e in gemm)}) ORDER BY ts_us, id")
    assert rows["rows"] == gemm  # the same rows, the same ids, as SQL


def test_event_walks_from_a_kernel_to_its_launch_and_back():
    t = tracetui.load(BERT)
    kernel = t.events(name="gemm", cat="kernel", limit=1)[0]
    doc = t.event(kernel["id"])
    assert {k: doc[k] for k in kernel} == kernel
    launch = t.event(doc["launch"]["id"])
    assert launch["kind"] == "runtime" and kernel["id"] in [k["id"] for k in launch["kernels"]]
    assert doc["launch"]["latency_us"] == pytest.approx(kernel["ts_us"] - launch["ts_us"])
    assert {"kind": "ac2g", "flow_id": kernel["correlation"], "direction": "in", "other_id": launch["id"]} in doc[
        "flows"
    ]
    parents = launch["parents"]
    assert parents[-1]["id"] == launch["parent_id"] and parents[0]["id"] == t.event(parents[0]["id"])["id"]
    assert t.event(parents[0]["id"])["parent_id"] is None  # outermost first: a root
    op = t.event(launch["parent_id"])
    assert launch["id"] in [c["id"] for c in op["children"]] and op["kernels_total"] >= 1


def test_steps_match_the_summary_and_start_their_events():
    t = tracetui.load(SAMPLES / "a100-train-control.json.gz")
    steps, summary = t.steps(), t.summary()["steps"]
    same = ("name", "dur_us", "device_us", "elapsed_us", "launches")
    assert [[s[k] for k in same] for s in steps] == [[s[k] for k in same] for s in summary]
    assert all(s["device_us"] > 0 and s["end_us"] >= s["cpu_end_us"] for s in steps)  # a GPU trace: work per step
    for s in steps:
        e = t.event(s["id"])
        assert e["name"] == s["name"] and e["ts_us"] == s["start_us"] and e["step"] == s["number"]


def test_to_pandas_and_to_arrow():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    t = tracetui.load(BERT)
    ops = t.ops(limit=5)
    frame = tracetui.to_pandas(ops)
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == list(ops["rows"][0])
    assert frame["name"].tolist() == [r["name"] for r in ops["rows"]]
    assert tracetui.to_arrow(t.events(cat="kernel", limit=3)).num_rows == 3
    assert tracetui.to_pandas(t.memory())["device"].tolist() == [d["device"] for d in t.memory()["devices"]]
    d = tracetui.diff(BERT, BERT)
    assert len(tracetui.to_pandas(d, key="kernels")) == len(d["kernels"])
    with pytest.raises(KeyError, match="key="):
        tracetui.to_pandas(d)


def test_to_pandas_without_pandas_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        tracetui.to_pandas([{"a": 1}])


def test_bad_input_is_one_clear_error(tmp_path, capsys):
    """A missing trace, a bad regex, an id that does not exist, a bad query, a bad sort: one line each."""
    missing = tmp_path / "nope.json"
    with pytest.raises(tracetui.TraceError) as caught:
        tracetui.load(missing)
    assert main(["summary", str(missing)]) == 2
    assert capsys.readouterr().err == f"tracetui: error: {caught.value}\n"
    t = tracetui.load(BERT)
    cases = [
        (lambda: t.events(name="(unclosed"), "bad regular expression '(unclosed': missing ), unterminated subpattern"),
        (lambda: t.event(10**9), "no event with id 1000000000: this trace's ids are 0 to 2,059"),
        (lambda: t.event(-1), "no event with id -1"),
        (lambda: t.sql("SELEC 1"), 'Parser Error: syntax error at or near "SELEC"'),
        (lambda: t.events(start_us=10, end_us=5), "the window ends (5 us) before it starts (10 us)"),
        (lambda: t.ops(sort="fastest"), "unknown sort key 'fastest'"),
        (lambda: t.ops(limit=-1), "limit must be 0 or more, got -1 (0: all)"),
        (lambda: t.events(offset=-2), "offset must be 0 or more, got -2"),
        (lambda: t.roofline(gpu="no such gpu"), "no such gpu"),
        (lambda: tracetui.ranks(SAMPLES / "cpu"), "not a job of ranks"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError) as caught:
            call()
        assert message in str(caught.value) and "\n" not in str(caught.value)


def test_events_on_an_inline_trace_name_step_parent_and_launch(tmp_path):
    """Ids are indices in load order; a kernel's step is its launcher's, though it runs after the step ends."""
    events = [
        X("ProfilerStep#3", 0, 100, cat="user_annotation"),
        X("aten::mm", 10, 50),
        X("cudaLaunchKernel", 20, 10, cat="cuda_runtime", correlation=7),
        X("gemm_kernel", 150, 30, cat="kernel", pid=0, tid=7, correlation=7, device=0, stream=7),
    ]
    t = tracetui.load(write_trace(tmp_path / "t.json", events))
    rows = {e["name"]: e for e in t.events(limit=0)}
    assert rows["gemm_kernel"]["step"] == 3 and rows["aten::mm"]["step"] == 3
    assert rows["cudaLaunchKernel"]["parent_id"] == rows["aten::mm"]["id"] and rows["aten::mm"]["depth"] == 1
    assert (rows["gemm_kernel"]["device"], rows["gemm_kernel"]["stream"], rows["aten::mm"]["stream"]) == (0, 7, None)
    assert t.event(rows["aten::mm"]["id"])["kernels"][0]["id"] == rows["gemm_kernel"]["id"]
    ids = np.array([e["id"] for e in t.events(limit=0)])
    assert sorted(ids.tolist()) == list(range(4))


def test_critical_returns_the_clis_json_and_its_ids_are_event_ids(capsys):
    t = tracetui.load(BERT)
    doc = t.critical()
    assert main(["critical", str(BERT), "--format", "json"]) == 0
    assert doc == json.loads(capsys.readouterr().out)
    events = [item for item in doc["path"] if item["id"] is not None and item["id"] >= 0]
    assert events and all(t.event(item["id"])["name"] == item["name"] for item in events)
