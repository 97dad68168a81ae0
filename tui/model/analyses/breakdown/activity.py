"""What each device activity is for the breakdowns (compute, communication or copies), where it ran, when its
launch call started, and the windows the breakdowns cut: each device's span, or one step on each rank.

A kernel is communication when it is a collective (NCCL, RCCL, gloo: by its name or the collective_comm
category, as `ranks` counts comm_us), compute otherwise; copies and sets are copies. HTA reads the class from the
name alone: communication starts with "nccl", memory with Memcpy, Memset or dma, and a kernel whose name holds
Sync, Memcpy or dma is neither compute nor communication (its "other").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...cats import BUSY_CATS, Cat, of_cats
from ...sets import distinct
from ...steps import STEP_NAME, steps
from ...trace import TraceColumns
from ..kernel_roles import role
from ..launches import device_callers

CLASSES = ("compute", "communication", "copies")  # bit k of a combination of classes is CLASSES[k]
COMPUTE, COMMUNICATION, COPIES = 0, 1, 2
NOT_LAUNCHED = np.iinfo(np.int64).min  # the launch time of an activity no recorded call launched


class WindowMissing(ValueError):
    """The step asked for is on no rank of the trace."""


@dataclass
class Activities:
    """The device activities (kernels, copies, sets) in start order, with what the breakdowns read of each: times in
    ns on the trace's clock, its lane (track), its device (an index into devices), its class and when the call that
    launched it started (NOT_LAUNCHED: none recorded; a replayed kernel's call is its graph launch)."""

    ev: np.ndarray
    ts: np.ndarray
    end: np.ndarray
    track: np.ndarray
    device: np.ndarray
    cls: np.ndarray
    launch: np.ndarray
    devices: list[tuple[int, str]]  # (rank, the device as the trace writes its pid)


@dataclass
class Scope:
    """One device and the window cut on it (ns, the trace's clock)."""

    device: int
    start_ns: int
    end_ns: int


def activities(trace: TraceColumns, launcher: np.ndarray, owner: np.ndarray) -> Activities:
    """Every kernel, copy and set of the trace, by start."""
    x = trace.x
    ev = np.flatnonzero(of_cats(x.cat, BUSY_CATS))
    ev = ev[np.argsort(x.ts[ev], kind="stable")]
    keys = [(t.rank, str(t.pid)) for t in trace.tracks]
    devices = sorted({keys[t] for t in distinct(x.track[ev]).tolist()})
    index = {d: k for k, d in enumerate(devices)}
    of_track = np.array([index.get(k, -1) for k in keys] or [-1], np.int64)
    callers = device_callers(trace, launcher, owner)[ev]
    launch = np.where(callers >= 0, x.ts[np.maximum(callers, 0)], NOT_LAUNCHED)
    track = x.track[ev]
    return Activities(ev, x.ts[ev], x.ts[ev] + x.dur[ev], track, of_track[track], classes(trace, ev), launch, devices)


def classes(trace: TraceColumns, ev: np.ndarray) -> np.ndarray:
    """COMPUTE, COMMUNICATION or COPIES of each device activity."""
    x = trace.x
    named = np.zeros(len(trace.names) + 1, bool)  # collective kernels, by the one classifier (kernel_roles.py)
    named[[n for n in distinct(x.name[ev]).tolist() if role(trace.names[n]) == "collective"]] = True
    category = np.array([c.lower() == "collective_comm" for c in trace.cat_names] or [False])
    collective = named[x.name[ev]] | category[x.cat_str[ev]]
    copy = x.cat[ev] != int(Cat.KERNEL)
    return np.where(copy, COPIES, np.where(collective, COMMUNICATION, COMPUTE)).astype(np.int64)


def scopes(
    trace: TraceColumns, acts: Activities, callers: np.ndarray, step: int | None
) -> tuple[str, list[Scope], list[int]]:
    """The window's name, each device's scope in it, and the ranks left out (without that step). Without a step,
    each device's span: its first activity's start to its last one's end (HTA's "kernel time")."""
    if step is None:
        found = []
        for d in range(len(acts.devices)):
            mine = acts.device == d
            found.append(Scope(d, int(acts.ts[mine].min()), int(acts.end[mine].max())))
        return "the whole trace", found, []
    return _step_scopes(trace, acts, callers, step)


def _step_scopes(
    trace: TraceColumns, acts: Activities, callers: np.ndarray, step: int
) -> tuple[str, list[Scope], list[int]]:
    """ProfilerStep#step on each rank: from its start until its CPU span and the device work it launched both end."""
    name = f"ProfilerStep#{step}"
    windows: dict[int, tuple[int, int]] = {}
    numbers = set()
    for st in steps(trace, trace.origin, None, callers):
        numbers.add(int(STEP_NAME.match(st.name).group(1)))  # type: ignore[union-attr]
        if st.name == name:
            rank = trace.track_of(st.event).rank
            windows.setdefault(rank, (int(trace.x.ts[st.event]), trace.origin + round(st.end_us * 1000)))
    if not windows:
        have = f"its steps are {_ranges(sorted(numbers))}" if numbers else "it has no ProfilerStep#N"
        raise WindowMissing(f"no {name} in the trace ({have})")
    ranks = sorted({r for r, _ in acts.devices})
    found = [Scope(d, *windows[r]) for d, (r, _) in enumerate(acts.devices) if r in windows]
    return name, found, [r for r in ranks if r not in windows]


def _ranges(numbers: list[int]) -> str:
    """3, 4, 5, 9 -> 3-5, 9"""
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(out)
