"""The headless commands print exactly the golden outputs on every sample and shared trace.

The goldens (tests/data/golden/<trace id>/<command>.txt) were recorded from the code before the
restructure; any change of a number or a layout shows up here as a diff. See tests/golden.py to
regenerate them after an intended change. Goldens of a trace that is absent here (../shared) skip.
"""

from __future__ import annotations

import difflib

import golden
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


def _params() -> list:
    """The traces, those of the shared set only in the full set (--full): the samples' goldens are the fast check."""
    return [pytest.param(t, marks=pytest.mark.full) if t.startswith("shared/") else t for t in _ids()]


@pytest.mark.parametrize("trace", _params())
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


def test_update_writes_only_what_it_ran_and_deletes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(golden, "GOLDEN_DIR", tmp_path)
    absent = tmp_path / "shared" / "not-here.json.gz" / "summary.txt"
    absent.parent.mkdir(parents=True)
    absent.write_text("exit 0\n---\nkept\n")
    key = "samples/cpu/linear_fwd.json.gz :: summary-json"
    assert golden.update([key]) == {"changed": 0, "added": 1, "unchanged": 0}
    written = tmp_path / "samples" / "cpu" / "linear_fwd.json.gz" / "summary-json.txt"
    assert sorted(p for p in tmp_path.rglob("*.txt")) == sorted([absent, written])
    assert load_golden("samples/cpu/linear_fwd.json.gz") == {"summary-json": outputs({key})[key]}
    assert golden.update([key]) == {"changed": 0, "added": 0, "unchanged": 1}
    written.write_text("stale")
    assert golden.update([key]) == {"changed": 1, "added": 0, "unchanged": 0}
    assert absent.read_text() == "exit 0\n---\nkept\n" and "shared/not-here.json.gz" in recorded()


def test_a_trace_without_goldens_fails_with_the_hint_and_an_absent_trace_skips(tmp_path, monkeypatch):
    monkeypatch.setattr(golden, "GOLDEN_DIR", tmp_path)
    with pytest.raises(AssertionError, match=r"no goldens for samples/cpu/linear_fwd.json.gz: regenerate with"):
        test_headless_outputs_match_the_goldens("samples/cpu/linear_fwd.json.gz")
    with pytest.raises(pytest.skip.Exception, match="not present"):
        test_headless_outputs_match_the_goldens("shared/not-here.json.gz")
