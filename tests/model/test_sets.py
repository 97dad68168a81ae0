"""distinct(): np.unique's sorted distinct values, by one sort (model/sets.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tui.model.sets import distinct


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64, np.bool_])
def test_distinct_is_what_np_unique_gives_for_every_integer_kind(dtype):
    rng = np.random.default_rng(int(np.dtype(dtype).num))
    for size in (0, 1, 2, 3, 17, 1000, 50_000):
        for spread in (1, 3, 50, 10**6):
            values = rng.integers(0, spread, size).astype(dtype)
            got, want = distinct(values), np.unique(values)
            assert got.dtype == want.dtype and np.array_equal(got, want), (dtype, size, spread)


def test_distinct_of_sorted_runs_2d_arrays_memory_maps_and_lists(tmp_path):
    runs = np.repeat(np.arange(-5, 400, 3, dtype=np.int64), 7)  # nearly sorted, as ids of events in time order
    assert np.array_equal(distinct(runs), np.unique(runs))
    grid = np.arange(24, dtype=np.int32).reshape(4, 6) % 5
    assert np.array_equal(distinct(grid), np.unique(grid))  # flattened, as np.unique does
    path = tmp_path / "col.npy"
    np.save(path, runs[::-1])
    mapped = np.load(path, mmap_mode="r")
    got = distinct(mapped)
    assert type(got) is np.ndarray and np.array_equal(got, np.unique(runs))
    assert np.array_equal(distinct([3, 1, 3, 2]), [1, 2, 3])


def test_floats_go_to_np_unique_which_counts_nan_once():
    values = np.array([2.0, np.nan, 1.0, np.nan, 2.0])
    got = distinct(values)
    assert np.array_equal(got, np.unique(values), equal_nan=True) and np.isnan(got).sum() == 1
