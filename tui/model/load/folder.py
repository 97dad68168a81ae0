"""A folder of per-rank traces as one Trace: one process group per rank, their clocks lined up.

Each file's rank comes from its distributedInfo, else its name (rank-N, rankN, workerN), else its
place in the folder; ranks claimed twice are numbered in file order, and said so. The ranks' clocks
differ: they are lined up on the first ProfilerStep#N every rank has (the lowest rank stays put),
else the raw clocks are kept; the Trace's job says which, and how far each rank moved.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from ..steps import align_on_steps, step_starts
from ..trace import LoadReport, Trace
from .merge import merge


def resolve_ranks(claims: list[tuple[str, int, str]]) -> tuple[list[int], list[str]]:
    """The rank of each (file, claimed rank, where the claim came from), and warnings about the claims."""
    ranks = [rank if source != "file order" else k for k, (_, rank, source) in enumerate(claims)]
    seen: dict[int, list[str]] = {}
    for (name, _, _), rank in zip(claims, ranks, strict=True):
        seen.setdefault(rank, []).append(name)
    twice = {r: names for r, names in seen.items() if len(names) > 1}
    if not twice:
        return ranks, []
    told = "; ".join(f"rank {r} by {', '.join(names)}" for r, names in sorted(twice.items()))
    return list(range(len(claims))), [f"ranks claimed more than once ({told}): numbered in file order instead"]


def merge_ranks(path: str, traces: list[Trace]) -> Trace:
    """Concatenate the ranks' columns, re-interning strings and offsetting tracks, chunks and sources."""
    claims = [(Path(t.path).name, int(t.ranks[0].get("rank", 0)), str(t.ranks[0].get("rank_from", ""))) for t in traces]
    ranks, notes = resolve_ranks(claims)
    method, shifts = align_on_steps({r: step_starts(t) for t, r in zip(traces, ranks, strict=True)})
    traces = [_shifted(t, shifts[r]) for t, r in zip(traces, ranks, strict=True)]
    offsets = np.cumsum([0] + [len(t.tracks) for t in traces])
    track_maps = [np.arange(len(t.tracks), dtype=np.int32) + offsets[k] for k, t in enumerate(traces)]
    merged = merge(traces, track_maps, [len(t.chunks) for t in traces])
    tracks = [
        replace(tr, id=tr.id + int(offsets[k]), rank=ranks[k], process=f"rank {ranks[k]} · {tr.process}")
        for k, t in enumerate(traces)
        for tr in t.tracks
    ]
    report = LoadReport()
    chunks: list[np.ndarray] = []
    sources: list[str] = []
    buffers: dict = {}
    for t in traces:
        c = np.array(t.chunks, copy=True)
        c[:, 3] += len(sources)
        chunks.append(c)
        buffers |= {index + len(sources): buf for index, buf in t.buffers.items()}
        sources += t.sources
        report.add(t.report)
    report.notes = notes
    infos = [
        {**t.ranks[0], "rank": r, "shift_us": shifts[r] / 1000, "file": Path(t.path).name}
        for t, r in zip(traces, ranks, strict=True)
    ]
    return Trace(
        path=path,
        x=merged.x,
        inst=merged.inst,
        flow=merged.flow,
        names=merged.names,
        cat_names=merged.cat_names,
        shapes=merged.shapes,
        tracks=tracks,
        chunks=np.concatenate(chunks),
        sources=sources,
        devices=traces[0].devices,
        ranks=infos,
        job={"alignment": method, "ranks": len(traces)},
        flags=traces[0].flags,
        report=report,
        buffers=buffers,
    )


def _shifted(t: Trace, shift: int) -> Trace:
    if not shift:
        return t
    moved = {part: replace(getattr(t, part), ts=getattr(t, part).ts + shift) for part in ("x", "inst", "flow")}
    return replace(t, **moved)
