"""A folder of per-rank traces as one Trace: one process group per rank."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..trace import LoadReport, Trace
from .merge import merge


def merge_ranks(path: str, traces: list[Trace]) -> Trace:
    """Concatenate the ranks' columns, re-interning strings and offsetting tracks, chunks and sources."""
    ranks = [t.tracks[0].rank if t.tracks else k for k, t in enumerate(traces)]
    if len(set(ranks)) < len(ranks):  # two files claim the same rank: number them in file order
        ranks = list(range(len(traces)))
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
        ranks=[r for t in traces for r in t.ranks],
        flags=traces[0].flags,
        report=report,
        buffers=buffers,
    )
