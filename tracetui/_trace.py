"""The public Trace: one opened trace with a method per headless command, each returning its --format json as data.

A Trace serves many threads at once: its analyses are computed once whichever threads ask (see
tui/model/analysis.py), what it builds for itself (the event columns, the SQL sessions) is built once under
its lock, and each concurrent SQL query runs on a DuckDB connection of its own (see tui/sql/session.py).
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from tui.model.errors import TraceError
from tui.model.loading import Opened, open_trace

if TYPE_CHECKING:
    import duckdb
    import numpy as np

    from tui.model.analyses.results import Results
    from tui.model.query.tables import EventColumns, Relation
    from tui.sql import Session


T = TypeVar("T")


class _once(Generic[T]):  # noqa: N801 - used like functools.cached_property
    """A cached_property built once per Trace when threads ask for it together (under the Trace's lock; from
    Python 3.12 functools.cached_property takes no lock, and before that one lock for every instance)."""

    def __init__(self, fn: Callable[[Any], T]) -> None:
        self.fn, self.name, self.__doc__ = fn, fn.__name__, fn.__doc__

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> _once[T]: ...
    @overload
    def __get__(self, obj: object, objtype: type | None = None) -> T: ...
    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:
            pass
        with obj._guard:
            if self.name not in obj.__dict__:
                obj.__dict__[self.name] = self.fn(obj)
        return obj.__dict__[self.name]


class UsageError(ValueError):
    """A call the trace cannot answer as asked (code without Python frames, roofline without shapes, ...)."""


class Trace:
    """One opened trace (a file, a folder of ranks as one job, or a folder of captures' newest).

    Each method returns what the matching command prints with --format json, as plain Python data; event ids
    are the same in every output. Make one with tracetui.load().
    """

    def __init__(self, opened: Opened) -> None:
        self._opened = opened
        self._guard = threading.RLock()  # builds the _once attributes
        self._stamp = _identity(opened.path)  # the file (or folder's files) as loaded

    def __repr__(self) -> str:
        return f"<tracetui.Trace {self.path!r}: {self.results.trace.n:,} events>"

    @property
    def path(self) -> str:
        """The path as it was given to load()."""
        return self._opened.path

    @property
    def warnings(self) -> list[str]:
        """What loading skipped or refused, one line each (the CLI prints them as `tracetui: warning: ...`); and,
        once the file changes after it was loaded, that the answers are of the trace as it was."""
        changed = _identity(self._opened.path) != self._stamp
        return (
            self._opened.warnings
            + [
                f"{self.path}: changed since it was loaded; the answers are of the trace as it was loaded, and the "
                "args of its events may no longer be read (tracetui.load it again)"
            ]
            * changed
        )

    @property
    def notes(self) -> list[str]:
        """What loading noticed (a folder of ranks or of captures, graph kernels credited to their capture)."""
        return self._opened.notes

    @property
    def _read(self) -> str:
        """The file a table was read from, as errors name it: a folder of captures' newest (as the CLI says)."""
        return self._opened.capture or str(self.path)

    @property
    def capture(self) -> str | None:
        """A folder of captures: the newest, the one opened (None for a file or a job of ranks)."""
        return self._opened.capture

    @property
    def results(self) -> Results:
        """The model's Results (every analysis, computed once on first use): for what the methods do not cover."""
        return self._opened.results

    def _doc(self, doc: dict) -> dict:
        """As the CLI prints it: a folder of captures adds which capture it is and the others."""
        if self._opened.capture is None:
            return doc
        return {"capture": self._opened.capture, "other_captures": list(self._opened.other_captures), **doc}

    def summary(self) -> dict:
        """The window, GPU busy time and utilization, launches, steps and the verdict (`tracetui summary`)."""
        from tui.reports.summary import summary_document

        return self._doc(summary_document(self.results))

    def ops(
        self,
        sort: str | None = None,
        limit: int = 0,
        group_by_shape: bool = False,
        python_frames: bool = False,
        hide_python: bool | None = None,
    ) -> dict:
        """torch's key_averages() table (`tracetui ops`): rows sorted by sort (torch's names too), limit rows (0: all).

        python_frames: Python frames as rows, as torch 2.12 and 2.13 print them (default: torch's table up to 2.11,
        a frame's time in the self time of the op it ran under). hide_python is deprecated: it is the default now.
        """
        from tui.reports.tables import ops_document
        from tui.tables.ops import check_sort

        if hide_python is not None:
            warnings.warn(
                "hide_python is deprecated: Python frames are no rows by default now; python_frames=True lists them",
                DeprecationWarning,
                stacklevel=2,
            )
        check_sort(sort)
        return self._doc(ops_document(self.results, sort, _count(limit), group_by_shape, python_frames))

    def kernels(self, sort: str | None = None, limit: int = 0) -> dict:
        """One row per GPU kernel, memcpy and memset name (`tracetui kernels`)."""
        from tui.reports.tables import kernels_document
        from tui.tables.kernels import resolve_sort

        resolve_sort(sort)
        return self._doc(kernels_document(self.results, sort, _count(limit)))

    def code(self, sort: str | None = None, limit: int = 0, all_frames: bool = False) -> dict:
        """Time per source line of a with_stack trace, with the device time launched from it (`tracetui code`)."""
        from tui.reports.tables import code_document
        from tui.tables.code import NO_FRAMES, resolve_sort

        resolve_sort(sort)
        table = self.results.code_all if all_frames else self.results.code
        if not table.frames:
            raise UsageError(f"{self._read}: {NO_FRAMES}")
        return self._doc(code_document(table, sort, _count(limit)))

    def memory(self) -> dict:
        """Peak memory per device, the ops that allocate most, what is never freed (`tracetui memory`)."""
        from tui.reports.memory import memory_document
        from tui.tables.memory import NO_MEMORY

        devices = self.results.memory
        if not devices:
            raise TraceError(self._read, NO_MEMORY)
        return self._doc(memory_document(devices))

    def roofline(
        self, sort: str | None = None, limit: int = 0, gpu: str | None = None, peaks: str | None = None
    ) -> dict:
        """FLOPs, bytes, achieved TFLOP/s and GB/s per op against the GPU's roofs (`tracetui roofline`)."""
        from tui.model.analyses.roofline.peaks import PeaksError, by_name, read_peaks
        from tui.model.analyses.roofline.points import with_device
        from tui.reports.roofline import roofline_document
        from tui.tables.roofline import HOW_TO_SHAPES, resolve_sort

        resolve_sort(sort)
        try:
            device = read_peaks(peaks) if peaks else by_name(gpu) if gpu else None
        except PeaksError as exc:
            raise UsageError(str(exc)) from None
        table = self.results.roofline
        if not table.has_shapes:
            raise UsageError(f"{self._read}: {HOW_TO_SHAPES}")
        return self._doc(roofline_document(with_device(table, device) if device else table, sort, _count(limit)))

    def explain(self) -> dict:
        """What the patterns in the trace mean, each finding with its figures as numbers (`tracetui explain`)."""
        from tui.reports.explain import explain_document

        return self._doc(explain_document(self.results))

    def critical(
        self, step: int | None = None, annotation: str | None = None, instance: int = 0, what_if: Iterable[str] = ()
    ) -> dict:
        """The critical path of a step (or an annotation's instance), what bounds it, and what-if estimates
        (`tracetui critical`)."""
        from tui.model.analyses.critical import WhatIfError, WindowError
        from tui.reports.critical import critical_document

        try:
            doc = critical_document(
                self.results, step=step, annotation=annotation, instance=instance, what_if=tuple(what_if)
            )
        except WindowError as exc:
            raise UsageError(f"{self.path}: {exc}") from None
        except WhatIfError as exc:
            raise UsageError(str(exc)) from None
        return self._doc(doc)

    def breakdown(self, step: int | None = None, by: str = "rank", idle_stats: bool = False) -> dict:
        """Where the device's time goes (`tracetui breakdown`): per device (by "rank") or per stream (by "stream"),
        compute, communication, copies, their overlaps and idle time; each stream's idle time by cause (host wait,
        other stream, between kernels, other). step: ProfilerStep#N on every rank (default: the whole trace).
        idle_stats: also the count, mean, std, quartiles and maximum of each cause's idle intervals per stream
        (`--idle-stats`, key idle_stats)."""
        from tui.model.analyses.breakdown import WindowMissing
        from tui.reports.breakdown import breakdown_document
        from tui.tables.breakdown import BY

        if by not in BY:
            raise UsageError(f"by must be one of {', '.join(BY)}, got {by!r}")
        try:
            return self._doc(breakdown_document(self.results, step, by, idle_stats))
        except WindowMissing as exc:
            raise UsageError(f"{self.path}: {exc}") from None

    def queues(self) -> dict:
        """Per stream: its launch queue (time-weighted mean, HTA's mean per sample, p50, p95, max, time full) and its
        launches' delays and outliers (`tracetui kernels --queues`)."""
        from tui.reports.queues import queues_document

        return self._doc(queues_document(self.results))

    def op_kernels(self, sort: str | None = None, limit: int = 0) -> dict:
        """Per op and the kernel sequence it launched: calls, op-to-launch and launch-to-start delays, device time
        per call (`tracetui ops --kernels`); sort: count, op_to_launch, launch_to_start, device, name."""
        from tui.reports.op_kernels import op_kernels_document
        from tui.tables.op_kernels import resolve_sort

        resolve_sort(sort)
        return self._doc(op_kernels_document(self.results, sort, _count(limit)))

    def sequences(self, min_length: int = 3, top: int = 10) -> dict:
        """The recurring kernel sequences: op, stack, kernels, count, total and mean device time, what fusing each
        would save on the critical path (`tracetui kernels --sequences`); top 0: all."""
        from tui.reports.sequences import sequences_document

        if min_length < 2:
            raise UsageError("min_length: a sequence has 2 kernels at least")
        return self._doc(sequences_document(self.results, min_length, _count(top, "top")))

    def export(
        self,
        path: str | os.PathLike[str],
        counters: Iterable[str] = ("queue", "bandwidth", "critical"),
        step: int | None = None,
    ) -> dict:
        """Write the trace as Chrome JSON with counters and the critical path added (`tracetui export`): every
        original event as it was, then the kinds asked for (queue, bandwidth, critical; step: the critical path of
        ProfilerStep#N, default the slowest). Never over the trace itself. Returns what was written and added."""
        from tui.model.analyses.critical import WindowError
        from tui.model.export import ExportError, export

        try:
            done = export(self.results, path, list(counters), step)
        except (ExportError, WindowError) as exc:
            raise UsageError(str(exc) if isinstance(exc, ExportError) else f"{self.path}: {exc}") from None
        return {"path": done.path, "added": done.added, "left_out": done.left_out, "notes": done.notes}

    def steps(self) -> list[dict]:
        """One row per ProfilerStep#N: its event id, number, rank, CPU span, device work, end and elapsed time
        (what `tracetui steps --format json` prints under "steps"; the SQL steps table)."""
        from tui.reports.steps import step_rows

        return step_rows(self.results)

    def events(
        self,
        name: str | None = None,
        cat: str | None = None,
        start_us: float | None = None,
        end_us: float | None = None,
        limit: int = 1000,
        offset: int = 0,
    ) -> list[dict]:
        """Events as rows of the SQL events table, in time order: name a regular expression (case-insensitive, as
        the viewer's search), cat a category as written or normalized (kernel, cpu_op, cuda_runtime, runtime),
        a window [start_us, end_us] keeps those overlapping it (us from the first event); limit 0: all."""
        ids = self._find(name, cat, start_us, end_us)
        return self._rows_of(_page(ids, offset, limit))

    def event(self, id: int) -> dict:  # noqa: A002 - the id, as every table names it
        """One event by id: its row, self time, args, parents, children, its launch or the device work it launched,
        and its flow arrows, every other event by id."""
        from tui.model.query.lookup import event_document

        return event_document(self.results, id, self._event_columns, self._lanes)

    def sql(self, query: str) -> dict:
        """Run a DuckDB query over the trace's tables (see `tracetui sql TRACE --schema`): {"columns", "rows"}."""
        answer = self._session.query(query)
        return {"columns": answer.columns, "rows": [dict(zip(answer.columns, r, strict=True)) for r in answer.rows]}

    def duckdb(self) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection with every table registered (for .df(), .arrow(), COPY ... TO a file): a new one
        each call, on one database, so each thread can have its own (the tables it creates are everyone's)."""
        from tui.sql import TABLES

        self._session.ensure(list(TABLES))
        return self._session.cursor()

    def _find(self, name: str | None, cat: str | None, start_us: float | None, end_us: float | None) -> np.ndarray:
        from tui.model.query.lookup import find_events

        return find_events(self.results, name, cat, start_us, end_us)

    def _rows_of(self, ids: np.ndarray) -> list[dict]:
        from tui.model.query.tables import event_rows

        return event_rows(self.results, ids, self._event_columns, self._lanes)

    @_once
    def _event_columns(self) -> EventColumns:
        from tui.model.query.tables import event_columns

        return event_columns(self.results)

    @_once
    def _lanes(self) -> Relation:
        from tui.model.query.tables import tracks

        return tracks(self.results.trace)

    @_once
    def _session(self) -> Session:
        from tui.sql import Session

        return self._sharing(Session(self.results))

    @_once
    def _locked(self) -> Session:
        """A session whose queries only read, no file among them, each within the time limit (the MCP server's)."""
        from tui.sql import Session, timeout_setting

        return self._sharing(Session(self.results, locked=True, timeout_s=timeout_setting()))

    def _sharing(self, session: Session) -> Session:
        session._event_columns, session._tracks = self._event_columns, self._lanes
        return session


def _count(value: int, what: str = "limit") -> int:
    """A count of rows (a limit, 0: all; an offset), checked."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UsageError(f"{what} must be 0 or more, got {value!r}" + (" (0: all)" if what == "limit" else ""))
    return value


def _page(ids: np.ndarray, offset: int, limit: int) -> np.ndarray:
    """limit ids from offset (limit 0: all from offset)."""
    start = _count(offset, "offset")
    return ids[start : start + limit] if _count(limit) else ids[start:]


def _identity(path: str | os.PathLike[str]) -> tuple:
    """A file's size, mtime and inode (a folder's: each of its files'), to tell that it changed (() unreadable)."""
    from tui.model.samples import resolve

    try:
        real = Path(resolve(os.fspath(path)))
        if real.is_dir():
            return tuple(sorted((p.name, *_stat(p)) for p in real.iterdir() if p.is_file()))
        return _stat(real)
    except (OSError, ValueError):
        return ()


def _stat(p: Path) -> tuple[int, int, int]:
    st = p.stat()
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def load(path: str | os.PathLike[str], *, cache: bool = True, graph_capture: str | None = None) -> Trace:
    """Open a trace: a .json or .json.gz file, a folder of per-rank traces (one job), a folder of captures (its
    newest), or demo:NAME, a sample shipped with tracetui (`tracetui demo --list`). Through the on-disk cache
    unless cache=False. Raises TraceError (one line naming the file)."""
    from tui.model.snapshot.read import is_snapshot

    if is_snapshot(os.fspath(path)):
        raise UsageError(f"{os.fspath(path)}: a memory snapshot, not a trace: open it with tracetui.snapshot(path)")
    return Trace(open_trace(Path(path), cache=cache, graph_capture=graph_capture))


def _opened(x: str | os.PathLike[str] | Trace, cache: bool) -> Trace:
    return x if isinstance(x, Trace) else load(x, cache=cache)


def diff(
    a: str | os.PathLike[str] | Trace,
    b: str | os.PathLike[str] | Trace | None = None,
    *,
    limit: int = 20,
    cache: bool = True,
) -> dict:
    """Compare two traces (`tracetui diff A B`): summaries, steps, and the ops and kernels that changed most
    (limit rows, 0: all). b None: a is a folder of captures, and its newest two are compared (A the older).
    Two memory snapshots: what grew, by frame (as Snapshot.diff)."""
    from tui.model.analyses.diff import diff as compare
    from tui.model.snapshot.read import is_snapshot
    from tui.reports.diff import diff_document

    if any(isinstance(x, (str, os.PathLike)) and is_snapshot(os.fspath(x)) for x in (a, b)):  # two memory snapshots
        from tui.model.snapshot import open_snapshot
        from tui.model.snapshot.diff import diff as grew
        from tui.tables.snapshot_diff import document

        if not (isinstance(a, (str, os.PathLike)) and isinstance(b, (str, os.PathLike))):
            raise UsageError("diff compares two of a kind: two traces, or two memory snapshots")
        snaps = [open_snapshot(os.fspath(x), cache=cache) for x in (a, b)]
        return document(grew(snaps[0], snaps[1]), _count(limit))
    if b is None:
        a, b = _newest_two(a)
    ta, tb = _opened(a, cache), _opened(b, cache)
    return diff_document(compare(ta.results, tb.results), _count(limit), (ta.path, tb.path))


def _newest_two(folder: str | os.PathLike[str] | Trace) -> tuple[str, str]:
    from tui.model.load.folder import list_captures

    found = [] if isinstance(folder, Trace) else list_captures(os.fspath(folder))
    if len(found) < 2:
        what = "a folder of 1 capture" if found else "a job of ranks" if os.path.isdir(str(folder)) else "one trace"
        raise UsageError(f"diff takes two traces, or a folder of two captures or more ({folder} is {what})")
    return str(found[1]), str(found[0])


def ranks(
    folder: str | os.PathLike[str],
    *,
    engine: str = "local",
    scheduler: str = "",
    workers: int = 0,
    cache: bool = True,
) -> dict:
    """One row per rank of a folder of per-rank traces, and what the job shows (`tracetui ranks DIR`): engine
    "local" (a process pool of workers processes, 0: one per core) or "dask" (scheduler: the cluster's address)."""
    from tui.model.jobs import run_job
    from tui.model.load.folder import list_captures
    from tui.model.samples import resolve
    from tui.reports.ranks import ranks_document

    path = resolve(folder)  # demo:NAME: a shipped sample
    if not os.path.exists(path):
        raise TraceError(folder, "no such file or folder")
    if engine not in ("local", "dask"):
        raise UsageError(f"engine must be local or dask, got {engine!r}")
    if scheduler and engine != "dask":
        raise UsageError("scheduler goes with engine='dask'")
    if found := list_captures(path):
        raise UsageError(f"{path}: a folder of {len(found)} captures, not a job of ranks (no file names a rank)")
    return ranks_document(run_job(path, cache, engine, scheduler, _count(workers, "workers")))
