"""The project's own checks, as part of the test run: ruff, ruff format, mypy and the import contracts."""

from __future__ import annotations

import subprocess
import sys
from importlib.util import find_spec

import pytest
from conftest import ROOT


def _run(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), cwd=ROOT, capture_output=True, text=True)


@pytest.mark.skipif(find_spec("ruff") is None, reason="ruff is not installed (pip install -e '.[dev]')")
def test_ruff_is_clean_and_the_code_formatted():
    """Run as `python -m ruff`, so the venv's ruff is used even when its bin/ is not on PATH."""
    check = _run(sys.executable, "-m", "ruff", "check", ".")
    assert check.returncode == 0, check.stdout
    fmt = _run(sys.executable, "-m", "ruff", "format", "--check", ".")
    assert fmt.returncode == 0, fmt.stdout


@pytest.mark.full  # a minute of CPU: CI and pre-commit run it, the fast set does not
def test_mypy_on_tui_tests_and_capture():
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[dev]')")
    proc = _run(sys.executable, "-m", "mypy")
    assert proc.returncode == 0, proc.stdout


def test_import_contracts_hold():
    """The layers and boundaries of pyproject's [tool.importlinter] (the model imports no UI, and so on)."""
    pytest.importorskip("importlinter", reason="import-linter is not installed (pip install -e '.[dev]')")
    proc = _run(
        sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()", "--no-cache"
    )
    assert proc.returncode == 0 and "0 broken" in proc.stdout, proc.stdout
