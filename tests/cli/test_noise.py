"""Noise said as noise: each capture's step-to-step spread, and diff, watch and --fail-if-slower judging a change by it.

tests/data/noise holds real CPU captures (capture.py says how): same/, three captures of one unchanged loop on a
loaded 2-core machine (steps from 14 to 45 ms); slower/, one capture of the loop, then one of it doing 30% more
work per step (13 matmuls, not 10). tests/data/tb-repeat2: two steps a capture.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from tui.cli import main
from tui.model.analyses.diff import diff
from tui.model.analyses.results import Results
from tui.model.load import load_trace
from tui.model.steps import Step, spread, typical_step
from tui.model.watch import change, summarize

DATA = Path(__file__).parents[1] / "data"
SAME = sorted((DATA / "noise" / "same").iterdir())
BEFORE, AFTER = sorted((DATA / "noise" / "slower").iterdir())
TB_OLDER, TB_NEWER = sorted((DATA / "tb-repeat2").iterdir())


def results(path: Path) -> Results:
    return Results(load_trace(path, use_cache=False))


def elapsed(path: Path) -> list[float]:
    return [s.elapsed_us for s in results(path).summary.steps]


def test_the_spread_is_half_the_range_of_the_warm_steps_as_a_share_of_the_typical_step():
    times = elapsed(SAME[0])
    t = results(SAME[0]).summary.typical
    assert len(times) == t.of == 5 and t.us == sorted(times)[2]
    assert t.spread == pytest.approx((max(times) - min(times)) / 2 / t.us)
    assert t.device_spread is None  # CPU only: no GPU busy per step to spread
    assert not t.uncertain


def test_of_ten_steps_or_more_one_hitch_does_not_widen_the_spread():
    steady = [100.0] * 9 + [101.0]
    assert spread(steady + [400.0], 100.0) == pytest.approx(spread(steady, 100.0), abs=0.02)
    assert spread([100.0], 100.0) is None and spread([1.0, 2.0], 0.0) is None


def test_a_typical_step_of_two_steps_is_the_faster_both_said_and_uncertain(capsys):
    times = elapsed(TB_NEWER)
    t = results(TB_NEWER).summary.typical
    assert t.of == 2 and t.us == min(times) and t.uncertain  # a step that ran, not their mean (a time neither took)
    assert main(["steps", str(TB_NEWER)]) == 0
    out = capsys.readouterr().out
    assert (
        "Typical step: 67.536us, the elapsed time of ProfilerStep#7, the faster of 2 steps (the other took 98.014us)"
        in out
    )
    assert "uncertain with 2 steps: profile 3 or more to compare" in out


def test_the_gpu_busy_per_step_has_its_own_spread():
    steps = [Step(f"ProfilerStep#{k}", 10.0, 10.0 * k, device_us=d, elapsed_us=10.0) for k, d in enumerate((8, 6, 7))]
    t = typical_step(steps)
    assert t.spread == 0.0 and t.device_spread == pytest.approx(1 / 7)


@pytest.mark.parametrize("a,b", list(itertools.permutations(SAME, 2)), ids=lambda p: p.name[-22:-14])
def test_three_captures_of_one_run_claim_no_change_and_pass_a_5_percent_gate(a, b, capsys):
    d = diff(results(a), results(b))
    assert d.within_spread and d.gate(5.0)
    assert main(["diff", str(a), str(b), "--fail-if-slower", "5"]) == 0
    out, err = capsys.readouterr()
    assert "within the runs' own spread of ±" in out and ": no change shown" in out and "slower (" not in out
    assert err.count("\n") == 1 and "the runs' own spread of ±" in err and "the gate passes" in err


def test_a_run_made_30_percent_slower_is_claimed_and_fails_the_gate(capsys):
    d = diff(results(BEFORE), results(AFTER))
    assert d.slower_pct > 30 and not d.within_spread and d.spread is not None and d.slower_pct > 100 * d.spread
    assert main(["diff", str(BEFORE), str(AFTER), "--fail-if-slower", "5"]) == 3
    out, err = capsys.readouterr()
    assert ": B is " in out and "x slower (" in out and "beyond the runs' own spread of ±" in out
    assert "slower than A's; limit 5%, the runs' own spread of ±" in err and "the gate fails" in err
    assert main(["diff", str(AFTER), str(BEFORE), "--fail-if-slower", "5"]) == 0  # faster passes
    assert "faster" in capsys.readouterr().out


def test_captures_without_two_steps_say_there_is_no_spread_and_the_gate_is_the_limit(tmp_path, capsys):
    d = diff(results(TB_OLDER), results(TB_OLDER))
    assert results(TB_OLDER).summary.typical.spread is None and d.spread is None
    assert main(["diff", str(TB_OLDER), str(TB_OLDER), "--fail-if-slower", "0"]) == 0
    out, err = capsys.readouterr()
    assert "no step-to-step spread to tell noise by: fewer than 2 steps in each" in out
    assert "no step-to-step spread (fewer than 2 steps in each)" in err


def test_watch_says_a_change_within_the_spread_is_no_change(capsys, monkeypatch):
    monkeypatch.setenv("TRACETUI_COLUMNS", "0")  # lines unwrapped
    rows = [summarize(p, use_cache=False) for p in SAME]
    assert all(r.spread is not None for r in rows)
    assert all(change(a, b).noise for a, b in itertools.pairwise(rows))  # type: ignore[union-attr]
    slow = change(summarize(BEFORE, use_cache=False), summarize(AFTER, use_cache=False))
    assert slow is not None and not slow.noise and slow.pct > 30
    assert main(["watch", str(DATA / "noise" / "same"), "--once", "--format", "json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [d["step_spread_pct"] for d in lines] == [round(100 * r.spread, 1) for r in rows]  # type: ignore[operator]
    assert main(["watch", str(DATA / "noise" / "same"), "--once", "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert out.count("within the runs' own spread of ±") == 2 and "% vs the previous)" not in out


def test_many_commands_in_one_process_format_other_warnings_without_recursion(monkeypatch, capsys):
    """Each command of a process wrapped warnings.formatwarning again: a test worker that had run a thousand
    commands formatted any other warning a thousand calls deep, and died of RecursionError."""
    import sys
    import warnings

    from tui.cli.output import plain_warnings

    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)  # (put back after the test)
    for _ in range(sys.getrecursionlimit() + 10):
        plain_warnings()
    assert warnings.formatwarning("tracetui: said", RuntimeWarning, "f.py", 1) == "tracetui: said\n"
    assert "UserWarning: other" in warnings.formatwarning("other", UserWarning, "f.py", 1, "")
