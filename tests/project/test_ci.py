"""CI (.ci/run) runs exactly the test command README.md gives, and that command is the full set."""

from __future__ import annotations

import re

from conftest import ROOT

PYTEST = re.compile(r"python -m pytest[^\n&;|]*")


def test_ci_runs_the_readmes_test_command_and_it_is_the_full_set():
    readme = PYTEST.findall((ROOT / "README.md").read_text())
    ci = PYTEST.findall((ROOT / ".ci" / "run").read_text())
    assert len(ci) == 1 and ci[0] in readme, (ci, readme)
    assert "--full" in ci[0].split() and "-n" in ci[0].split()  # the tests marked full, in parallel (pytest-xdist)
