"""The headless commands print exactly the golden outputs on every sample and shared trace.

The goldens (tests/data/golden/<trace id>/<command>.txt) were recorded from the code before the
restructure; any change of a number or a layout shows up here as a diff. See tests/golden.py to
regenerate them after an intended change. Goldens of a trace that is absent here (../shared) skip.
"""

from __future__ import annotations

import difflib

import pytest
from golden import PAIRS, SEP, commands, diff_outputs, load_golden, outputs, recorded, traces

HINT = "regenerate with python tests/golden.py --update"


def _compare(tid: str, got: dict[str, str]) -> None:
    golden = load_golden(tid)
    assert golden, f"no goldens for {tid}: {HINT} {tid!r}"
    for key, text in got.items():
        cid = key.split(SEP)[1]
        assert cid in golden, f"no golden for {key}: {HINT} {key!r}"
        if text != golden[cid]:
            diff = "\n".join(
                difflib.unified_diff(golden[cid].splitlines(), text.splitlines(), "golden", "now", lineterm="")
            )
            pytest.fail(f"{key} changed:\n{diff[:4000]}")


def _ids() -> list[str]:
    """Every trace present and every trace with goldens (those absent here skip)."""
    return sorted((set(traces()) | set(recorded())) - set(PAIRS))


@pytest.mark.parametrize("trace", _ids())
def test_headless_outputs_match_the_goldens(trace):
    """Computed fresh, then read back from the cache (tables, summary and findings as stored): the same bytes."""
    path = traces().get(trace)
    if path is None:
        pytest.skip(f"{trace} is not present here")
    assert load_golden(trace), f"no goldens for {trace}: {HINT} {trace!r}"
    stale = set(load_golden(trace)) - set(commands(path))
    assert not stale, f"goldens of commands no longer run for {trace}: delete {sorted(stale)}"
    keys = {f"{trace}{SEP}{c}" for c in commands(path)}
    _compare(trace, outputs(keys, cache=True))
    _compare(trace, outputs(keys, cache=True))


def test_diff_outputs_match_the_goldens():
    got = diff_outputs()
    for pair in PAIRS:
        _compare(pair, {k: v for k, v in got.items() if k.startswith(pair + SEP)})
