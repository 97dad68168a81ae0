"""A cached command imports what it reads: the analyses that computed its values stay unimported (model/lazy.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import SAMPLES

# Each computes values a cached summary or ops table only reads back: the explain rules, the critical path, HTA's
# breakdowns, the roofline, the ranks of a job.
NOT_NEEDED = [
    "tui.model.analyses.explain.rules",
    "tui.model.analyses.critical.path",
    "tui.model.analyses.breakdown",
    "tui.model.analyses.roofline.points",
    "tui.model.analyses.ranks",
]
RUN = """
import contextlib, io, json, sys
from tui.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def _run(argv: list[str], cache) -> dict:
    env = {**os.environ, "TRACETUI_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", RUN, *argv], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("argv", [["summary"], ["ops", "--limit", "0", "--format", "json"]])
def test_a_cached_command_imports_no_analysis_it_only_reads(argv, tmp_path):
    trace = str(SAMPLES / "h100-bert-small.json.gz")
    first = _run([*argv, trace], tmp_path)  # computes and keeps the values: every analysis it needs runs
    assert first["code"] == 0 and set(NOT_NEEDED) & set(first["modules"])
    again = _run([*argv, trace], tmp_path)
    assert again["code"] == 0 and again["out"] == first["out"]
    assert "tui.model.analyses.results" in again["modules"]
    assert set(NOT_NEEDED) & set(again["modules"]) == set()
