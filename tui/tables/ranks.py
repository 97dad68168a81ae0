"""The ranks table (one row per rank of a job) and the job's lines, defined once for the CLI and the viewer."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from ..model.analyses.copies import CopyRow
from ..model.analyses.ranks import HOST_RULE, Job, RankRow
from ..text.fmt import fmt_time
from ..text.names import shorten
from .base import KEEP, Column, Field
from .copies import FIELDS as COPY_FIELDS
from .copies import rate_text, size_text
from .summary import TYPICAL_RULE, step_fields


def _pct(x: float) -> str:
    return f"{x:.1%}"


def _median_gpu(r: RankRow) -> float:
    """The median device work a step of the rank launched (0 without steps)."""
    return statistics.median([s.device_us for s in r.steps]) if r.steps else 0.0


COLUMNS: list[Column[RankRow, None]] = [
    Column("File", lambda r, c, w: shorten(r.file, w), priority=KEEP, name=True, min_width=20),
    Column("Rank", lambda r, c, w: str(r.rank), priority=KEEP),
    Column("Steps", lambda r, c, w: str(len(r.steps)), priority=3),
    Column("Typical step", lambda r, c, w: fmt_time(r.step_us), priority=KEEP),
    Column("GPU/step", lambda r, c, w: fmt_time(_median_gpu(r)), priority=2),
    Column("GPU busy", lambda r, c, w: fmt_time(r.gpu_busy_us), priority=1),
    Column("Util", lambda r, c, w: _pct(r.gpu_utilization), priority=1),
    Column("Collectives", lambda r, c, w: fmt_time(r.comm_us), priority=2),
    Column("Compute", lambda r, c, w: fmt_time(r.compute_us), priority=2),
    Column("Hidden comm", lambda r, c, w: fmt_time(r.overlap_us), priority=3),
    Column("Idle", lambda r, c, w: fmt_time(r.idle_us), priority=2),
    Column("Waits/step", lambda r, c, w: fmt_time(r.wait_us) if r.host_comm else "-", priority=2),
    Column("Straggler", lambda r, c, w: "STRAGGLER" if r.straggler else "", priority=1),
    Column("Verdict", lambda r, c, w: r.verdict or "-", priority=2, left=True),
]
NAME_WIDTH = 40
GPU_ONLY = ("GPU/step", "GPU busy", "Util", "Idle")  # the device's figures: left out when no rank has a device


def columns(rows: list[RankRow]) -> list[Column[RankRow, None]]:
    """The ranks table's columns; a job with no device work on any rank (CPU only) shows no GPU columns."""
    if any(r.gpu_busy_us or r.gpus for r in rows):
        return COLUMNS
    return [c for c in COLUMNS if c.header not in GPU_ONLY]


@dataclass(frozen=True)
class RankCopies:
    """One rank's copies of one direction (or its sets)."""

    rank: int
    file: str
    copy: CopyRow


def copy_rows(rows: list[RankRow]) -> list[RankCopies]:
    """Per rank, its copies per direction and its sets, in the summary's order (H2D, D2H, D2D, P2P, copy, set)."""
    return [RankCopies(r.rank, r.file, c) for r in rows for c in r.copies]


COPY_COLUMNS: list[Column[RankCopies, None]] = [
    Column("File", lambda r, c, w: shorten(r.file, w), priority=KEEP, name=True, min_width=20),
    Column("Rank", lambda r, c, w: str(r.rank), priority=KEEP),
    Column("Direction", lambda r, c, w: r.copy.kind, priority=KEEP, left=True),
    Column("Count", lambda r, c, w: f"{r.copy.count:,}", priority=KEEP),
    Column("Time", lambda r, c, w: fmt_time(r.copy.ns / 1000), priority=KEEP),
    Column("Bytes", lambda r, c, w: size_text(r.copy.bytes) if r.copy.bytes >= 0 else "-", priority=1),
    Column("GB/s", lambda r, c, w: "-" if r.copy.gbps is None else rate_text(r.copy.gbps), priority=1),
]

FIELDS: list[Field[RankRow]] = [
    Field("rank", lambda r: r.rank),
    Field("file", lambda r: r.file),
    Field("wall_us", lambda r: r.wall_us),
    Field("steps", lambda r: [step_fields(s) for s in r.steps]),
    Field("step_us", lambda r: r.step_us),
    Field("gpu_busy_us", lambda r: r.gpu_busy_us),
    Field("gpu_utilization", lambda r: r.gpu_utilization),
    Field("comm_us", lambda r: r.comm_us),
    Field("compute_us", lambda r: r.compute_us),
    Field("overlap_us", lambda r: r.overlap_us),
    Field("idle_us", lambda r: r.idle_us),
    Field("straggler", lambda r: r.straggler),
    Field("collectives", lambda r: r.collectives),
    Field("rank_from", lambda r: r.rank_from),
    Field("verdict", lambda r: r.verdict),
    Field("bound_by", lambda r: r.bound_by),
    Field("host_collectives", lambda r: r.host_comm),
    Field("wait_us", lambda r: r.wait_us),
    Field("copies", lambda r: [{f.key: f.value(c) for f in COPY_FIELDS} for c in r.copies]),
]
CSV_FIELDS = [f for f in FIELDS if f.key not in ("steps", "collectives", "copies")]


def job_fields(j: Job) -> dict[str, Any]:
    """The job object of `tracetui ranks --format json`."""
    return {
        "ranks": j.ranks,
        "slowest_rank": j.slowest_rank,
        "step_us": {"min": j.step_us_min, "median": j.step_us_median, "max": j.step_us_max},
        "top_collective": j.top_collective,
        "top_collective_us": j.top_collective_us,
        "comm_share": j.comm_share,
        "hidden_comm_share": j.hidden_share,
        "stragglers": j.stragglers,
        "verdict": j.verdict,
        "straggler_rule": j.straggler_rule,
        "alignment": {"method": j.alignment.method, "shifts_us": {str(k): v for k, v in j.alignment.shifts_us.items()}},
        "warnings": j.warnings,
        "waited_for": {"rank": j.waited_for, "wait_us": j.waited_for_us, "collective": j.waited_in}
        if j.waited_for >= 0
        else None,
    }


def job_lines(j: Job) -> list[tuple[str, str]]:
    """(label, text) lines that say what the ranks show together."""
    out = [
        ("Ranks", f"{j.ranks}"),
        (
            "Typical step",
            f"each rank's: min {fmt_time(j.step_us_min)}, median {fmt_time(j.step_us_median)}, "
            f"max {fmt_time(j.step_us_max)} (rank {j.slowest_rank}); {TYPICAL_RULE}",
        ),
    ]
    if j.top_collective:
        out.append(("Top collective", f"{j.top_collective} {fmt_time(j.top_collective_us)} over all ranks"))
        out.append(("Collectives", _collectives(j)))
    if j.waited_for >= 0:
        out.append(("Arrived last", f"rank {j.waited_for}: the others wait {fmt_time(j.waited_for_us)} a step for it"))
    out.append(("Clocks", _clocks(j)))
    out.append(("Verdict", j.verdict))
    return out


def _collectives(j: Job) -> str:
    if j.straggler_rule == HOST_RULE:  # no collective on a device: the host's, beside the ranks' CPU ops
        return f"on the host (CPU), {j.hidden_share:.0%} of their time beside the ranks' own ops"
    return f"{j.comm_share:.0%} of GPU busy, {j.hidden_share:.0%} of them hidden by compute"


def _clocks(j: Job) -> str:
    a = j.alignment
    if j.ranks < 2:
        return "one rank: nothing to line up"
    if a.method == "raw clock":
        return "raw clocks (no ProfilerStep#N common to every rank)"
    moved = ", ".join(f"rank {r} {us:+,.0f} us" for r, us in sorted(a.shifts_us.items()) if us)
    return f"aligned on {a.method}" + (f": {moved}" if moved else ": no rank moved")
