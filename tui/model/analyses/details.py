"""What the details panel says about one event: times, self time, links, footprint, args."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..analysis import Analysis
from ..cats import GPU_CATS, Cat
from ..load.args import event_args

FOOTPRINT_KEYS = (
    "grid",
    "block",
    "registers per thread",
    "shared memory",
    "blocks per SM",
    "warps per SM",
    "est. achieved occupancy %",
)


@dataclass
class Details:
    """Plain facts about an event; times in ns relative to the trace start."""

    index: int
    name: str
    category: str
    track: str
    start_ns: int
    dur_ns: int
    self_ns: int
    args: dict
    launch: tuple[int, str] | None = None  # (event, name) of the runtime call
    launch_latency_ns: int | None = None
    footprint: dict = field(default_factory=dict)
    kernels: list[tuple[int, str, int]] = field(default_factory=list)  # (event, name, dur)


def describe(a: Analysis, i: int, origin: int, max_kernels: int = 20) -> Details:
    t, x = a.trace, a.trace.x
    args = event_args(t, i)
    d = Details(
        i,
        t.name_of(i),
        t.cat_names[int(x.cat_str[i])],
        t.track_of(i).name,
        int(x.ts[i]) - origin,
        int(x.dur[i]),
        int(a.self_ns[i]),
        args,
    )
    cat = int(x.cat[i])
    if cat in [int(c) for c in GPU_CATS]:
        r = int(a.links.launcher[i])
        if r >= 0:
            d.launch = (r, t.name_of(r))
            d.launch_latency_ns = int(x.ts[i] - x.ts[r])
        d.footprint = {k: args[k] for k in FOOTPRINT_KEYS if k in args}
    elif cat in (int(Cat.CPU_OP), int(Cat.USER_ANNOTATION), int(Cat.RUNTIME), int(Cat.PYTHON)):
        d.kernels = _kernels_of(a, i, max_kernels)
    return d


def _kernels_of(a: Analysis, i: int, limit: int) -> list[tuple[int, str, int]]:
    out = []
    sources = [i] if int(a.trace.x.cat[i]) == int(Cat.RUNTIME) else a.descendants(i)
    for j in sources:
        for g in a.links.launched(int(j)):
            out.append((int(g), a.trace.name_of(int(g)), int(a.trace.x.dur[g])))
            if len(out) >= limit:
                return out
    return out
