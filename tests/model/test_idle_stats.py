"""The idle-interval statistics (`breakdown --idle-stats`) and the spread of each kernel's durations (`kernels`'
std_us, min_us, max_us): by hand on small traces, and equal to HTA 0.5's on the 2-rank job (whole microseconds,
where HTA reads what tracetui reads), from the figures tests/hta_analyses.py recorded."""

from __future__ import annotations

import json
import math
from pathlib import Path

import device_traces as D
import numpy as np
import pytest
from conftest import SAMPLES, write_trace

from tui.cli import main
from tui.model import load_trace
from tui.model.analyses.breakdown import CAUSES, breakdown
from tui.model.analyses.breakdown.intervals import interval_stats
from tui.model.analyses.kernels import kernel_rows
from tui.model.analyses.results import Results

RECORD = json.loads((Path(__file__).parents[1] / "data" / "hta_analyses.json").read_text())["traces"]
HTA = RECORD["hta-2023-trace-filter-2rank"]
TWO_RANKS = SAMPLES / "hta-2rank"  # the shared hta-2023-trace-filter-2rank
US = 1000


def idle_of(path: Path):
    a = Results(load_trace(path, use_cache=False))
    return breakdown(a.trace, a.links.launcher, a.graph_owner).idle


def test_back_to_back_kernels_are_intervals_of_their_gaps(tmp_path):
    """GIVEN three 2 us gaps between queued kernels and a 50 us late one WHEN described THEN between kernels: 3 of
    2 us (std 0), other: 1 of 50 us (no std: one interval)."""
    (idle,) = idle_of(D.back_to_back(tmp_path))
    between, other = idle.stats("kernel"), idle.stats("other")
    assert (between.count, between.mean_ns, between.std_ns, between.max_ns) == (3, 2 * US, 0.0, 2 * US)
    assert (other.count, other.p50_ns, other.std_ns) == (1, 50 * US, None)
    assert idle.stats("host") is None and idle.stats("stream") is None


def test_a_back_to_back_kernel_is_an_interval_of_zero_and_an_overlap_none(tmp_path):
    """GIVEN A [0,10], B queued and starting at 10, C queued and starting at 15 (inside B [10,30]), D at 40 WHEN
    described THEN between kernels holds 0 (B) and 10 (D); C, overlapping B, waited for nothing."""
    events = D.launched("A", 0, 0, 10, 1) + D.launched("B", 1, 10, 20, 2) + D.launched("C", 2, 15, 5, 3)
    events += D.launched("D", 3, 40, 5, 4)
    (idle,) = idle_of(write_trace(tmp_path / "t.json", events))
    between = idle.stats("kernel")
    assert (between.count, between.mean_ns, between.max_ns) == (2, 5 * US, 10 * US)
    assert between.std_ns == pytest.approx(math.sqrt(50) * US)  # sample std of (0, 10): n - 1 in the denominator
    assert idle.gaps == [0, 0, 1, 0]  # the idle-time table still counts gaps that are idle time


def test_quartiles_interpolate_linearly_as_pandas_describe():
    """pandas' describe (HTA) takes numpy's linear quartiles: of 1, 2, 4, 8 the p25 is 1.75 and p75 5."""
    s = interval_stats(np.array([8, 1, 4, 2]))
    assert (s.p25_ns, s.p50_ns, s.p75_ns, s.max_ns, s.mean_ns) == (1.75, 3.0, 5.0, 8.0, 3.75)
    assert s.std_ns == pytest.approx(float(np.std([1, 2, 4, 8], ddof=1)))


def ours_idle_stats(path: Path) -> dict:
    """Per rank, stream and HTA cause (its other is other stream and other together), rounded as HTA rounds."""
    found = {}
    for i in idle_of(path):
        by = {c: np.asarray(v) for c, v in zip(CAUSES, i.intervals, strict=True)}
        kinds = {"host_wait": by["host"], "kernel_wait": by["kernel"], "other": np.r_[by["stream"], by["other"]]}
        for kind, ns in kinds.items():
            s = interval_stats(ns / US)
            if s is not None:
                stream = i.lane.rsplit(" ", 1)[1]
                found[(i.rank, stream, kind)] = {
                    "count": s.count,
                    "mean": round(s.mean_ns, 2),
                    "std": None if s.std_ns is None else round(s.std_ns, 2),
                    "25%": s.p25_ns,
                    "50%": s.p50_ns,
                    "75%": s.p75_ns,
                    "max": s.max_ns,
                }
    return found


def hta_idle_stats() -> dict:
    return {
        (int(rank), stream, kind): {k: (None if k == "std" and math.isnan(v[k]) else v[k]) for k in v if k != "min"}
        for rank, streams in HTA["idle_stats"].items()
        for stream, kinds in streams.items()
        for kind, v in kinds.items()
        if v["count"]  # HTA describes the first activity's missing interval as an empty "other"
    }


def test_the_two_rank_jobs_idle_interval_statistics_equal_htas():
    """Every stream of both ranks, every cause: count, mean, std, quartiles and max as HTA 0.5's."""
    ours, hta = ours_idle_stats(TWO_RANKS), hta_idle_stats()
    assert len(hta) == 25 and ours == hta


def test_the_two_rank_jobs_kernel_spread_equals_htas():
    """Per rank and kernel name (copies and sets too): total, mean, sample std, min and max as HTA's kernel
    breakdown; a kernel that ran once has no std here, 0 in HTA."""
    for rank in (0, 1):
        a = Results(load_trace(TWO_RANKS / f"sampled_rank-{rank}.json.gz", use_cache=False))
        ours = {
            r.name: {"sum": r.total_us, "mean": r.avg_us, "std": r.std_us, "min": r.min_us, "max": r.max_us}
            for r in kernel_rows(a.trace, a.links)
        }
        hta = HTA["kernel_spread"][str(rank)]
        assert len(hta) > 150 and set(ours) == set(hta)
        for name, h in hta.items():
            mine = ours[name]
            assert mine["std"] is not None or h["std"] == 0, name
            assert mine | {"std": mine["std"] or 0.0} == pytest.approx(h, rel=1e-12, abs=1e-9), name


def test_the_kernels_command_shows_the_spread_and_a_lone_kernel_none(tmp_path, capsys):
    """GIVEN K twice (10, 20 us) and L once WHEN listed THEN K's std is 7.071 us, L's is '-' (text) and null (JSON)."""
    events = D.launched("K", 0, 10, 10, 1) + D.launched("K", 1, 30, 20, 2) + D.launched("L", 2, 60, 5, 3)
    path = write_trace(tmp_path / "t.json", events)
    assert main(["kernels", str(path), "--format", "json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["K"]["std_us"] == pytest.approx(math.sqrt(50), abs=1e-3) and rows["L"]["std_us"] is None
    assert (rows["K"]["min_us"], rows["K"]["max_us"]) == (10.0, 20.0)
    assert main(["kernels", str(path), "--sort", "std"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "Std" in lines[0] and lines[2].startswith("K ") and lines[3].startswith("L ") and " - " in lines[3]


def test_the_idle_stats_option_in_every_format(tmp_path, capsys):
    path = D.back_to_back(tmp_path)
    assert main(["breakdown", str(path), "--idle-stats"]) == 0
    text = capsys.readouterr().out
    assert "Idle intervals per stream in the whole trace" in text and "Between kernels" in text
    assert main(["breakdown", str(path), "--idle-stats", "--format", "json"]) == 0
    stats = {r["cause"]: r for r in json.loads(capsys.readouterr().out)["idle_stats"]}
    assert stats["between_kernels"]["count"] == 3 and stats["between_kernels"]["p75_us"] == 2.0
    assert stats["other"]["std_us"] is None
    assert main(["breakdown", str(path), "--idle-stats", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "rank,device,stream,cause,count,mean_us,std_us,p25_us,p50_us,p75_us,max_us" and len(lines) == 3
    assert main(["breakdown", str(path), "--idle-stats", "--format", "md"]) == 0
    assert "| Stream | Cause | Count | Mean | Std |" in capsys.readouterr().out


def test_the_api_and_the_cli_give_the_same_idle_statistics(capsys):
    """GIVEN the 2-rank sample WHEN breakdown runs with idle stats from the API and the CLI THEN one document:
    the API's idle_stats rows are the CLI's JSON rows, and without the flag neither has the key."""
    import tracetui

    path = str(TWO_RANKS)
    assert main(["breakdown", path, "--idle-stats", "--format", "json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    t = tracetui.load(path)
    api = t.breakdown(idle_stats=True)
    assert len(api["idle_stats"]) >= 25 and api["idle_stats"] == cli["idle_stats"]
    assert "idle_stats" not in t.breakdown()
