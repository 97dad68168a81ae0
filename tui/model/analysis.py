"""The structure of a trace, computed once on first use: nesting, self time, children, launch links.

Every derived value is a `derived` attribute: computed once per Analysis, thread-safe (a worker may
compute it while the UI asks whether it is ready), and never recomputed. Each declares its phase
(structure, link, aggregate: see PHASES), and the UI asks for a result by its descriptor
(`a.ready(Results.kernels)`), never by a string.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar, overload

import numpy as np

from .cats import BUSY_CATS, Cat, of_cats
from .code_id import files_name_the_code, fingerprint
from .code_stamp import stamp
from .lazy import bind
from .links import Links, link
from .nesting import Nesting, children_total, depth_of, nest, python_parents, subtree_sum
from .store import Arrays, Blob, Codec, Store
from .trace import TraceColumns, on_real_tracks

T = TypeVar("T")

TITLES = {  # results whose attribute name is not plain words
    "child_index": "nesting",
    "self_ns": "self times",
    "gpu_below": "GPU time under each event",
    "launches_below": "launches under each event",
    "ops_by_shape": "ops by input shape",
    "code": "time per line of code",
}
PHASES = ("structure", "link", "aggregate")  # nesting and children; launch links and what sums over them; tables


class derived(Generic[T]):  # noqa: N801 - used like functools.cached_property
    """A computed attribute: one computation per instance, behind a per-attribute lock.

    With a codec (see stored), the value is read from the trace's store when it is there and
    sound, and kept there once computed, so a re-opened trace recomputes nothing. It is kept under its
    name and the fingerprint of the code that computed it (see code_id.py): a value made by other code is
    absent, so a changed rule or table is recomputed on its own.
    """

    def __init__(self, fn: Callable[[Any], T], codec: Codec | None = None, phase: str = "structure") -> None:
        if phase not in PHASES:
            raise ValueError(f"unknown phase {phase!r} of {fn.__name__}: one of {PHASES}")
        self.fn = fn
        self.codec = codec.keeping(fn) if isinstance(codec, Blob) else codec  # a Blob() decodes to what fn returns
        self.phase = phase
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    @property
    def title(self) -> str:
        """How a view names this result while it is computed ("kernel footprints")."""
        return TITLES.get(self.name, self.name.strip("_").replace("_", " "))

    def __repr__(self) -> str:
        return f"<derived {self.name} ({self.phase})>"

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> derived[T]: ...
    @overload
    def __get__(self, obj: object, objtype: type | None = None) -> T: ...
    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:
            pass
        with obj._lock(self.name):
            if self.name not in obj.__dict__:
                obj.__dict__[self.name] = self._restore(obj)
        return obj.__dict__[self.name]

    def stored_name(self, owner: type, prefix: str = "") -> str:
        """The name the value is kept under in a store: its name, @, the fingerprint of its code."""
        return f"{prefix}{self.name}@{fingerprint((self, owner), [self], owner)}"

    def _known_name(self, store: Store, owner: type, prefix: str) -> str:
        """stored_name, read back from the store when the source files are as they were when it was kept there
        (walking the code for the fingerprint is most of a cached command's own time)."""
        if not files_name_the_code():
            return self.stored_name(owner, prefix)
        alias = f"{prefix}{self.name}#{owner.__module__}.{owner.__qualname__}@{stamp()}"
        known = store.get_blob(alias)
        if known is not None:
            return known.decode()
        name = self.stored_name(owner, prefix)
        store.put_blob(alias, name.encode())
        return name

    def kept(self, obj: Analysis) -> T | None:
        """The value when it is ready or kept in the trace's store, else None (never computes it)."""
        if self.name in obj.__dict__:
            return obj.__dict__[self.name]
        store = obj.trace.store
        if self.codec is None or store is None or (obj.base is not None and self.name in obj.SHARED):
            return None
        return self.codec.load(store, self._known_name(store, type(obj), obj.prefix), obj.trace.n)

    def _restore(self, obj: Analysis) -> T:
        if obj.base is not None and self.name in obj.SHARED:
            return getattr(obj.base, self.name)
        store = obj.trace.store
        if self.codec is None or store is None:
            return self._compute(obj)
        name = self._known_name(store, type(obj), obj.prefix)
        value = self.codec.load(store, name, obj.trace.n)
        if value is None:
            value = self._compute(obj)
            self.codec.save(store, name, value)
            # read back what was kept: memory-mapped arrays instead of private copies (a smaller steady RSS)
            kept = self.codec.load(store, name, obj.trace.n)
            value = value if kept is None else kept
        return value

    def _compute(self, obj: Analysis) -> T:
        bind(self.fn.__module__)  # the names its module imports on first use (lazy.py), in place before it runs
        return self.fn(obj)


def stored(codec: Codec, phase: str = "structure") -> Callable[[Callable[[Any], T]], derived[T]]:
    """A derived attribute kept in the trace's store (the on-disk cache) with this codec."""
    return lambda fn: derived(fn, codec, phase)


def computed(phase: str) -> Callable[[Callable[[Any], T]], derived[T]]:
    """A derived attribute of the given phase, not kept in the store."""
    return lambda fn: derived(fn, None, phase)


@dataclass
class LaneArrays:
    """The timeline's rows as runs of one array: row k is positions cuts[k]:cuts[k+1] of order."""

    order: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    prefix: np.ndarray  # running sum of durations in this order (one longer)
    cuts: np.ndarray
    track: np.ndarray  # per row
    row: np.ndarray  # per row: the display row within its track
    t_min: int
    t_max: int


class Analysis:
    """Derived structure of one TraceColumns (pure data, no formatting).

    With hide_python, Python frames are left out of the nesting (and so of the timeline's rows, the
    tree and parent/child moves): ops, annotations, runtime calls and kernels only. Such an Analysis
    keeps its derived data under its own names and takes the launch links from `base`.
    """

    SHARED = ("links", "end")  # what a frameless Analysis takes from its base rather than computing again

    def __init__(self, trace: TraceColumns, hide_python: bool = False, base: Analysis | None = None) -> None:
        self.trace = trace
        self.hide_python, self.base = hide_python, base
        self.prefix = "frameless." if hide_python else ""
        self._locks: dict[str, threading.RLock] = {}
        self._locks_guard = threading.Lock()

    def _lock(self, name: str) -> threading.RLock:
        with self._locks_guard:
            return self._locks.setdefault(name, threading.RLock())

    def ready(self, result: derived) -> bool:
        """Has this derived result been computed (so reading it costs nothing)?"""
        return self._name_of(result) in self.__dict__

    def _name_of(self, result: derived) -> str:
        """The result's attribute name, checked: a string, or a result of another class, is a bug."""
        if not isinstance(result, derived):
            raise TypeError(f"ask for a result by its descriptor (Results.kernels), not {result!r}")
        if getattr(type(self), result.name, None) is not result:
            raise TypeError(f"{type(self).__name__} has no result {result!r}")
        return result.name

    @derived
    def end(self) -> np.ndarray:
        return self.trace.x.ts + self.trace.x.dur

    @stored(Arrays(Nesting, per_event=("parent", "row", "depth", "time_parent", "killed_by", "pos", "span_end")))
    def nesting(self) -> Nesting:
        """Display nesting: time containment, then Python frames re-hung by their Python ids."""
        by_time = self.time_nesting
        nesting = replace(by_time, parent=by_time.parent.copy())  # time_parent keeps the parents by time alone
        python_parents(self.trace, nesting)
        return nesting

    @derived
    def time_nesting(self) -> Nesting:
        """The display nesting before the Python ids re-hang frames (its parent is its time_parent): all the ops
        table reads. The display nesting itself where that is ready or kept, else made first, so that the ops table
        and the re-hanging can go side by side."""
        kept = type(self).nesting.kept(self)
        if kept is not None:
            return kept
        x = self.trace.x
        shown = on_real_tracks(self.trace) & (x.cat != int(Cat.OVERHEAD)) if self.trace.n else None
        if shown is not None and self.hide_python:
            shown &= x.cat != int(Cat.PYTHON)
        return nest(x.ts, self.end, x.track, shown)

    @stored(Arrays(LaneArrays, per_event=()))
    def lane_arrays(self) -> LaneArrays:
        """The nested events by (track, display row, start), with their start, end and running busy time."""
        x, nesting = self.trace.x, self.nesting
        shown = nesting.order  # by (track, start, -end): a stable sort by (track, row) keeps it within a row
        track, row = x.track[shown].astype(np.int64), nesting.row[shown].astype(np.int64)
        order = shown[np.argsort(track * (int(row.max(initial=0)) + 1) + row, kind="stable")].astype(np.int32)
        starts, ends = x.ts[order], self.end[order]
        track, row = x.track[order], nesting.row[order]
        cuts = np.concatenate([[0], np.flatnonzero((np.diff(track) != 0) | (np.diff(row) != 0)) + 1, [len(order)]])
        first = cuts[:-1]
        return LaneArrays(
            order,
            starts,
            ends,
            np.concatenate([[0], np.cumsum(ends - starts)]),
            cuts,
            track[first] if len(order) else np.empty(0, np.int32),
            row[first] if len(order) else np.empty(0, np.int32),
            int(starts.min()) if len(order) else 0,
            int(ends.max()) if len(order) else 0,
        )

    def forget(self, result: derived) -> None:
        """Drop a derived value kept only to compute others (it is recomputed if asked for again)."""
        name = self._name_of(result)
        with self._lock(name):
            self.__dict__.pop(name, None)

    def peek(self, result: derived[T]) -> T | None:
        """The derived result if it is ready, else None (never computes: safe on the UI thread)."""
        return self.__dict__.get(self._name_of(result))

    def compute(self, result: derived[T]) -> T:
        """Compute (or read back) a result now: for workers, never the UI thread."""
        return result.__get__(self, type(self))

    @derived
    def child_index(self) -> tuple[np.ndarray, np.ndarray]:
        parent = self.nesting.parent
        kids = np.flatnonzero(parent >= 0)
        kids = kids[np.lexsort((self.trace.x.ts[kids], parent[kids]))].astype(np.int32)
        counts = np.bincount(parent[kids], minlength=self.trace.n)  # children per event: their run in kids
        starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        return kids, starts

    def children(self, i: int) -> np.ndarray:
        """Direct children of event i in the display nesting, in time order."""
        kids, starts = self.child_index
        return kids[starts[i] : starts[i + 1]]

    def descendants(self, i: int, limit: int = 100_000) -> Iterator[int]:
        """Events under i, depth first in time order (at most limit of them)."""
        stack = list(self.children(i)[::-1])
        seen = 0
        while stack and seen < limit:
            j = int(stack.pop())
            seen += 1
            yield j
            stack.extend(self.children(j)[::-1].tolist())

    @stored(Arrays())
    def self_ns(self) -> np.ndarray:
        """Each event's duration less its children's, in the display nesting."""
        dur = self.trace.x.dur
        return dur - children_total(self.nesting.parent, dur)

    @stored(Arrays(Links, per_event=("launcher",)), phase="link")
    def links(self) -> Links:
        return link(self.trace)

    @stored(Arrays())
    def tree_depth(self) -> np.ndarray:
        """Each event's depth in the display nesting (Python frames re-hung by their ids; 0: a root)."""
        return depth_of(self.nesting.parent)

    @computed("link")
    def _launch_tree(self) -> tuple[np.ndarray, np.ndarray]:
        """The display nesting with GPU work cut off its lane's annotations, and its depths."""
        x = self.trace.x
        busy = of_cats(x.cat, BUSY_CATS)
        parent = np.where(busy, -1, self.nesting.parent)
        under_busy = busy[np.maximum(parent, 0)] & (parent >= 0)
        if under_busy.any():  # GPU work holding other events (not seen in real traces): depths from scratch
            return parent, depth_of(parent)
        return parent, np.where(busy, 0, self.tree_depth).astype(np.int32)  # cut leaves: the rest keeps its depth

    @stored(Arrays(), phase="link")
    def gpu_below(self) -> np.ndarray:
        """GPU time (ns) launched from each event's subtree, through the launch links."""
        own = np.zeros(self.trace.n, np.int64)
        linked = np.flatnonzero(self.links.launcher >= 0)
        np.add.at(own, self.links.launcher[linked], self.trace.x.dur[linked])
        parent, depth = self._launch_tree
        return subtree_sum(parent, own, depth)

    @computed("link")
    def launches_below(self) -> np.ndarray:
        """How many GPU events were launched from each event's subtree."""
        own = np.bincount(self.links.launcher[self.links.launcher >= 0], minlength=self.trace.n).astype(np.int64)
        parent, depth = self._launch_tree
        return subtree_sum(parent, own, depth)
