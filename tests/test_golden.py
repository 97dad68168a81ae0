"""The headless commands print exactly the golden outputs on every sample and shared trace.

The goldens (tests/data/golden.json.gz) were recorded from the code before the restructure; any
change of a number or a layout shows up here as a diff. See tests/golden.py to regenerate them
after an intended change.
"""

from __future__ import annotations

import difflib

import pytest
from golden import commands, diff_outputs, load_golden, outputs, traces

GOLDEN = load_golden()


def _compare(got: dict[str, str]) -> None:
    for key, text in got.items():
        assert key in GOLDEN, f"no golden for {key}: regenerate with python tests/golden.py --update"
        if text != GOLDEN[key]:
            diff = "\n".join(
                difflib.unified_diff(GOLDEN[key].splitlines(), text.splitlines(), "golden", "now", lineterm="")
            )
            pytest.fail(f"{key} changed:\n{diff[:4000]}")


@pytest.mark.parametrize("trace", list(traces()))
def test_headless_outputs_match_the_goldens(trace):
    """Computed fresh, then read back from the cache (tables, summary and findings as stored): the same bytes."""
    keys = {f"{trace} :: {c}" for c in commands(traces()[trace])}
    _compare(outputs(keys, cache=True))
    _compare(outputs(keys, cache=True))


def test_diff_outputs_match_the_goldens():
    _compare(diff_outputs())
