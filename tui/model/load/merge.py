"""Concatenate decoded pieces (the parts of one file, or the files of a folder) into one set of columns.

Each piece interns its own strings and numbers its own tracks and chunk rows; merging re-interns
the strings in piece order and maps each piece's tracks and chunks into the shared numbering.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..columns import Events, Flows, Instants
from .build import Interner


class Piece(Protocol):
    """What a decoded part of a file and a whole loaded trace both provide."""

    x: Events
    inst: Instants
    flow: Flows
    names: list
    cat_names: list
    shapes: list


@dataclass
class Merged:
    x: Events
    inst: Instants
    flow: Flows
    names: list
    cat_names: list
    shapes: list


def remap(into: Interner, values: list) -> np.ndarray:
    """Intern values into a shared table; returns old id -> new id."""
    return np.asarray(into.many(values) or [0], dtype=np.int32)


def merge(pieces: Sequence[Piece], track_maps: list[np.ndarray], chunk_rows: list[int]) -> Merged:
    """One set of columns: piece k's track t becomes track_maps[k][t]; its chunk rows follow the earlier pieces'."""
    names, cats, shapes = Interner(), Interner(), Interner()
    xs, insts, flows = [], [], []
    offset = 0
    for p, tracks, rows in zip(pieces, track_maps, chunk_rows, strict=True):
        name_map, cat_map, shape_map = remap(names, p.names), remap(cats, p.cat_names), remap(shapes, p.shapes)
        x = p.x.columns()
        x["name"], x["track"], x["cat_str"] = name_map[x["name"]], tracks[x["track"]], cat_map[x["cat_str"]]
        x["shape"] = np.where(x["shape"] >= 0, shape_map[np.maximum(x["shape"], 0)], -1)
        x["chunk"] = x["chunk"] + offset
        inst = p.inst.columns()
        inst["name"], inst["track"] = name_map[inst["name"]], tracks[inst["track"]]
        flow = p.flow.columns()
        flow["track"] = tracks[flow["track"]]
        xs.append(Events.from_columns(x))
        insts.append(Instants.from_columns(inst))
        flows.append(Flows.from_columns(flow))
        offset += rows
    return Merged(
        Events.concat(xs), Instants.concat(insts), Flows.concat(flows), names.values, cats.values, shapes.values
    )
