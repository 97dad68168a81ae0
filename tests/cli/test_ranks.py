"""A folder of ranks read as one job: `tracetui ranks` (local pool and Dask), rank identity, clocks,
bad ranks, the folder's summary, and the viewer's ranks (overview, go to rank, compare ranks).

Jobs of 4 to 6 ranks are tiled from the two shipped HTA rank files: rank k is a copy of file k % 2
with its distributedInfo renumbered and its clock moved k ms later; a straggler's compute kernels
last three times as long and its NCCL kernels half as long (the others wait for it there).
"""

from __future__ import annotations

import gzip
import io
import json
import re
import statistics
from pathlib import Path

import pytest
from conftest import SAMPLES, wait_for_main
from rich.console import Console

from tui.cli import main
from tui.model.analyses.ranks import STRAGGLER_PCT, collective_name
from tui.model.analyses.results import Results
from tui.model.jobs import rank_summary, run_job
from tui.model.load import cache, load_trace
from tui.model.load.cachedir import has_entry

TWO = SAMPLES / "hta-2rank"
SKEW_US = 1000  # rank k's clock runs k * SKEW_US behind rank 0's


def _doc(k: int) -> dict:
    return json.loads(gzip.decompress((TWO / f"sampled_rank-{k % 2}.json.gz").read_bytes()))


def make_job(folder: Path, n: int, straggler: int | None = None, world: int | None = None, info: bool = True) -> Path:
    """Write n rank files into folder (see the module's docstring)."""
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(n):
        doc = _doc(k)
        if info:
            doc["distributedInfo"] = {**doc["distributedInfo"], "rank": k, "world_size": world or n}
        else:
            doc.pop("distributedInfo", None)
        for e in doc["traceEvents"]:
            if isinstance(e.get("ts"), (int, float)):
                e["ts"] += k * SKEW_US
            if k == straggler and e.get("cat") == "kernel":
                waits = "nccl" in e.get("name", "").lower()  # the others wait for it in the collectives, not it
                e["dur"] = e["dur"] // 2 if waits else e["dur"] * 3
        (folder / f"trace_rank{k}.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))
    return folder


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def ranks_json(capsys, folder: Path, *extra: str) -> dict:
    code, out, err = run_cli(capsys, "ranks", str(folder), "--format", "json", *extra)
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def job4(tmp_path_factory) -> Path:
    return make_job(tmp_path_factory.mktemp("job4"), 4, straggler=2)


def test_ranks_json_has_a_row_per_rank_and_names_the_straggler(capsys, job4):
    doc = ranks_json(capsys, job4, "--no-cache")
    rows, job = doc["ranks"], doc["job"]
    assert [r["rank"] for r in rows] == [0, 1, 2, 3]
    assert [r["file"] for r in rows] == [f"trace_rank{k}.json.gz" for k in range(4)]
    assert [r["straggler"] for r in rows] == [False, False, True, False]
    for r in rows:
        assert r["comm_us"] > 0 and r["compute_us"] > 0
        assert 0 <= r["overlap_us"] <= min(r["comm_us"], r["compute_us"])
        # unions on one device: busy = comm + compute - their overlap
        assert r["gpu_busy_us"] == pytest.approx(r["comm_us"] + r["compute_us"] - r["overlap_us"])
        assert r["idle_us"] == pytest.approx(r["wall_us"] - r["gpu_busy_us"])
        assert r["gpu_utilization"] == pytest.approx(r["gpu_busy_us"] / r["wall_us"])
        assert [s["name"] for s in r["steps"]] == ["ProfilerStep#551", "ProfilerStep#552"]
        # the typical step is the steps' median: of two, their mean (one of two steps is no typical step)
        assert r["step_us"] == pytest.approx(statistics.median_low(s["elapsed_us"] for s in r["steps"]), abs=0.001)
    # the straggler computes longer, and (by the rule) that is what marks it
    others = [r["compute_us"] for r in rows if r["rank"] != 2]
    assert rows[2]["compute_us"] >= (1 + STRAGGLER_PCT / 100) * sorted(others)[1]
    assert job["stragglers"] == [2]
    assert job["verdict"].startswith("rank 2 ")
    assert "ncclSendRecv" in job["verdict"] and job["top_collective"] == "ncclSendRecv"
    assert job["top_collective_us"] == pytest.approx(sum(r["collectives"]["ncclSendRecv"] for r in rows))
    assert job["step_us"]["min"] <= job["step_us"]["median"] <= job["step_us"]["max"]
    assert "straggler" in job["straggler_rule"]


def test_clocks_are_aligned_on_the_first_common_step_and_the_shift_is_reported(capsys, job4):
    job = ranks_json(capsys, job4)["job"]
    assert job["alignment"]["method"] == "ProfilerStep#551"
    shifts = {int(k): v for k, v in job["alignment"]["shifts_us"].items()}
    assert shifts[0] == 0
    # ranks tiled from the same file differ only by the skew we put in
    assert shifts[2] - shifts[0] == pytest.approx(-2 * SKEW_US)
    assert shifts[3] - shifts[1] == pytest.approx(-2 * SKEW_US)
    merged = load_trace(job4, use_cache=False)
    assert merged.job is not None and merged.job["alignment"] == "ProfilerStep#551"
    starts = {}
    for info in merged.ranks:
        assert info["shift_us"] == pytest.approx(shifts[info["rank"]])
    for rank in range(4):
        row = Results(merged).rank_rows[rank]
        starts[rank] = row.step_starts[551]
    assert len(set(starts.values())) == 1  # every rank's first step now starts at the same time


def test_text_report_shows_the_table_the_job_and_the_rule(capsys, job4, monkeypatch):
    monkeypatch.setenv("TRACETUI_COLUMNS", "100")
    code, out, err = run_cli(capsys, "ranks", str(job4))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["File", "Rank", "Typical", "step"]  # Steps: the same on every rank, said below
    assert "The same on every row: Steps 2." in out
    assert re.search(r"trace_rank2\.json\.gz\s+2 .*STRAGGLER$", out, re.M)
    assert sum("STRAGGLER" in line for line in lines) == 1
    assert re.search(r"^Clocks\s+aligned on ProfilerStep#551: rank 1 ", out, re.M)
    assert "Straggler rule: a rank is a straggler when" in out
    assert all(len(line) <= 100 for line in lines[lines.index("") :]), "the job lines wrap to the width"


def test_csv_and_md(capsys, job4):
    code, out, _ = run_cli(capsys, "ranks", str(job4), "--format", "csv")
    assert code == 0
    head, *rows = out.splitlines()
    assert head.startswith("rank,file,wall_us,step_us,gpu_busy_us") and len(rows) == 4
    code, out, _ = run_cli(capsys, "ranks", str(job4), "--format", "md")
    assert code == 0 and out.startswith("| File | Rank |") and "| Verdict |" in out


def test_pool_in_process_and_cached_runs_agree(job4):
    cold = run_job(job4, use_cache=True, workers=2)  # a spawned pool of two
    from tui.model.analyses.results import Results

    kept = Results.rank_row.stored_name(Results)  # the name the pool's processes kept it under: the same fingerprint
    assert all(cache.read_blob(f, kept) is not None for f in job4.iterdir())
    warm = run_job(job4, use_cache=True)  # every rank read back from its cache entry, in process
    alone = run_job(job4, use_cache=False, workers=1)
    assert cold.rows == warm.rows == alone.rows
    assert cold.job == warm.job == alone.job


def test_the_pool_is_sized_by_cores_and_by_the_memory_one_rank_needs(job4, monkeypatch):
    import tui.model.load.pool as pool

    files = sorted(job4.iterdir())
    size = pool.json_bytes(files[0])
    assert size > files[0].stat().st_size  # the JSON, read from the gzip trailer
    monkeypatch.setattr(pool.os, "cpu_count", lambda: 8)
    monkeypatch.setattr(pool, "available_memory", lambda: int(2.5 * pool.RSS_PER_BYTE * size))
    assert pool.pool_size(files) == 2  # room for two ranks at once, though 8 cores
    monkeypatch.setattr(pool, "available_memory", lambda: 1 << 40)
    assert pool.pool_size(files) == 4  # one per rank
    assert pool.pool_size(files, workers=3) == 3 and pool.pool_size(files[:1], workers=3) == 1


def test_a_folder_is_converted_side_by_side_then_read_from_the_cache(job4, isolated_cache):
    from tui.model.load.loader import warm_cache

    files = sorted(job4.iterdir())
    assert not any(has_entry(f) for f in files)
    seen: list[float] = []
    assert warm_cache(files, seen.append) == 4  # a spawned pool of two converted the four ranks
    assert all(has_entry(f) for f in files) and seen[-1] == pytest.approx(0.9)
    assert warm_cache(files) == 0  # nothing left to convert
    merged = load_trace(job4)
    assert merged.report.from_cache is False and merged.job is not None and len(merged.ranks) == 4


def test_merged_folder_rows_match_the_per_file_rows(job4):
    merged = Results(load_trace(job4, use_cache=False))
    per_file = run_job(job4, use_cache=False, workers=1).rows
    for a, b in zip(merged.rank_rows, per_file, strict=True):
        assert (a.rank, a.file, len(a.steps)) == (b.rank, b.file, len(b.steps))
        for name in ("wall_us", "gpu_busy_us", "comm_us", "compute_us", "overlap_us", "step_us"):
            assert getattr(a, name) == pytest.approx(getattr(b, name)), name
    assert merged.job is not None and merged.job.stragglers == [2]


def test_rank_from_file_names_missing_and_duplicate_ranks(capsys, tmp_path):
    named = make_job(tmp_path / "named", 3, info=False)
    (named / "trace_rank1.json.gz").rename(named / "worker7.json.gz")
    doc = ranks_json(capsys, named)
    assert [(r["rank"], r["rank_from"]) for r in doc["ranks"]] == [
        (0, "file name"),
        (2, "file name"),
        (7, "file name"),
    ]
    world = make_job(tmp_path / "world", 3, world=6)
    code, out, err = run_cli(capsys, "ranks", str(world), "--format", "json")
    assert code == 0 and "3 of the world size's 6 ranks are here; missing: 3, 4, 5" in err
    twice = make_job(tmp_path / "twice", 3)
    (twice / "trace_rank2.json.gz").write_bytes((twice / "trace_rank1.json.gz").read_bytes())
    code, out, err = run_cli(capsys, "ranks", str(twice), "--format", "json")
    assert code == 0 and "ranks claimed more than once (rank 1 by trace_rank1.json.gz, trace_rank2.json.gz)" in err
    assert [r["rank"] for r in json.loads(out)["ranks"]] == [0, 1, 2]  # numbered in file order instead


def test_mixed_gpu_models_and_clock_formats_are_warned(capsys, tmp_path):
    folder = make_job(tmp_path / "mixed", 2)
    doc = json.loads(gzip.decompress((folder / "trace_rank1.json.gz").read_bytes()))
    doc["deviceProperties"] = [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}]
    first = json.loads(gzip.decompress((folder / "trace_rank0.json.gz").read_bytes()))
    first["deviceProperties"] = [{"id": 0, "name": "NVIDIA A100-SXM4-80GB"}]
    (folder / "trace_rank0.json.gz").write_bytes(gzip.compress(json.dumps(first).encode()))
    doc["baseTimeNanoseconds"] = 1_700_000_000_000_000_000  # relative timestamps on this rank only
    (folder / "trace_rank1.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))
    code, out, err = run_cli(capsys, "ranks", str(folder), "--format", "json")
    assert code == 0
    assert "the ranks ran on different GPU models" in err and "NVIDIA H100 80GB HBM3" in err
    assert "the ranks write their clocks differently" in err


def test_a_job_of_host_collectives_counts_them(capsys, tmp_path):
    """gloo's collectives run on the CPU: they are the job's collectives (two copies of one rank arrive together)."""
    folder = tmp_path / "gloo"
    folder.mkdir()
    for k in range(2):
        doc = json.loads(gzip.decompress((SAMPLES / "cpu-only-gloo.json.gz").read_bytes()))
        doc["distributedInfo"] = {"backend": "gloo", "rank": k, "world_size": 2}
        (folder / f"rank{k}.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))
    job = ranks_json(capsys, folder)["job"]
    assert job["verdict"].startswith("the ranks arrive together at the collectives")
    assert job["top_collective"] == "gloo:all_reduce" and job["stragglers"] == [] and job["waited_for"] is None
    rows = ranks_json(capsys, folder)["ranks"]
    assert all(r["host_collectives"] and r["comm_us"] > 0 and r["wait_us"] == 0 for r in rows)


def test_a_bad_rank_file_is_named_and_the_others_reported(capsys, tmp_path):
    folder = make_job(tmp_path / "bad", 3)
    bad = folder / "trace_rank3.json"
    bad.write_text("this is not a trace")
    before = bad.read_bytes()
    code, out, err = run_cli(capsys, "ranks", str(folder), "--format", "json")
    assert code == 0
    assert [r["rank"] for r in json.loads(out)["ranks"]] == [0, 1, 2]
    assert re.search(r"warning: .*trace_rank3\.json was left out \(.+\)", err)
    assert bad.read_bytes() == before
    assert rank_summary(str(bad)).problem  # the problem, not an exception


def test_empty_folder_and_no_readable_rank_exit_2_with_one_line(capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    code, out, err = run_cli(capsys, "ranks", str(tmp_path / "empty"))
    assert code == 2 and err.count("\n") == 1 and "holds no .json or .json.gz traces" in err
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "rank0.json").write_text("[")
    code, out, err = run_cli(capsys, "ranks", str(tmp_path / "junk"))
    assert code == 2 and err.count("\n") == 1 and "no rank file could be read (rank0.json was left out" in err


def test_summary_ops_and_kernels_on_a_folder_say_it_is_a_job(capsys, job4):
    code, out, err = run_cli(capsys, "summary", str(job4))
    assert code == 0 and "is a job of 4 ranks" in err
    assert "A job of 4 ranks: steps per rank" in out
    assert re.search(r"^Step\s+rank 0\s+rank 1\s+rank 2\s+rank 3$", out, re.M)
    assert re.search(r"^ProfilerStep#551(\s+\S+){4}$", out, re.M)
    code, out, err = run_cli(capsys, "summary", str(job4), "--format", "json")
    steps = json.loads(out)["job"]["steps_per_rank"]
    assert [s["rank"] for s in steps] == [0, 1, 2, 3] and all(len(s["steps"]) == 2 for s in steps)
    for command in ("ops", "kernels"):
        code, out, err = run_cli(capsys, command, str(job4), "--limit", "3")
        assert code == 0 and "is a job of 4 ranks" in err


def test_collective_names():
    assert collective_name("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)") == (
        "ncclSendRecv"
    )
    assert collective_name("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)") == "ncclAllGather"
    assert collective_name("void rcclGenericKernel<1, false>(ncclDevComm*)") == "rcclCollective"
    assert collective_name("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL") == "ncclReduceScatter"


def test_a_generic_collective_kernel_is_named_by_the_op_that_launched_it(tmp_path):
    from conftest import X, write_trace

    events = []
    for k, op in enumerate(("c10d::allreduce_", "c10d::_allgather_base_", "c10d::allreduce_")):
        t = 1000 * k
        events += [
            X(op, t, 100),
            X("record_param_comms", t + 5, 80),
            X("cudaLaunchKernel", t + 10, 10, cat="cuda_runtime", correlation=k + 1),
            X(
                "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)",
                t + 30,
                200 + 100 * k,
                cat="kernel",
                pid=0,
                tid=20,
                correlation=k + 1,
            ),
        ]
    events.append(X("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", 5000, 50, cat="kernel", pid=0, tid=20))
    row = Results(load_trace(write_trace(tmp_path / "g.json", events), use_cache=False)).rank_row
    assert row.collectives == {"ncclAllReduce": 200 + 400, "ncclAllGather": 300, "ncclCollective": 50}


def test_dask_local_cluster_gives_the_same_json_as_the_local_pool(capsys, job4):
    distributed = pytest.importorskip("dask.distributed", reason="the dask extra is not installed")
    local = ranks_json(capsys, job4, "--no-cache")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        remote = ranks_json(capsys, job4, "--no-cache", "--engine", "dask", "--scheduler", c.scheduler_address)
    assert remote == local


def test_unreachable_scheduler_exits_2_naming_the_address(capsys, job4, monkeypatch):
    pytest.importorskip("dask.distributed", reason="the dask extra is not installed")
    import tui.model.jobs

    monkeypatch.setattr(tui.model.jobs, "CONNECT_TIMEOUT_S", 1)
    code, out, err = run_cli(capsys, "ranks", str(job4), "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9")
    assert code == 2 and out == ""
    assert err == "tracetui: error: tcp://127.0.0.1:9: the Dask scheduler cannot be reached within 1 s\n"
    code, out, err = run_cli(capsys, "ranks", str(job4), "--scheduler", "tcp://127.0.0.1:9")
    assert code == 2 and "--scheduler goes with --engine dask" in err


async def test_viewer_opens_a_folder_as_a_job(job4):
    from tui.app import TraceApp
    from tui.screens.compare import CompareScreen
    from tui.screens.main import MainScreen

    app = TraceApp([str(job4)], use_cache=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_main(pilot)
        assert isinstance(screen, MainScreen) and screen.ranks == [0, 1, 2, 3]
        tl = screen.timeline
        assert tl.current_rank() == 0
        await pilot.press("r", "r")
        assert tl.current_rank() == 2
        await pilot.press("o")  # only rank 2's lanes open
        tracks = screen.analysis.trace.tracks
        assert tl.collapsed and all(tracks[t].rank != 2 for t in tl.collapsed)
        assert {tracks[t].rank for t in tl.collapsed} == {0, 1, 3}
        await pilot.press("o")
        assert not tl.collapsed
        await pilot.press("5")
        await pilot.pause()
        console = Console(width=160, record=True, file=io.StringIO())
        console.print(screen.query_one("#overview-body").content)
        body = console.export_text()
        assert "Ranks: a job of 4" in body and "Job verdict: rank 2 " in body
        headless = run_job(job4, use_cache=False, workers=1).job.alignment
        assert screen.analysis.job.alignment == headless  # the viewer's events were moved; it says by how much
        assert re.search(r"Clocks\s+aligned on ProfilerStep#551: rank 1 [-+]", body)
        assert re.search(r"^rank 2 .* straggler$", body, re.M)
        assert sum(line.rstrip().endswith("straggler") for line in body.splitlines()) == 1
        await pilot.press("C")
        deadline = 100
        while not isinstance(app.screen, CompareScreen) and deadline:
            await pilot.pause(0.05)
            deadline -= 1
        assert isinstance(app.screen, CompareScreen)
        assert app.screen.labels[1] == "rank 2 (straggler) · trace_rank2.json.gz"
        assert "(typical)" in app.screen.labels[0]
        d = app.screen.diff
        compute = [k for k in d.kernels if "nccl" not in k.name.lower()]
        assert sum(k.time_b_us for k in compute) > 2 * sum(k.time_a_us for k in compute)  # its kernels run 3x longer
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        await pilot.press(*"Compare rank 3")
        await pilot.pause(0.5)
        await pilot.press("enter")  # the palette's "Compare rank 3"
        for _ in range(100):
            if isinstance(app.screen, CompareScreen):
                break
            await pilot.pause(0.05)
        assert app.screen.labels[1] == "rank 3 · trace_rank3.json.gz" and "rank 3" not in app.screen.labels[0]


async def test_viewer_opens_a_cold_folder_through_the_cache(tmp_path):
    """The ranks are converted side by side (or one by one where no process can start) from inside the app."""
    from tui.app import TraceApp
    from tui.screens.main import MainScreen

    folder = make_job(tmp_path / "cold", 3)
    app = TraceApp([str(folder)], use_cache=True)
    async with app.run_test(size=(120, 35)) as pilot:
        screen = await wait_for_main(pilot, settled=False)
        assert isinstance(screen, MainScreen) and screen.ranks == [0, 1, 2]
    assert app.load_error is None
    assert all(has_entry(f) for f in folder.iterdir())
