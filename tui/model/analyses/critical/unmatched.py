"""What a what-if that matches nothing is told: the window's biggest kernels and the roles present, to pick from."""

from __future__ import annotations

import re

import numpy as np

from ...analysis import Analysis
from ...cats import Cat
from ...sets import distinct
from ..kernel_roles import device_role
from .classes import Edge
from .graph import Graph

MOST = 5  # kernels named
NAME_WIDTH = 60


def unmatched(a: Analysis, g: Graph, spec: str, kernel: bool) -> str:
    """--what-if 'kernel:gemm=2' matches nothing in ProfilerStep#3; its biggest kernels: nvjet_… (GEMM, 0.69 ms), …;
    the roles there: GEMM, elementwise (e.g. kernel:role=gemm=2)."""
    head = f"--what-if {spec!r} matches nothing in {g.window.name}"
    if not kernel:
        return head
    kernels = _kernels(a, g)
    if not kernels:
        return head + ": it has no device activity"
    biggest = ", ".join(f"{name} ({r}, {_ms(ns)})" for (name, r), ns in list(kernels.items())[:MOST])
    per_role: dict[str, float] = {}
    for (_name, r), ns in kernels.items():
        per_role[r] = per_role.get(r, 0.0) + ns
    present = sorted(per_role, key=lambda r: -per_role[r])
    example = f"kernel:role={re.split(r'[^a-z0-9]', present[0].lower())[0]}={spec.rpartition('=')[2].strip()}"
    return f"{head}; its biggest kernels: {biggest}; the roles there: {', '.join(present)} (e.g. {example})"


def _kernels(a: Analysis, g: Graph) -> dict[tuple[str, str], float]:
    """The window's device activities summed by (short name, role), the most time first (ns)."""
    e, x = g.e, a.trace.x
    own = distinct(e.owner[(e.rule == int(Edge.DEVICE)) & (e.owner >= 0)])
    names, inv = np.unique(x.name[own], return_inverse=True)
    times = np.bincount(inv, weights=x.dur[own].astype(np.float64), minlength=len(names))
    first = np.zeros(len(names), np.int64)
    first[inv[::-1]] = own[::-1]
    out: dict[tuple[str, str], float] = {}
    for n, f, ns in zip(names.tolist(), first.tolist(), times.tolist(), strict=True):
        name = a.trace.names[n]
        key = (brief(name), device_role(name, int(x.cat[f]) == int(Cat.KERNEL)))
        out[key] = out.get(key, 0.0) + ns
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def brief(name: str) -> str:
    """A kernel's name without its return type, template arguments and parameters, cut to NAME_WIDTH."""
    short = re.sub(r"^void ", "", name.strip())
    cut = min((k for k in (short.find("<"), short.find("(")) if k > 0), default=len(short))
    short = short[:cut].rstrip() + ("<…>" if cut < len(short) and short[cut] == "<" else "")
    return short if len(short) <= NAME_WIDTH else short[: NAME_WIDTH - 1] + "…"


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.2f} ms" if ns >= 100_000 else f"{ns / 1000:.1f} us"
