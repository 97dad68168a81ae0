"""Explain rules for CUDA/HIP graphs: what the launches replay and cost, captures in the window, uncredited kernels."""

from __future__ import annotations

import re

import numpy as np

from ...analysis import Analysis
from ...cats import Cat
from ..graphs.replay import BEGIN_CAPTURE, CreditedTrace, graph_launches, graph_owner, graph_stats, name_mask
from ..launches import launch_calls
from ..summary import Summary
from .findings import Figure, Finding, Quantity, Rule, us

MAX_MARKED = 10_000  # events a finding marks (the details panel's notes), at most


def graph_launches_rule(a: Analysis, s: Summary) -> list[Finding]:
    """N graph launches replay M kernels: launch CPU per kernel against an eager launch, and the launches saved."""
    g = s.graphs if s.graphs.launches else graph_stats(a.trace, launch=launch_calls(a.trace, a.links.launcher))
    if not g.launches:
        return []
    figures: dict[str, Figure] = {
        "launches": g.launches,
        "kernels": g.kernels,
        "per_kernel": us(g.cost_per_kernel_us),
        "eager": us(g.eager_median_us),
        "saved": g.launches_saved,
        "share": Quantity(g.share, "fraction"),
        "empty": g.empty,
    }
    parts = ["graph-launches"] + (["graph-launches-eager"] if g.eager_launches else [])
    parts += ["graph-empty"] if g.empty else []
    launches = graph_launches(a.trace)
    marked = launches[:MAX_MARKED].tolist()
    return [Finding("graph-launches", "CUDA/HIP graph launches", figures, marked, parts, len(launches))]


def capture_in_window(a: Analysis, s: Summary) -> list[Finding]:
    """Stream captures recorded inside the profiled window: one-time setup measured as if it were the workload."""
    x = a.trace.x
    begins = np.flatnonzero(name_mask(a.trace, BEGIN_CAPTURE) & (x.cat == int(Cat.RUNTIME)))
    if not len(begins):
        return []
    figures: dict[str, Figure] = {"captures": len(begins), "launches": len(graph_launches(a.trace))}
    return [Finding("graph-capture-in-window", "Graph capture inside the profiled window", figures, begins.tolist())]


def uncredited_kernels(a: Analysis, s: Summary) -> list[Finding]:
    """Replayed kernels not credited to the code that captured them (no capture found, or not matched in it)."""
    trace = a.trace
    owner = graph_owner(trace)
    replayed = np.flatnonzero(owner >= 0)
    if not len(replayed):
        return []
    credited = trace.credit.source if isinstance(trace, CreditedTrace) else None
    left = replayed[a.links.launcher[replayed] == owner[replayed]] if credited is not None else replayed
    if not len(left):
        return []
    figures: dict[str, Figure] = {
        "left": len(left),
        "replayed": len(replayed),
        "left_us": us(float(trace.x.dur[left].sum()) / 1000.0),
        "capture": credited or "",
    }
    part = "graph-no-capture" if credited is None else "graph-unmatched"
    title = "Graph kernels without their capture" if credited is None else "Graph kernels not matched to their capture"
    return [Finding("graph-uncredited", title, figures, left[:MAX_MARKED].tolist(), [part], len(left))]


INPUT_COPY = "aten::_foreach_copy_"  # CUDA graph trees copy a replay's inputs into its static buffers with it
_INPUT_COPY = re.compile(f"^{re.escape(INPUT_COPY)}$")


def graph_input_copies(a: Analysis, s: Summary) -> list[Finding]:
    """The copies of a replay's inputs into the graph's static buffers, next to the launch they feed.

    torch.compile's reduce-overhead mode replays a graph from fixed input addresses (CUDA graph trees,
    torch/_inductor/cudagraph_trees.py): before each replay, every input that is not static (a parameter, a buffer,
    or a tensor marked with torch._dynamo.mark_static_address) is copied into the graph's own buffer by one
    aten::_foreach_copy_, next to the graph launch under the same compiled call. Its kernels run on the GPU before the
    replay's, so they are device time the graph adds to each step."""
    launches = graph_launches(a.trace)
    if not len(launches):
        return []
    parent = a.nesting.parent
    feeding = set(parent[launches].tolist()) - {-1}  # the calls that launch a graph (## Call CompiledFxGraph ...)
    copies = [int(c) for c in np.flatnonzero(name_mask(a.trace, _INPUT_COPY)) if parent[c] in feeding]
    kernels = [int(k) for c in copies for j in (c, *a.descendants(c, 64)) for k in a.links.launched(j)]
    if not kernels:
        return []
    x = a.trace.x
    copy_us = float(x.dur[kernels].sum()) / 1000.0
    replayed = np.flatnonzero(graph_owner(a.trace) >= 0)
    replay_us = float(x.dur[replayed].sum()) / 1000.0
    figures: dict[str, Figure] = {
        "copies": len(copies),
        "kernels": len(kernels),
        "copy_us": us(copy_us),
        "replay_us": us(replay_us),
        "share": Quantity(copy_us / (copy_us + replay_us), "fraction"),
    }
    return [Finding("graph-input-copies", "Graph inputs copied before each replay", figures, copies[:MAX_MARKED])]


GRAPH_RULES = [
    Rule("graph-input-copies", graph_input_copies),
    Rule("graph-launches", graph_launches_rule),
    Rule("graph-capture-in-window", capture_in_window),
    Rule("graph-uncredited", uncredited_kernels),
]
