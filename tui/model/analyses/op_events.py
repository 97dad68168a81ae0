"""Which host events torch's key_averages() sees, and how it places them in its tree.

Read from torch/autograd/profiler.py (_parse_kineto_results) and profiler_util.py (FunctionEvent,
EventList._populate_cpu_children), torch 2.11 and 2.13:
- Python frames (with_stack). Up to torch 2.11, and from 2.14 by default, the table has no frame rows:
  until pytorch/pytorch#178168 (in 2.12 and 2.13) torch's events() left the frames out altogether, so the ops
  nest straight under the op above the frame and a frame's own time is that op's self time. That is the
  table shown by default here. With python_frames, the frames are rows nested like any op, as 2.12 and 2.13
  print them. (2.14's include_python_functions=False hides the rows but keeps the frames in its tree, so
  the op above a frame loses the frame's time and the self times no longer add up to the window.)
- Async events: a c10d collective's annotation (`nccl:all_reduce`, `gloo:broadcast`, ...) is a RecordFunction
  marked async (it ends on another thread, when the work completes). torch keeps async events out of the tree:
  self CPU 0, CPU total their span, no device time; the op they ran under keeps their time as its own.
- Events still open when the window closed (`"finished": false` in their args, ending at the window's end in
  the file): torch 2.11's events() dropped them; 2.12 and 2.13 list them as async events that end with the
  event they started in.
- Runtime calls linked to no op (no External id) are, for torch, events of their own thread (the system
  thread id, where ops carry torch's own thread number): they nest under no op, and no op under them.
- Profiler overhead (`Activity Buffer Request`, cat overhead, pid -1) is a CPU event of its own thread: a row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cats import HOST_CATS, Cat, of_cats
from ..load.args import event_args
from ..nesting import nest
from ..trace import Trace
from .comm_names import BACKEND_SPAN  # the profilingTitle of a c10d Work: an async RecordFunction

ROW_CATS = (*HOST_CATS, Cat.OVERHEAD)  # the host categories that are rows of the table
WINDOW_END = "Record Window End"


@dataclass
class OpEvents:
    """Per event: is it a host row, and where torch puts it (all boolean masks over the trace's events)."""

    host: np.ndarray  # the host events that are rows
    detached: np.ndarray  # host rows nested only among themselves, per thread (runtime calls linked to no op)
    loose: np.ndarray  # host rows torch keeps out of the tree (async): self CPU 0, no device time
    unfinished: np.ndarray  # still open when the window closed (rows only with python_frames)
    python_frames: bool = False


def op_events(trace: Trace, name_ok: np.ndarray, python_frames: bool = False) -> OpEvents:
    """The host events of torch's table: without frames and open events (torch 2.11), or with them (2.12, 2.13)."""
    x = trace.x
    host = of_cats(x.cat, ROW_CATS) & name_ok
    if not python_frames:
        host &= x.cat != int(Cat.PYTHON)
    still_open = unfinished(trace, host)
    loose = host & (_c10d_work(trace) | still_open)
    if not python_frames:
        host &= ~still_open
        loose &= ~still_open
    detached = host & (x.cat == int(Cat.RUNTIME)) & (x.ext < 0)
    return OpEvents(host, detached, loose, still_open, python_frames)


def _c10d_work(trace: Trace) -> np.ndarray:
    """The user annotations a c10d collective records for its work (async in torch)."""
    named = np.array([bool(BACKEND_SPAN.match(n)) for n in trace.names] + [False])
    return named[trace.x.name] & (trace.x.cat == int(Cat.USER_ANNOTATION))


def unfinished(trace: Trace, host: np.ndarray) -> np.ndarray:
    """The host events still open when the window closed: Kineto ends them at the window's end and marks them
    `"finished": false` (only the few ending there are read again for their args)."""
    out = np.zeros(trace.n, bool)
    if not host.any():
        return out
    end = trace.x.ts + trace.x.dur
    last = _window_end(trace, int(end[host].max()))
    for i in np.flatnonzero(host & (end == last)).tolist():
        out[i] = event_args(trace, i).get("finished") is False
    return out


def _window_end(trace: Trace, latest: int) -> int:
    """Where Kineto ended the open events: its `Record Window End` instant, else the latest host event's end."""
    if WINDOW_END not in trace.names or not len(trace.inst.ts):
        return latest
    marks = trace.inst.ts[trace.inst.name == trace.names.index(WINDOW_END)]
    return int(marks.max()) if len(marks) else latest


def torch_ends(trace: Trace, ev: OpEvents) -> np.ndarray:
    """Each event's end as torch 2.13 reads it: an open event ends with the event it started in (its would-be
    parent on its thread), where it has one; every other event where the file ends it. (An open event under
    none ends, for torch, when the profiler stopped: the file keeps only the window's end.)"""
    x = trace.x
    end = x.ts + x.dur
    opened = ev.unfinished & ev.host
    if not opened.any():
        return end
    at_start = np.where(opened, x.ts, end)  # an open event as the instant it started
    inside = nest(x.ts, at_start, x.track, (ev.host & ~ev.loose & ~ev.detached) | opened)
    idx = np.flatnonzero(opened)
    around = inside.parent[idx]
    out = end.copy()
    out[idx[around >= 0]] = end[around[around >= 0]]
    return out
