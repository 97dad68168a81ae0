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
- Events Kineto collected that are linked to no op: runtime and driver calls without an External id
  (`cudaDeviceSynchronize`, `cudaStreamIsCapturing`, `cudaGraphLaunch`, ...) and CUPTI's overhead events
  (`Activity Buffer Request`, `Lazy Function Loading`; cat overhead, pid -1). torch gives every event its own
  thread number, and for an event Kineto collected it sets that number in collection.cpp
  (TransferEvents::setParents, then setKinetoTID): the number of the op it is linked to (its External id),
  else, with no op, `at::RecordFunction::currentThreadId()`: the thread that stops the profiler and turns the
  results into events. _parse_kineto_results copies it (`thread=kineto_event.start_thread_id()`) and
  _populate_cpu_children nests by it, so such an event nests by time among the ops of that thread, wherever it
  ran: under the step or the record_function block around it, and ops inside its span under it. The same code
  in torch 2.11 and 2.13. The file does not say which thread stopped the profiler: it is taken to be the thread
  of the ProfilerStep#N events (prof.step() stops a scheduled profiler), else the process's main thread (its
  tid equals its pid), else the CPU thread with the most ops (post_thread).
- CUPTI's overhead events are CPU events for torch (deviceTypeFromActivity: OVERHEAD is a CPU type): rows with
  self CPU time.
- Device time of an event linked to no op: _parse_kineto_results gives an event whose linked correlation is 0
  the device events whose linked correlation (their External id) equals its own id, `kineto_event.correlation_id()`.
  For an event Kineto collected that is Result::correlationID (collection.cpp, kinetoEventCorrelationID): its
  own correlation if it has one (a runtime call's CUPTI correlation id, the trace's `correlation`), else that of
  its parent in torch's Result tree (build_tree: the event open on its thread when it starts; a linked runtime
  call is no parent there, a Python frame has id 0). So a lazy-loading event (`Lazy Function Loading`) inside an
  op's launch is credited with that op's kernels, as is the op, and the runtime call around it counts them in its
  device total; and a runtime call linked to no op is credited with the device work of the op whose External id
  happens to equal its correlation id (frontend_ids).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cats import HOST_CATS, Cat, of_cats
from ..load.args import args_of, chunk_events, event_args, read_event
from ..nesting import nest
from ..sets import distinct
from ..steps import step_events
from ..trace import TraceColumns
from .comm_names import BACKEND_SPAN  # the profilingTitle of a c10d Work: an async RecordFunction

ROW_CATS = (*HOST_CATS, Cat.OVERHEAD)  # the host categories that are rows of the table
WINDOW_END = "Record Window End"


@dataclass
class OpEvents:
    """Per event: is it a host row, and where torch puts it (all boolean masks over the trace's events)."""

    host: np.ndarray  # the host events that are rows
    detached: np.ndarray  # host rows Kineto collected linked to no op: on the thread that stopped the profiler
    loose: np.ndarray  # host rows torch keeps out of the tree (async): self CPU 0, no device time
    unfinished: np.ndarray  # still open when the window closed (rows only with python_frames)
    thread: np.ndarray  # per event, the track torch nests it on: its own, or for a detached one, post_thread's
    ids: np.ndarray  # per host row linked to no op, torch's id for it (device events with that External id are its)
    python_frames: bool = False


def op_events(trace: TraceColumns, name_ok: np.ndarray, python_frames: bool = False) -> OpEvents:
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
    unlinked = ((x.cat == int(Cat.RUNTIME)) & (x.ext < 0)) | (x.cat == int(Cat.OVERHEAD))
    detached = host & unlinked
    thread = torch_threads(trace, host & ~detached, detached)
    ids = frontend_ids(trace, host, thread)
    return OpEvents(host, detached, loose, still_open, thread, ids, python_frames)


def frontend_ids(trace: TraceColumns, host: np.ndarray, thread: np.ndarray) -> np.ndarray:
    """torch's id of each host row that is linked to no op (-1: none), which the device events with that External id
    are credited to: an op's External id; a runtime call's correlation id; an overhead event's, that of the event open
    on its thread when it started, in torch's Result tree (its ops, annotations, Python frames and the events linked
    to no op; a Python frame's is 0, none)."""
    x = trace.x
    runtime = x.cat == int(Cat.RUNTIME)
    ids = np.where(runtime, np.where(x.ext < 0, x.corr, -1), x.ext)
    ids = np.where(host, np.maximum(ids, -1), -1)
    overhead = host & (x.cat == int(Cat.OVERHEAD))
    if not overhead.any():
        return ids
    ids[overhead] = -1
    in_tree = of_cats(x.cat, ROW_CATS) & ~(runtime & (x.ext >= 0))
    on_threads = np.zeros(int(thread.max(initial=0)) + 1, bool)
    on_threads[thread[overhead]] = True
    tree = nest(x.ts, x.ts + x.dur, thread, in_tree & on_threads[thread])
    for i in np.flatnonzero(overhead).tolist():
        up = int(tree.parent[i])
        while up >= 0 and overhead[up]:  # an overhead event's own id is 0: its parent's stands for it
            up = int(tree.parent[up])
        if up >= 0 and x.cat[up] != int(Cat.PYTHON):
            ids[i] = max(int(ids[up]) if host[up] else int(x.ext[up]), -1)
    return ids


def torch_threads(trace: TraceColumns, ops: np.ndarray, detached: np.ndarray) -> np.ndarray:
    """Per event, the track torch nests it on: its own, except the detached events, which go to the thread that
    stopped the profiler in their rank (see post_thread; their own where the rank has no CPU thread)."""
    x = trace.x
    thread = x.track.copy()
    if not detached.any():
        return thread
    ranks = np.array([t.rank for t in trace.tracks] or [0], np.int64)
    for rank in distinct(ranks[x.track[detached]]).tolist():
        main = post_thread(trace, ops, rank)
        if main >= 0:
            thread[detached & (ranks[x.track] == rank)] = main
    return thread


def post_thread(trace: TraceColumns, ops: np.ndarray, rank: int) -> int:
    """The track of the thread that most likely stopped the profiler of a rank: that of its ProfilerStep#N events
    (prof.step() stops a scheduled profiler), else the process's main thread (tid equal to pid), else the CPU
    thread with the most ops; -1 without a CPU thread."""
    steps = step_events(trace, rank)
    if len(steps):
        return int(np.bincount(trace.x.track[steps]).argmax())
    cpu = [t for t in trace.tracks if t.rank == rank and t.kind == "cpu"]
    main = [t.id for t in cpu if str(t.pid) == str(t.tid)]
    if main:
        return main[0]
    if not cpu:
        return -1
    counts = np.bincount(trace.x.track[ops], minlength=len(trace.tracks))
    return max((t.id for t in cpu), key=lambda k: (int(counts[k]), -k))


def _c10d_work(trace: TraceColumns) -> np.ndarray:
    """The user annotations a c10d collective records for its work (async in torch)."""
    named = np.array([bool(BACKEND_SPAN.match(n)) for n in trace.names] + [False])
    return named[trace.x.name] & (trace.x.cat == int(Cat.USER_ANNOTATION))


def unfinished(trace: TraceColumns, host: np.ndarray) -> np.ndarray:
    """The host events still open when the window closed: Kineto ends them at the window's end and marks them
    `"finished": false` (only the few ending there are read again for their args)."""
    out = np.zeros(trace.n, bool)
    if not host.any():
        return out
    end = trace.x.ts + trace.x.dur
    last = _window_end(trace, int(end[host].max()))
    ending = np.flatnonzero(host & (end == last))
    for chunk in distinct(trace.x.chunk[ending]).tolist():  # each chunk read once: thousands may end together
        texts = chunk_events(trace, chunk)
        for i in ending[trace.x.chunk[ending] == chunk].tolist():
            pos = int(trace.x.pos[i])
            item = read_event(texts[pos]) if pos < len(texts) else None
            args = args_of(item) if item is not None else event_args(trace, i)  # a damaged chunk: as event_args reads
            out[i] = args.get("finished") is False
    return out


def _window_end(trace: TraceColumns, latest: int) -> int:
    """Where Kineto ended the open events: its `Record Window End` instant, else the latest host event's end."""
    if WINDOW_END not in trace.names or not len(trace.inst.ts):
        return latest
    marks = trace.inst.ts[trace.inst.name == trace.names.index(WINDOW_END)]
    return int(marks.max()) if len(marks) else latest


def torch_ends(trace: TraceColumns, ev: OpEvents) -> np.ndarray:
    """Each event's end as torch 2.13 reads it: an open event ends with the event it started in (its would-be
    parent on its thread), where it has one; every other event where the file ends it. (An open event under
    none ends, for torch, when the profiler stopped: the file keeps only the window's end.)"""
    x = trace.x
    end = x.ts + x.dur
    opened = ev.unfinished & ev.host
    if not opened.any():
        return end
    at_start = np.where(opened, x.ts, end)  # an open event as the instant it started
    inside = nest(x.ts, at_start, ev.thread, (ev.host & ~ev.loose) | opened)
    idx = np.flatnonzero(opened)
    around = inside.parent[idx]
    out = end.copy()
    out[idx[around >= 0]] = end[around[around >= 0]]
    return out
