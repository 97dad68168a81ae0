"""Merge per-rank traces of a folder into one Trace with one process group per rank."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .columns import Interner
from .parts import remap
from .trace import LoadReport, Trace
from .tracks import Track


def merge_ranks(path: str, traces: list[Trace]) -> Trace:
    """Concatenate columns, re-interning strings and offsetting tracks and chunks."""
    names, cats, shapes = Interner(), Interner(), Interner()
    parts: dict[str, dict[str, list]] = {"x": {}, "inst": {}, "flow": {}}
    tracks: list[Track] = []
    chunks: list[np.ndarray] = []
    sources: list[str] = []
    report = LoadReport()
    chunk_rows = 0
    ranks = [t.tracks[0].rank if t.tracks else k for k, t in enumerate(traces)]
    if len(set(ranks)) < len(ranks):  # two files claim the same rank: number them in file order
        ranks = list(range(len(traces)))
    for k, t in enumerate(traces):
        name_map, cat_map, shape_map = remap(names, t.names), remap(cats, t.cat_names), remap(shapes, t.shapes)
        offset = len(tracks)
        rank = ranks[k]
        tracks += [replace(tr, id=tr.id + offset, rank=rank, process=f"rank {rank} · {tr.process}") for tr in t.tracks]
        x = dict(t.x)
        x["name"], x["cat_str"] = name_map[x["name"]], cat_map[x["cat_str"]].astype(np.int16)
        x["shape"] = np.where(x["shape"] >= 0, shape_map[np.maximum(x["shape"], 0)], -1)
        x["chunk"] = x["chunk"] + chunk_rows
        for part, table in (("x", x), ("inst", dict(t.inst)), ("flow", dict(t.flow))):
            table["track"] = table["track"] + offset
            if part == "inst":
                table["name"] = name_map[table["name"]] if len(table["name"]) else table["name"]
            for key, arr in table.items():
                parts[part].setdefault(key, []).append(np.asarray(arr))
        c = np.array(t.chunks, copy=True)
        c[:, 3] += len(sources)
        chunks.append(c)
        chunk_rows += len(c)
        sources += t.sources
        _add_report(report, t.report)
    cols = {p: {k: np.concatenate(v) for k, v in d.items()} for p, d in parts.items()}
    merged = Trace(
        path=path,
        x=cols["x"],
        inst=cols["inst"],
        flow=cols["flow"],
        names=names.values,
        cat_names=cats.values,
        shapes=shapes.values,
        tracks=tracks,
        chunks=np.concatenate(chunks),
        sources=sources,
        devices=traces[0].devices,
        ranks=[r for t in traces for r in t.ranks],
        flags=traces[0].flags,
        report=report,
    )
    base = 0
    for t in traces:
        for src_index, buf in t.buffers.items():
            merged.buffers[src_index + base] = buf
        base += len(t.sources)
    return merged


def _add_report(total: LoadReport, one: LoadReport) -> None:
    total.events += one.events
    total.skipped += one.skipped
    total.repaired += one.repaired
    total.dropped_tail |= one.dropped_tail
    total.truncated |= one.truncated
    total.gz_truncated |= one.gz_truncated
    total.inexact_chunks += one.inexact_chunks
