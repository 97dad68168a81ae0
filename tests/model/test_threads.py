"""Passes side by side (threads.py): the same results with one thread and with several, and failures raised."""

from __future__ import annotations

import os
import threading
from dataclasses import replace

import numpy as np
import pytest
from conftest import SAMPLES

from tui.model import load_trace
from tui.model.analyses.results import Results
from tui.model.errors import said_once
from tui.model.threads import side_by_side, thread_count

TRACES = ("h100-bert-small.json.gz", "cpu-only-gloo.json.gz", "a100-train-control.json.gz")


def _fresh(name: str) -> Results:
    return Results(replace(load_trace(SAMPLES / name, use_cache=False), store=None))


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


@pytest.mark.parametrize("name", TRACES)
def test_one_thread_and_several_give_the_same_tables_and_summary(name, monkeypatch):
    got = {}
    for threads in ("1", "4"):
        monkeypatch.setenv("TRACETUI_THREADS", threads)
        a = _fresh(name)
        got[threads] = (a.summary, a.ops, a.ops_by_shape, a.op_times.cols)
    one, many = got["1"], got["4"]
    assert one[0] == many[0] and one[1] == many[1] and one[2] == many[2]
    assert _same(one[3], many[3])
    assert one[1].rows and one[0].verdict


def test_the_override_sets_the_count(monkeypatch):
    monkeypatch.setenv("TRACETUI_THREADS", "3")
    assert thread_count() == 3
    monkeypatch.setenv("TRACETUI_THREADS", "zero")
    said_once.cache_clear()
    with pytest.warns(RuntimeWarning, match="TRACETUI_THREADS=zero is not a whole number of threads, 1 or more"):
        assert thread_count() == max(1, min(os.cpu_count() or 1, 8))  # the default the line names


def test_jobs_run_in_threads_and_results_keep_their_order(monkeypatch):
    monkeypatch.setenv("TRACETUI_THREADS", "3")
    names = side_by_side(*(lambda k=k: (k, threading.current_thread().name) for k in range(5)))
    assert [k for k, _ in names] == list(range(5))
    assert names[0][1] == threading.current_thread().name  # the first job runs here
    assert any(n.startswith("tracetui-pass") for _, n in names[1:])
    monkeypatch.setenv("TRACETUI_THREADS", "1")
    assert all(
        n == threading.current_thread().name
        for _, n in side_by_side(*(lambda: (0, threading.current_thread().name) for _ in range(3)))
    )


def test_a_failing_job_is_raised_after_every_job_finished(monkeypatch):
    monkeypatch.setenv("TRACETUI_THREADS", "2")
    finished = []

    def slow():
        threading.Event().wait(0.05)
        finished.append("slow")

    def broken():
        raise ValueError("bad pass")

    with pytest.raises(ValueError, match="bad pass"):
        side_by_side(slow, broken)
    assert finished == ["slow"]
    with pytest.raises(ValueError, match="bad pass"):
        side_by_side(broken, slow)
    assert finished == ["slow", "slow"]
