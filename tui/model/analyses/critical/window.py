"""The window a critical path covers: a ProfilerStep, the K-th span of an annotation, or the whole trace."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...cats import GPU_CATS, Cat, of_cats
from ...sets import distinct
from ...steps import STEP_NAME, step_events
from ...trace import TraceColumns
from .classes import COLLECTIVE_OP, LAUNCH_CALL


class WindowError(ValueError):
    """A window the trace does not have (no such step, annotation or instance): a usage error."""


@dataclass(frozen=True)
class Window:
    """A span of one rank's CPU time (ns, raw clock); event -1 is the whole trace.

    The path runs from start to the later of end and the end of the device work launched inside the
    window (a step's kernels finish after its CPU side returns).
    """

    name: str
    start: int
    end: int
    event: int
    rank: int


def find_window(
    trace: TraceColumns,
    step: int | None = None,
    annotation: str | None = None,
    instance: int = 0,
    rank: int | None = None,
) -> Window:
    """ProfilerStep#step, the instance-th span whose name holds annotation, or the slowest step (else the trace; the
    default window the viewer and the verdict read is the typical step, Results.typical_window);
    of one rank, if given (a folder of ranks: every rank's otherwise)."""
    if step is not None:
        return _step(trace, step, rank)
    if annotation is not None:
        return _annotation(trace, annotation, instance, rank)
    steps = step_events(trace, rank)
    if len(steps):
        return span_window(trace, int(steps[np.argmax(trace.x.dur[steps])]))
    return whole_trace(trace, rank)


def span_window(trace: TraceColumns, i: int) -> Window:
    """The window of one CPU span (a step, an annotation, an op)."""
    x = trace.x
    return Window(trace.name_of(i), int(x.ts[i]), int(x.ts[i] + x.dur[i]), i, trace.track_of(i).rank)


def whole_trace(trace: TraceColumns, rank: int | None = None) -> Window:
    """The work of one rank (the first, by default), from its first start to its last end: the events of its
    streams and of the threads that do the work (see working_tracks); a thread that only waits, such as a
    watchdog asleep across the window, neither starts nor ends it."""
    x = trace.x
    rank = min(t.rank for t in trace.tracks) if rank is None else rank
    if not _on_rank(trace, rank, None).any():
        raise WindowError("the trace holds no events" + (f" of rank {rank}" if trace.job else ""))
    mine = _on_rank(trace, rank, working_tracks(trace, rank))
    return Window("the whole trace", int(x.ts[mine].min()), int((x.ts[mine] + x.dur[mine]).max()), -1, rank)


def working_tracks(trace: TraceColumns, rank: int) -> np.ndarray:
    """Per track: does it do the rank's work? Its streams, and the CPU threads that launch device work (on a trace
    without launches, the threads that run ops or collectives; without ops either, every thread). A thread that launches nothing
    and runs no op (Python frames and annotations only: a watchdog's wait, tqdm's monitor) is left out."""
    x, tracks = trace.x, trace.tracks
    mine = np.array([t.rank == rank and t.kind != "meta" for t in tracks] or [False])
    gpu = mine & np.array([t.kind == "gpu" for t in tracks] or [False])
    cpu = mine & ~gpu
    launch_names = np.array([bool(LAUNCH_CALL.search(n)) for n in trace.names] or [False])
    collective = np.array([bool(COLLECTIVE_OP.search(n)) for n in trace.names] or [False])
    runtime = x.cat == int(Cat.RUNTIME)
    ops = of_cats(x.cat, (Cat.CPU_OP, Cat.RUNTIME)) | collective[x.name]  # gloo's threads: collectives
    for test in (runtime & launch_names[x.name], ops):
        doing = np.zeros(len(tracks), bool)
        doing[distinct(x.track[test])] = True
        if (doing & cpu).any():
            return gpu | (doing & cpu)
    return mine


def _on_rank(trace: TraceColumns, rank: int, tracks: np.ndarray | None) -> np.ndarray:
    ranks = np.array([t.rank == rank and t.kind != "meta" for t in trace.tracks] or [False])
    return (ranks if tracks is None else ranks & tracks)[trace.x.track]


def _step(trace: TraceColumns, number: int, rank: int | None = None) -> Window:
    steps = step_events(trace, rank)
    for i in steps.tolist():
        m = STEP_NAME.match(trace.name_of(i))
        if m and int(m.group(1)) == number:
            return span_window(trace, i)
    have = sorted({int(m.group(1)) for i in steps.tolist() if (m := STEP_NAME.match(trace.name_of(i)))})
    if not have:
        raise WindowError(f"no ProfilerStep#{number}: the trace has no ProfilerStep spans (leave out --step)")
    if len(have) == 1:
        raise WindowError(f"no ProfilerStep#{number}; the trace has ProfilerStep#{have[0]} only")
    run = have == list(range(have[0], have[-1] + 1))
    listed = f"#{have[0]} to #{have[-1]}" if run else ", ".join(f"#{n}" for n in have[:12])
    raise WindowError(f"no ProfilerStep#{number}; the trace has ProfilerStep{listed}")


def annotation_spans(trace: TraceColumns, annotation: str, rank: int | None = None) -> np.ndarray:
    """The CPU spans whose name holds annotation, in time order (the GPU's copies of annotations left out)."""
    hit = np.array([annotation in n for n in trace.names] or [False])
    x = trace.x
    cpu = np.array([t.kind == "cpu" and (rank is None or t.rank == rank) for t in trace.tracks] or [False])
    gpu = of_cats(x.cat, (*GPU_CATS, Cat.OVERHEAD))
    sel = np.flatnonzero(hit[x.name] & cpu[x.track] & ~gpu)
    return sel[np.argsort(x.ts[sel], kind="stable")]


def _annotation(trace: TraceColumns, annotation: str, instance: int, rank: int | None = None) -> Window:
    spans = annotation_spans(trace, annotation, rank)
    if not len(spans):
        raise WindowError(f"no span's name holds {annotation!r}")
    if not 0 <= instance < len(spans):
        raise WindowError(
            f"--instance {instance}: {len(spans)} span(s) hold {annotation!r} (instances 0-{len(spans) - 1})"
        )
    return span_window(trace, int(spans[instance]))
