"""ruff over everything and mypy over the model, as part of the test run."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from conftest import ROOT


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed (pip install -e '.[dev]')")
def test_ruff_is_clean():
    proc = subprocess.run(["ruff", "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_mypy_on_the_model():
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[dev]')")
    proc = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
