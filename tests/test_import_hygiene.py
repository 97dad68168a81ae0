"""The model imports neither Textual nor torch; the CLI starts without torch."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("code", "banned"),
    [
        ("import tui.model.analyses.results, tui.model.view.navigate, tui.model.load", ("textual", "torch", "rich")),
        ("import tui.cli, tui.reports; tui.cli.build_parser()", ("torch", "textual")),
        ("import profiler_runner.registry, profiler_runner.cli_args", ("torch",)),
    ],
)
def test_modules_do_not_pull_heavy_imports(code, banned):
    probe = f"{code}\nimport sys\nprint(','.join(m for m in {banned!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
