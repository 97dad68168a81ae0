"""A one-shot command's process ends without Python's teardown once its output is written (tui/process/leave.py):
its exit hooks still run, its output and exit code are whole, and wherever something would miss the teardown (a
profiler reading the process after main(), a thread still running, main() called by another program) the process
exits as Python exits it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT

TRACE = str(ROOT / "sample_traces" / "a100-train-control.json.gz")

# The command as the `tracetui` program runs it, with an exit hook, saying so where main() returns (as a profiler
# that prints its table then would see it).
PROGRAM = """
import atexit, sys, threading
atexit.register(lambda: sys.stderr.write("exit hook\\n"))
how = sys.argv.pop(1)
if how == "profiled":
    sys.setprofile(lambda *a: None)
if how == "thread":
    done = threading.Event()
    threading.Thread(target=done.wait, args=(2.0,)).start()
from tui.cli import main
code = main(None if how != "called" else sys.argv[1:])
sys.stderr.write("main returned\\n")
sys.exit(code)
"""


def _run(how: str, *words: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, how, *words], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_a_report_leaves_without_teardown_its_hooks_run():
    done = _run("program", "summary", TRACE, "--no-cache")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Summary") and done.stdout.endswith("\n")
    assert done.stdout == _run("called", "summary", TRACE, "--no-cache").stdout  # the output whole
    assert "exit hook" in done.stderr
    assert "main returned" not in done.stderr


def test_an_error_keeps_its_exit_code(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("this is not json")
    done = _run("program", "summary", str(bad), "--no-cache")
    assert done.returncode == 2
    assert str(bad) in done.stderr and "Traceback" not in done.stderr
    assert "exit hook" in done.stderr and "main returned" not in done.stderr


@pytest.mark.parametrize("how", ["profiled", "thread", "called"])
def test_the_teardown_stays_where_something_would_miss_it(how):
    done = _run(how, "summary", TRACE, "--no-cache")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Summary")
    assert "exit hook" in done.stderr and "main returned" in done.stderr
