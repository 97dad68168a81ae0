"""The trace as relational tables of numpy columns (for SQL and the API), joined by one event id everywhere.

An event's id is its index in the loaded trace (TraceColumns.x, the duration events in load order): the id
`tracetui sql`, the Python API, the MCP server and the critical path all give it, stable while the
file is unchanged (the cache is keyed by path, size and mtime). Columns here are the cached arrays
themselves where they can be (memory-mapped, never copied) and small per-track or per-name lookups
otherwise; the SQL layer joins them into the tables the user sees (tui/sql.py). Nothing here knows SQL.
Times are microseconds from the trace's origin (TraceColumns.origin), as in every --format json output.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..analyses.launches import device_callers
from ..analyses.results import Results
from ..analysis import Analysis, stored
from ..cats import GPU_CATS, Cat, of_cats
from ..nesting import depth_of
from ..steps import STEP_NAME, step_events
from ..steps import steps as step_list
from ..store import Arrays
from ..trace import TraceColumns, rank_of_events

NONE = -1  # a missing id or number in an int column (NULL in SQL, None in the API)
KINDS = [c.name.lower() for c in Cat]  # the normalized category of each Cat value


@dataclass
class Relation:
    """One table: equally long columns, and what the table and each column mean."""

    name: str
    doc: str
    columns: dict[str, np.ndarray]
    meanings: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def rows(self) -> list[dict]:
        """The rows as dicts of plain Python values."""
        names = list(self.columns)
        cols = [self.columns[k].tolist() for k in names]
        return [dict(zip(names, row, strict=True)) for row in zip(*cols, strict=True)]


def _num(value: object) -> int | None:
    """A pid or tid as an int when it is one ("stream 7" is stream 7)."""
    text = str(value).removeprefix("stream ").strip()
    return int(text) if text.lstrip("-").isdigit() else None


def tracks(trace: TraceColumns) -> Relation:
    """One row per track (a CPU thread or a GPU stream): the lane's name, its pid, tid, rank, device and stream."""
    ts = trace.tracks
    gpu = [t.kind == "gpu" for t in ts]
    pid, tid = _ints([_num(t.pid) for t in ts]), _ints([_num(t.tid) for t in ts])
    cols = {
        "track": np.arange(len(ts), dtype=np.int32),
        "lane": np.array([t.name for t in ts], dtype=object),
        "process": np.array([t.process for t in ts], dtype=object),
        "track_kind": np.array([t.kind for t in ts], dtype=object),
        "rank": np.array([t.rank for t in ts], dtype=np.int64),
        "pid": pid,
        "tid": tid,
        "device": np.where(gpu, pid, NONE) if ts else pid,
        "stream": np.where(gpu, tid, NONE) if ts else tid,
    }
    return Relation("tracks", "one row per lane: a CPU thread or a GPU stream", cols)


def _ints(values: list[int | None]) -> np.ndarray:
    return np.array([NONE if v is None else v for v in values], dtype=np.int64)


@dataclass
class EventColumns:
    """Per event: what the events table derives from the structure (the rest are the trace's own columns)."""

    parent: np.ndarray  # the display nesting's parent (NONE: a root)
    depth: np.ndarray  # levels below its root, by that parent
    step: np.ndarray  # the ProfilerStep#N it belongs to (NONE: outside every step)


def event_columns(a: Results) -> EventColumns:
    """The parent, depth and step of every event (all three from the cache once computed)."""
    facts = EventFacts(a)
    return EventColumns(a.nesting.parent, facts.event_depth, facts.event_step)


class EventFacts(Analysis):
    """What the events table adds to the structure, kept in the trace's cache beside the nesting and the links
    it is computed from (which it takes from the Results, never computing them again)."""

    SHARED: tuple[str, ...] = ("links", "end", "nesting")  # type: ignore[assignment]

    def __init__(self, results: Results) -> None:
        super().__init__(results.trace, base=results)
        self.results = results

    @stored(Arrays())
    def event_depth(self) -> np.ndarray:
        """Levels below its root, by the display nesting's parents."""
        return depth_of(self.nesting.parent.astype(np.int64)).astype(np.int32)

    @stored(Arrays())
    def event_step(self) -> np.ndarray:
        """The ProfilerStep#N each event runs in (see event_steps)."""
        return event_steps(self.results)


def event_steps(a: Results) -> np.ndarray:
    """The step number of every event: a CPU event in its rank's ProfilerStep#N span; device work in its launcher's."""
    trace = a.trace
    x = trace.x
    out = np.full(trace.n, NONE, np.int64)
    rank = rank_of_events(trace)
    for r in sorted({t.rank for t in trace.tracks}):
        sel = step_events(trace, r)
        if not len(sel):
            continue
        numbers = np.array([int(STEP_NAME.match(trace.name_of(int(i))).group(1)) for i in sel])  # type: ignore[union-attr]
        starts, ends = x.ts[sel], x.ts[sel] + x.dur[sel]
        mine = np.flatnonzero(rank == r)
        pos = np.searchsorted(starts, x.ts[mine], side="right") - 1
        inside = (pos >= 0) & (x.ts[mine] < ends[np.maximum(pos, 0)])
        out[mine[inside]] = numbers[pos[inside]]
    gpu = np.flatnonzero(of_cats(x.cat, GPU_CATS) & (a.links.launcher >= 0))
    out[gpu] = out[a.links.launcher[gpu]]
    return out


def launches(a: Results) -> Relation:
    """One row per device activity a runtime call launched (a graph launch has many); the latency only where the
    activity is a launch of its own (graphs/replay.own_launches: of a replay, its first), else NaN (NULL)."""
    x, launcher = a.trace.x, a.links.launcher
    act = np.flatnonzero(launcher >= 0)
    run = launcher[act].astype(np.int64)
    replayed = a.graph_owner[act] >= 0
    call = np.where(replayed, a.own_launch[act], run)
    cols = {
        "launch_id": run,
        "activity_id": act.astype(np.int64),
        "latency_us": np.where(call >= 0, (x.ts[act] - x.ts[np.maximum(call, 0)]) / 1000.0, np.nan),
    }
    return Relation("launches", "one row per device activity and the runtime call that launched it", cols, LAUNCHES)


LAUNCHES = {
    "launch_id": "the runtime call (cudaLaunchKernel, cudaGraphLaunch, ...): an events id",
    "activity_id": "the kernel, memcpy or memset it put on the device: an events id",
    "latency_us": "from the call's start to the activity's start (queueing included); of a graph replay only its "
    "first activity has one, from the graph launch (the others are no launches of their own: NULL)",
}


def steps(a: Results) -> Relation:
    """One row per ProfilerStep#N on each rank: its event, number, CPU span, device work and elapsed time, with the
    summary's own step rule (tui/model/steps.py), times from the trace's origin."""
    trace = a.trace
    found = step_list(trace, trace.origin, callers=device_callers(trace, a.links.launcher, a.graph_owner))
    number = {n: int(m.group(1)) for n in trace.names if (m := STEP_NAME.match(n))}
    ranks = rank_of_events(trace)
    rows = sorted(found, key=lambda s: (int(ranks[s.event]), number[s.name], s.start_us))
    col = lambda f, dt: np.array([f(s) for s in rows], dtype=dt)  # noqa: E731
    cols = {
        "id": col(lambda s: s.event, np.int64),
        "name": col(lambda s: s.name, object),
        "number": col(lambda s: number[s.name], np.int64),
        "rank": col(lambda s: int(ranks[s.event]), np.int64),
        "start_us": col(lambda s: s.start_us, np.float64),
        "dur_us": col(lambda s: s.dur_us, np.float64),
        "cpu_end_us": col(lambda s: round(s.start_us + s.dur_us, 3), np.float64),  # (ns: no float noise)
        "device_us": col(lambda s: s.device_us, np.float64),
        "end_us": col(lambda s: s.end_us, np.float64),
        "elapsed_us": col(lambda s: s.elapsed_us, np.float64),
        "queued_us": col(lambda s: s.queued_us, np.float64),
        "launches": col(lambda s: s.launches, np.int64),
    }
    return Relation("steps", "one row per ProfilerStep#N (per rank in a job), in step order", cols, STEPS)


STEPS = {
    "id": "the step's ProfilerStep#N event: an events id",
    "name": "ProfilerStep#N",
    "number": "N",
    "rank": "the rank (0 for one file)",
    "start_us": "its start",
    "dur_us": "its CPU span (as summary's steps)",
    "cpu_end_us": "start_us + dur_us: when its CPU span ended",
    "device_us": "the union of the device busy time launched inside the step (as summary's steps)",
    "end_us": "when its CPU span and its device work had both ended (as summary's steps)",
    "elapsed_us": "the step as the user waits for it: to end_us, from its start or the end of the step before",
    "queued_us": "how long into the step the device still ran work queued before it (not launched in it)",
    "launches": "the calls inside the step that put work on the device",
}


EVENTS = {
    "id": "the event's id: its index in the loaded trace (the same in every tracetui output)",
    "name": "the event's name (aten::mm, cudaLaunchKernel, a kernel's name, ProfilerStep#3, ...)",
    "cat": "its category as the trace writes it (cpu_op, user_annotation, cuda_runtime, kernel, gpu_memcpy, ...)",
    "kind": "the category normalized across profiler versions: " + ", ".join(KINDS),
    "ph": "the Chrome trace phase: X (a complete event; instants are in memory and counters)",
    "pid": "process id (a GPU's device number on device lanes; NULL where the trace writes a name)",
    "tid": "thread id (a stream on device lanes; NULL where the trace writes a name)",
    "lane": "the lane's name, as the viewer titles it (python main thread, GPU 0 stream 7, ...)",
    "rank": "the rank (0 for one file; a folder of ranks is one job)",
    "ts_us": "start, in microseconds from the trace's first event",
    "dur_us": "duration in microseconds",
    "depth": "levels below its root on its lane (0: a root)",
    "parent_id": "the enclosing event on its lane, as the viewer nests them (NULL: a root)",
    "correlation": "the correlation id that joins a runtime call to its device activity (NULL: none)",
    "external_id": "the External id that joins an op to its runtime calls and kernels (NULL: none)",
    "stream": "the device stream (device lanes only)",
    "device": "the device number (device lanes only)",
    "step": "the N of the ProfilerStep#N it runs in (device work: its launcher's; NULL: outside every step)",
}


def event_rows(a: Results, ids: np.ndarray, cols: EventColumns, track_rel: Relation | None = None) -> list[dict]:
    """The events table's rows of these ids, as plain Python values (None for NULL)."""
    trace, x = a.trace, a.trace.x
    ids = np.asarray(ids, dtype=np.int64)
    tr = track_rel or tracks(trace)
    t = x.track[ids]
    values = {
        "id": ids,
        "name": [trace.names[int(k)] for k in x.name[ids]],
        "cat": [trace.cat_names[int(k)] for k in x.cat_str[ids]],
        "kind": [KINDS[int(k)] for k in x.cat[ids]],
        "ph": ["X"] * len(ids),
        "pid": tr.columns["pid"][t],
        "tid": tr.columns["tid"][t],
        "lane": tr.columns["lane"][t],
        "rank": tr.columns["rank"][t],
        "ts_us": (x.ts[ids] - trace.origin) / 1000.0,
        "dur_us": x.dur[ids] / 1000.0,
        "depth": cols.depth[ids],
        "parent_id": cols.parent[ids],
        "correlation": x.corr[ids],
        "external_id": x.ext[ids],
        "stream": tr.columns["stream"][t],
        "device": tr.columns["device"][t],
        "step": cols.step[ids],
    }
    plain = {
        k: [_plain(k, v) for v in (col.tolist() if isinstance(col, np.ndarray) else col)] for k, col in values.items()
    }
    return [dict(zip(plain, row, strict=True)) for row in zip(*plain.values(), strict=True)]


NULLABLE = {"pid", "tid", "parent_id", "correlation", "external_id", "stream", "device", "step"}


def _plain(key: str, value: object) -> object:
    """NONE as None in the nullable columns."""
    return None if key in NULLABLE and value == NONE else value
