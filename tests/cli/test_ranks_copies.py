"""`tracetui ranks`: each rank's copies per direction (count, time, bytes, GB/s) equal to HTA 0.5's on the 2-rank
job, the same whether the folder is read rank by rank or merged; a CPU-only job's table without GPU columns; and
critical and ranks saying one word for a CPU-only rank."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import SAMPLES, raw_events

from tui.cli import main
from tui.model.analyses.results import Results
from tui.model.jobs import run_job
from tui.model.load import load_trace

TWO = SAMPLES / "hta-2rank"  # the shared hta-2023-trace-filter-2rank: whole microseconds
HTA = json.loads((Path(__file__).parents[1] / "data" / "hta_analyses.json").read_text())["traces"]
HTA_KIND = {"Memcpy HtoD": "H2D", "Memcpy DtoH": "D2H", "Memcpy DtoD": "D2D", "Memcpy PtoP": "P2P", "Memset": "set"}


def ranks_json(capsys, folder: Path) -> dict:
    assert main(["ranks", str(folder), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def raw_bytes(path: Path) -> dict[str, int]:
    """The `bytes` args of a rank's copies and sets, summed per HTA kind, read with the standard library."""
    found: dict[str, int] = {}
    for e in raw_events(path):
        if e.get("ph") == "X" and e.get("cat") in ("gpu_memcpy", "gpu_memset"):
            kind = HTA_KIND["Memset" if e["cat"] == "gpu_memset" else e["name"][:11]]
            found[kind] = found.get(kind, 0) + int(e["args"]["bytes"])
    return found


def test_the_two_rank_jobs_copies_per_rank_equal_htas(capsys):
    """Per rank and direction: the count and device time of HTA's memory kernels, the bytes of the trace's args,
    and GB/s their ratio."""
    rows = ranks_json(capsys, TWO)["ranks"]
    hta = HTA["hta-2023-trace-filter-2rank"]["copies"]
    for row in rows:
        ours = {c["kind"]: c for c in row["copies"]}
        theirs = {HTA_KIND[k]: v for k, v in hta[str(row["rank"])].items()}
        assert {k: (c["count"], c["us"]) for k, c in ours.items()} == {
            k: (v["count"], v["us"]) for k, v in theirs.items()
        }
        assert {k: c["bytes"] for k, c in ours.items()} == raw_bytes(TWO / row["file"])
        for c in ours.values():
            assert c["gbps"] == pytest.approx(c["bytes"] / (c["us"] * 1000))
    assert [c["count"] for c in rows[1]["copies"]] == [24, 8, 8, 10]  # H2D, D2H, D2D, then the sets


def test_the_merged_folder_and_the_rank_files_give_the_same_copies():
    merged = Results(load_trace(TWO, use_cache=False)).rank_rows
    per_file = run_job(TWO, use_cache=False, workers=1).rows
    assert [_seen(r.copies) for r in merged] == [_seen(r.copies) for r in per_file]
    assert all(r.copies for r in merged)


def _seen(copies) -> list[tuple]:
    """What the reports show of a rank's copies (the slowest copy's event id is the file's or the folder's)."""
    return [(c.kind, c.count, c.ns, c.bytes, c.pageable, c.pinned, c.small, c.median_bytes) for c in copies]


def test_the_text_report_has_a_table_of_copies_per_rank(capsys):
    assert main(["ranks", str(TWO)]) == 0
    text = capsys.readouterr().out
    assert "Copies per rank and direction" in text and "GPU busy" in text
    line = next(x for x in text.splitlines() if x.startswith("sampled_rank-1") and " D2D " in x)
    assert line.split()[2:5] == ["D2D", "8", "4.327ms"]


@pytest.fixture(scope="module")
def cpu_job(tmp_path_factory) -> Path:
    """Two ranks of a CPU-only capture (no device, no collectives)."""
    folder = tmp_path_factory.mktemp("cpu_job")
    for k in range(2):
        shutil.copy(SAMPLES / "cpu" / "mlp_fwd.json.gz", folder / f"rank-{k}.json.gz")
    return folder


def test_a_cpu_only_jobs_table_has_no_gpu_columns(capsys, cpu_job):
    assert main(["ranks", str(cpu_job)]) == 0
    text = capsys.readouterr().out
    header = text.splitlines()[0]
    assert "Typical step" in header and not any(h in header for h in ("GPU/step", "GPU busy", "Util", "Idle"))
    assert "Copies per rank" not in text
    rows = ranks_json(capsys, cpu_job)["ranks"]
    assert all(r["gpu_busy_us"] == 0 and r["copies"] == [] for r in rows)  # the data keeps its keys


def test_critical_on_another_step_says_the_word_ranks_says(capsys, cpu_job):
    """A CPU-only rank is cpu-in-ops in ranks, and in critical's verdict on any step, not cpu-bound."""
    words = {r["verdict"] for r in ranks_json(capsys, cpu_job)["ranks"]}
    assert words == {"cpu-in-ops"}
    assert main(["critical", str(cpu_job), "--step", "2"]) == 0
    verdict = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("Verdict: "))
    assert verdict.startswith("Verdict: cpu-in-ops: CPU work holds 100% of the path")


def test_a_cpu_only_straggler_in_a_communication_bound_job_is_cpu_in_ops_in_both(capsys):
    """GIVEN the gloo job captured here (tests/data/gloo-handover: rank 1 sleeps 50 ms, the job is
    communication-bound) WHEN critical reads the job THEN the straggler's path verdict is the word ranks gives it
    (cpu-in-ops), never cpu-bound, which is none of the summary's words."""
    job = Path(__file__).resolve().parents[1] / "data" / "gloo-handover"
    words = {r["rank"]: r["verdict"] for r in ranks_json(capsys, job)["ranks"]}
    assert words[1] == "cpu-in-ops"
    assert main(["critical", str(job)]) == 0
    verdict = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("Verdict: "))
    assert verdict.startswith("Verdict: cpu-in-ops: CPU work holds ")
