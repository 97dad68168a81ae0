"""`code` on a real torch capture: a frame already running when the profiler started is named by the line it was
running then (torch's Python tracer records the stack at its start with each frame's current line), so its row says
so instead of passing that line off as the def's."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tui.cli import main

pytest.importorskip("torch", reason="needs torch to capture a run")

# def main() is line 10, prof.step() line 18: the schedule's first step() starts the recording (wait 1, warmup 1)
SCRIPT = """import sys

import torch
from torch.profiler import ProfilerActivity, profile, schedule


def work(x):
    return (x @ x).relu().sum()

def main():
    x = torch.randn(64, 64)
    plan = schedule(wait=1, warmup=1, active=2)
    with profile(activities=[ProfilerActivity.CPU], with_stack=True, schedule=plan) as prof:
        for _ in range(4):
            work(x)
            # the first step() below moves the schedule from wait to warmup: the
            # profiler, and its Python tracer, start inside it
            prof.step()
    prof.export_chrome_trace(sys.argv[1])


if __name__ == "__main__":
    main()
"""


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    folder = tmp_path_factory.mktemp("at_start")
    script, trace = folder / "prof.py", folder / "trace.json"
    script.write_text(SCRIPT)
    lines = SCRIPT.splitlines()
    assert lines[9] == "def main():" and lines[17].strip() == "prof.step()" and lines[6] == "def work(x):"
    subprocess.run([sys.executable, str(script), str(trace)], check=True, cwd=folder, timeout=300)
    return trace


def test_a_frame_running_when_the_profiler_started_is_marked_not_passed_off_as_its_def(capture, capsys):
    names = {e["name"] for e in json.loads(capture.read_text())["traceEvents"] if e.get("cat") == "python_function"}
    # what torch 2.13 wrote: main at its line 18, the step() that started the profiler; work, called inside the
    # window, at its def line 7
    assert {"prof.py(18): main", "prof.py(7): work"} <= names and "prof.py(10): main" not in names
    assert main(["code", str(capture), "--no-cache", "--format", "json"]) == 0
    rows = {r["frame"]: r["function"] for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["prof.py(18): main"] == "main (prof.py:18, running at start)"
    assert rows["prof.py(23): <module>"] == "top level (prof.py:23, running at start)"
    assert rows["prof.py(7): work"] == "work (prof.py:7)"  # called while profiling: its def line, unmarked
    assert main(["code", str(capture), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "main (prof.py:18, running at start)" in out
    assert "running at start: the frame was already running when the profiler started" in out


def test_the_profilers_own_frames_running_at_start_are_marked_with_all_frames(capture, capsys):
    """With library frames shown: torch's step() that started the profiler is marked too, and a torch frame called
    while profiling (the next step()'s) is not."""
    assert main(["code", str(capture), "--no-cache", "--all-frames", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    marked = {r["frame"] for r in rows if r["function"].endswith(", running at start)")}
    steps = [r for r in rows if r["frame"].startswith("torch/profiler/profiler.py(") and r["frame"].endswith(": step")]
    assert any(r["frame"] in marked for r in steps) and any(r["frame"] not in marked for r in steps)
    assert all(not f.startswith("<built-in ") for f in marked)  # C calls have no frame
