"""The builder's columns grow in place (load/grow.py): a load writes each value once, where it stays."""

from __future__ import annotations

import numpy as np
from conftest import SAMPLES

from tui.model.columns import Events
from tui.model.load import grow, parts
from tui.model.load.build import Builder
from tui.model.load.loader import load_trace

SAMPLE = SAMPLES / "a100-train-control.json.gz"


def _columns(trace) -> dict:
    return {(t, k): v for t in ("x", "inst", "flow") for k, v in getattr(trace, t).columns().items()}


def test_a_load_reads_the_same_whatever_room_it_reserves(monkeypatch):
    monkeypatch.setattr(parts, "EVENT_BYTES", 1)  # far more room than the events take
    roomy = _columns(load_trace(SAMPLE, use_cache=False))
    monkeypatch.setattr(parts, "EVENT_BYTES", 1 << 40)  # none: every table grows from a few rows, many times
    monkeypatch.setattr(grow, "_FIRST_ROOM", 7)
    tight = _columns(load_trace(SAMPLE, use_cache=False))
    assert roomy.keys() == tight.keys()
    for key, column in roomy.items():
        assert column.dtype == tight[key].dtype and np.array_equal(column, tight[key]), key
    assert len(roomy[("x", "ts")]) > 1000  # a real trace, grown past its first room many times over


def test_values_keep_their_place_across_growth():
    g = grow.Growing({"a": np.int64, "b": np.float64})
    g.reserve(3)
    for k in range(10):
        g.extend(a=[k, k + 100], b=np.array([k / 2, -1.0]))
    assert g.room >= g.n == 20
    assert g.column("a", copy=False).tolist() == [v for k in range(10) for v in (k, k + 100)]
    assert g.column("b", copy=True).dtype == np.float64
    assert grow.Growing({"c": np.int32}).column("c", copy=False).dtype == np.int32  # never extended: empty


def test_the_last_tables_are_the_builders_columns_and_a_partial_ones_copies():
    b = Builder()
    b.x.reserve(100)
    n = 5
    cols = {k: np.arange(n).astype(dt) for k, dt in Events.dtypes().items() if k not in ("cat", "cat_str")}
    b.cats("cpu_op")
    b.put_x(
        *(cols[k] for k in ("ts", "dur", "track", "name")),
        np.zeros(n, np.int32),
        *(cols[k] for k in ("ext", "corr", "py_id", "py_parent", "shape", "nbytes", "chunk", "pos")),
    )
    partial, _, _ = b.finish(last=False)
    assert not np.shares_memory(partial.ts, b.x.arrays["ts"])  # chunks may still come: a copy
    last, _, _ = b.finish()
    assert np.shares_memory(last.ts, b.x.arrays["ts"])  # no join: the column as it was written
    assert last.ts.tolist() == list(range(n)) and last.cat.tolist() == [int(last.cat[0])] * n
