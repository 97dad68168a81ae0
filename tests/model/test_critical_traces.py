"""The critical path on every sample and shared trace: it covers its window, and its graph reproduces every time."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SAMPLES, shared_traces
from test_critical import covers

from tui.model import load_trace
from tui.model.analyses.critical import find_window
from tui.model.analyses.critical.classes import Edge
from tui.model.analyses.critical.path import graph, path_of
from tui.model.analyses.critical.solve import solve
from tui.model.analyses.results import Results

TRACES = sorted(SAMPLES.rglob("*.json.gz")) + shared_traces()


@pytest.mark.parametrize("path", TRACES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_path_covers_its_window_and_the_graph_runs_forward_in_time(path):
    a = Results(load_trace(path))
    g = graph(a, find_window(a.trace), a.graph_owner)
    p = path_of(a, g, None, None)
    covers(p)
    assert (g.weight >= 0).all()  # every edge runs forward: the graph is acyclic and time is its order
    assert (g.floor <= g.weight).all()  # an edge that does not bind never weighs more than it took
    cpu = g.e.rule == int(Edge.CPU)
    assert np.array_equal(g.lane[g.e.src[cpu]], g.lane[g.e.dst[cpu]])
    times, _ = solve(g, g.dp_weight(), np.ones(len(g.e), bool))
    assert np.array_equal(times, g.ts)  # the longest path with its own weights gives back every recorded time
