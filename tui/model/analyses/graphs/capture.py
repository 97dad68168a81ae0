"""Credit replayed graph kernels to the ops, modules and source lines that launched them at capture.

Design: the credited replay is a new TraceColumns (a CreditedTrace), never special cases in the analyses.
- A capture is the stretch between a stream's Begin/EndCapture: its launch calls (cudaLaunchKernel,
  hipModuleLaunchKernel, async copies and sets) are what each replay of that graph runs, in order.
  It comes from a separate capture trace (vLLM's capture_traces/) or from the replay itself.
- Each graph launch is paired with a capture (one capture for every launch, one capture per launch
  in order when the counts agree, else the capture whose kernel names align best), and the capture's
  launches are matched to the replayed activities by kernel name in order (difflib's matching
  blocks, so a few missing or extra events on either side are tolerated, as TraceLens's
  trace_capture_merge_experimental.py tolerates them).
- For each matched launch, a copy of its capture-time stack (Python frames, modules, annotations,
  ops, and the launch call, renamed "… (replayed)") is appended to the trace on the graph launch's
  thread, laid out inside the graph launch's span in capture order (two ticks per event: strictly
  nested, never touching). The replayed kernel takes the copied launch's correlation and External id.
  The existing nesting, links, ops table, call tree, code view and roofline then credit its time to
  the captured op as if it had run eagerly, under the graph launch.
- The copies do no CPU work: their CPU time is the graph launch's own span shared out, so the self
  CPU footer is unchanged; summary's launch counts leave them out (graphs.synthetic_mask). Their
  args (shapes, kernel names) are the capture's, read lazily from the capture's file.
- Activities not matched stay linked to the graph launch. A capture that matches fewer than half the
  launches is refused (CaptureMismatch), and the replay is used as it is.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

from ...analysis import Analysis
from ...cats import Cat
from ...columns import Events, Flows, Instants
from ...errors import TraceError
from ...load.args import event_args
from ...load.merge import merge
from ...trace import TraceColumns
from .beside import capture_path
from .replay import (
    BEGIN_CAPTURE,
    EAGER_LAUNCH,
    END_CAPTURE,
    GRAPH_LAUNCH,
    Credit,
    CreditedTrace,
    graph_launches,
    graph_owner,
    name_mask,
)

LAUNCH_MATCHED = 0.9  # a graph launch is matched when this share of its activities matched its capture
ACCEPT = 0.5  # a capture is refused when fewer than this share of the launches matched
REPLAYED = " (replayed)"
LAUNCH_CALL = re.compile(r"^(?:cuda|hip|cu)\w*Launch", re.IGNORECASE)  # a capture key that names no kernel


class CaptureMismatch(TraceError):
    """The capture does not match the replay (another model, another batch size)."""


@dataclass
class Capture:
    """One stream capture: its launch calls in order, and the key each is matched by."""

    track: int
    launches: np.ndarray
    keys: list[str]


def capture_file(path: str | Path) -> Path:
    """The capture trace of a file or a folder (vLLM's capture_traces/: the newest trace in it)."""
    p = Path(path)
    if p.is_file():
        return p
    if not p.is_dir():
        raise TraceError(p, "no such capture file or folder")
    found = [f for f in p.iterdir() if f.is_file() and f.name.endswith((".json", ".json.gz")) and "capture" in f.name]
    found = found or [f for f in p.iterdir() if f.is_file() and f.name.endswith((".json", ".json.gz"))]
    if not found:
        raise TraceError(p, "capture folder holds no .json or .json.gz trace")
    return max(found, key=lambda f: (os.path.getmtime(f), f.name))


def captures(trace: TraceColumns) -> list[Capture]:
    """The stream captures of a trace: launch calls between each Begin/EndCapture pair on one thread."""
    x = trace.x
    runtime = x.cat == int(Cat.RUNTIME)
    begins = np.flatnonzero(name_mask(trace, BEGIN_CAPTURE) & runtime)
    ends = np.flatnonzero(name_mask(trace, END_CAPTURE) & runtime)
    launch = np.flatnonzero(name_mask(trace, EAGER_LAUNCH) & ~name_mask(trace, GRAPH_LAUNCH) & runtime)
    out = []
    for b in begins[np.argsort(x.ts[begins], kind="stable")].tolist():
        after = ends[(x.track[ends] == x.track[b]) & (x.ts[ends] >= x.ts[b])]
        if not len(after):
            continue
        t0, t1 = x.ts[b] + x.dur[b], int(x.ts[after].min())
        mine = launch[(x.track[launch] == x.track[b]) & (x.ts[launch] >= t0) & (x.ts[launch] + x.dur[launch] <= t1)]
        mine = mine[np.argsort(x.ts[mine], kind="stable")]
        out.append(Capture(int(x.track[b]), mine, [_capture_key(trace, int(i)) for i in mine]))
    return out


def _capture_key(trace: TraceColumns, i: int) -> str:
    name = trace.name_of(i)
    if "Memcpy" in name or "Memset" in name:
        return "Memcpy" if "Memcpy" in name else "Memset"
    return str(event_args(trace, i).get("kernel", name))


def _replay_key(trace: TraceColumns, i: int) -> str:
    cat, name = int(trace.x.cat[i]), trace.name_of(i)
    if cat == int(Cat.MEMCPY):
        return "Memcpy"
    if cat == int(Cat.MEMSET) or "fillBuffer" in name:
        return "Memset"
    return name


@dataclass
class Pairing:
    """One graph launch: its replayed activities and the capture launches matched to them (-1: none)."""

    launch: int
    replayed: np.ndarray
    matched: np.ndarray  # per replayed activity: the capture's launch call, or -1
    capture: int  # which capture (-1: none)

    @property
    def count(self) -> int:
        return int((self.matched >= 0).sum())

    @property
    def ok(self) -> bool:
        return len(self.replayed) > 0 and self.count >= LAUNCH_MATCHED * len(self.replayed)


def align(capture_keys: list[str], replay_keys: list[str]) -> np.ndarray:
    """Per replayed key, the position of the capture key matched to it in order (-1: none).

    A capture whose launches name no kernel (older traces write no "kernel" arg) is matched by position
    when it has as many launches as the replay has activities, as TraceLens does.
    """
    out = np.full(len(replay_keys), -1, np.int64)
    if len(capture_keys) == len(replay_keys) and all(LAUNCH_CALL.search(k) for k in capture_keys):
        return np.arange(len(replay_keys))
    blocks = difflib.SequenceMatcher(None, capture_keys, replay_keys, autojunk=False).get_matching_blocks()
    for a, b, size in blocks:
        out[b : b + size] = np.arange(a, a + size)
    return out


def pair(replay: TraceColumns, caps: list[Capture], owner: np.ndarray) -> list[Pairing]:
    """Pair every graph launch with a capture and match their activities by kernel name in order."""
    x = replay.x
    launches = graph_launches(replay)
    launches = launches[np.argsort(x.ts[launches], kind="stable")]
    out = []
    for k, g in enumerate(launches.tolist()):
        mine = np.flatnonzero(owner == g)
        mine = mine[np.argsort(x.ts[mine], kind="stable")]
        keys = [_replay_key(replay, int(i)) for i in mine]
        best = Pairing(g, mine, np.full(len(mine), -1, np.int64), -1)
        for c in _candidates(k, len(launches), caps, keys):
            pos = align(caps[c].keys, keys)
            found = np.where(pos >= 0, caps[c].launches[np.maximum(pos, 0)], -1) if len(caps[c].launches) else pos
            trial = Pairing(g, mine, found, c)
            if trial.count > best.count:
                best = trial
            if best.ok:
                break
        out.append(best)
    return out


def _candidates(k: int, launches: int, caps: list[Capture], keys: list[str]) -> list[int]:
    """Captures to try for the k-th launch: the k-th when there are as many, then those of equal length and names."""
    first = [k] if len(caps) == launches else ([0] if len(caps) == 1 else [])
    same = [c for c, cap in enumerate(caps) if cap.keys == keys]
    return list(
        dict.fromkeys(first + same + sorted(range(len(caps)), key=lambda c: abs(len(caps[c].keys) - len(keys)))[:8])
    )


def credit(replay: TraceColumns, capture: TraceColumns | None = None, source: str = "") -> CreditedTrace | TraceColumns:
    """The replay with its kernels credited to the capture (the replay itself when capture is None).

    Raises CaptureMismatch when fewer than half the graph launches match; returns the replay
    unchanged when it has no graph launch or no capture is found.
    """
    cap = replay if capture is None else capture
    owner = graph_owner(replay)
    caps = [c for c in captures(cap) if len(c.launches)]
    if not (owner >= 0).any() or (not caps and capture is None):
        return replay
    pairs = pair(replay, caps, owner)
    live = [p for p in pairs if len(p.replayed)]
    good = [p for p in live if p.ok]
    summary = Credit(
        source,
        sum(p.count for p in good),
        int((owner >= 0).sum()),
        len(good),
        len(pairs),
        replay.n,
    )
    if len(good) < ACCEPT * max(len(live), 1):
        raise CaptureMismatch(
            source or replay.path,
            f"the capture does not match the replay: {len(good)} of {len(live)} graph launches matched "
            f"({sum(p.count for p in live):,} of {summary.replayed:,} replayed kernels); showing the replay as it is",
        )
    return _merged(replay, cap, owner, good, summary)


def _merged(
    replay: TraceColumns, cap: TraceColumns, owner: np.ndarray, pairs: list[Pairing], summary: Credit
) -> CreditedTrace:
    """The replay plus the copies of the capture's stacks, its matched kernels relinked to them."""
    a = Analysis(cap)
    parent = a.nesting.parent
    x = replay.x.columns()
    x["corr"], x["ext"] = x["corr"].copy(), x["ext"].copy()
    next_corr = int(max(replay.x.corr.max(initial=0), cap.x.corr.max(initial=0))) + 1
    next_ext = int(max(replay.x.ext.max(initial=0), cap.x.ext.max(initial=0))) + 1
    pieces: list[Events] = []
    summary.matched = summary.launches_matched = 0
    for p in pairs:
        copy = _copy_stacks(replay, cap, parent, p, next_corr, next_ext)
        if copy is None:
            continue
        events, kernels, corr, ext = copy
        x["corr"][kernels], x["ext"][kernels] = corr, ext
        next_corr, next_ext = int(events.corr.max(initial=next_corr)) + 1, int(events.ext.max(initial=next_ext)) + 1
        pieces.append(events)
        summary.matched += len(kernels)
        summary.launches_matched += 1
    return _assemble(replay, cap, Events.from_columns(x), pieces, owner, summary)


def _copy_stacks(replay: TraceColumns, cap: TraceColumns, parent: np.ndarray, p: Pairing, corr0: int, ext0: int):
    """The copied stacks of one graph launch (capture columns, re-timed), and its kernels' new ids; None: no room."""
    hit = p.matched >= 0
    launches, kernels = p.matched[hit], p.replayed[hit]
    nodes = _stack_nodes(cap, parent, launches)
    ticks = _euler(nodes, parent)
    g = p.launch
    step = (int(replay.x.dur[g]) - 2) // max(2 * len(nodes), 1)
    if step < 1:
        return None
    ev = cap.x.take(nodes)
    enter, leave = ticks
    ev.ts = replay.x.ts[g] + 1 + enter * step
    ev.dur = (leave - enter) * step
    ev.track = np.full(len(nodes), replay.x.track[g], np.int32)
    ev.py_id = np.full(len(nodes), -1, np.int64)
    ev.py_parent = ev.py_id.copy()
    _, dense = np.unique(np.where(ev.ext >= 0, ev.ext, -1), return_inverse=True)
    ev.ext = np.where(ev.ext >= 0, ext0 + dense, -1)
    is_launch = np.isin(nodes, launches)
    ev.corr = np.where(is_launch, corr0 + np.arange(len(nodes)), -1)
    where = np.searchsorted(nodes, launches)
    return ev, kernels, ev.corr[where], ev.ext[where]


def _stack_nodes(cap: TraceColumns, parent: np.ndarray, launches: np.ndarray) -> np.ndarray:
    """The launches and their ancestors inside the capture (sorted event indices)."""
    x = cap.x
    seen = set(launches.tolist())
    frontier = launches
    while len(frontier):
        up = parent[frontier]
        up = up[up >= 0]
        up = up[x.cat[up] != int(Cat.RUNTIME)]  # the capture call's own callers stay out
        fresh = [u for u in up.tolist() if u not in seen]
        seen.update(fresh)
        frontier = np.array(fresh, np.int64)
    nodes = np.array(sorted(seen), np.int64)
    inside = _inside_capture(cap, nodes, launches)
    return nodes[inside]


def _inside_capture(cap: TraceColumns, nodes: np.ndarray, launches: np.ndarray) -> np.ndarray:
    """Nodes that lie within the launches' capture (from the first launch's start to the last one's end)."""
    x = cap.x
    t0, t1 = int(x.ts[launches].min()), int((x.ts + x.dur)[launches].max())
    begin = np.flatnonzero(name_mask(cap, BEGIN_CAPTURE) & (x.track == x.track[launches[0]]))
    end = np.flatnonzero(name_mask(cap, END_CAPTURE) & (x.track == x.track[launches[0]]))
    before, after = begin[x.ts[begin] <= t0], end[x.ts[end] >= t1]
    lo = int((x.ts[before] + x.dur[before]).max()) if len(before) else t0
    hi = int(x.ts[after].min()) if len(after) else t1
    return (x.ts[nodes] >= lo) & (x.ts[nodes] + x.dur[nodes] <= hi)


def _euler(nodes: np.ndarray, parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Enter and leave ticks of each node in a walk of the forest they make (capture order): strictly nested."""
    where = {int(v): k for k, v in enumerate(nodes.tolist())}
    kids: dict[int, list[int]] = {}
    roots: list[int] = []
    for k, v in enumerate(nodes.tolist()):
        up = where.get(int(parent[v]), -1)
        (kids.setdefault(up, []) if up >= 0 else roots).append(k)
    enter, leave = np.zeros(len(nodes), np.int64), np.zeros(len(nodes), np.int64)
    tick = 0
    stack = [(k, False) for k in reversed(roots)]
    while stack:
        k, done = stack.pop()
        if done:
            leave[k], tick = tick, tick + 1
            continue
        enter[k], tick = tick, tick + 1
        stack.append((k, True))
        stack.extend((c, False) for c in reversed(kids.get(k, [])))
    return enter, leave


def _assemble(
    replay: TraceColumns, cap: TraceColumns, x: Events, pieces: list[Events], owner: np.ndarray, summary: Credit
) -> CreditedTrace:
    """One TraceColumns: the replay's events then the copies, strings re-interned, the capture's chunks appended."""
    base = {f.name: getattr(replay, f.name) for f in fields(TraceColumns)}
    same = cap is replay
    copies = Events.concat(pieces) if pieces else Events()
    _rename_launches(copies, cap)
    first = _Piece(x, replay.names, replay.cat_names, replay.shapes, replay.inst, replay.flow)
    second = _Piece(copies, cap.names + [n + REPLAYED for n in cap.names], cap.cat_names, cap.shapes)
    identity = np.arange(max(len(replay.tracks), 1), dtype=np.int32)
    cap_chunks = 0 if same else len(replay.chunks)
    m = merge([first, second], [identity, identity], [cap_chunks, 0])
    chunks, sources, buffers = replay.chunks, list(replay.sources), dict(replay.buffers)
    if not same:
        extra = cap.chunks.copy()
        extra[:, 3] += len(replay.sources)
        chunks = np.concatenate([replay.chunks, extra])
        sources += cap.sources
        buffers |= {k + len(replay.sources): v for k, v in cap.buffers.items()}
    base |= {
        "x": m.x,
        "names": m.names,
        "cat_names": m.cat_names,
        "shapes": m.shapes,
        "chunks": chunks,
        "sources": sources,
        "buffers": buffers,
        "store": None,
    }
    replayed_by = np.concatenate([owner, np.full(len(copies), -1, np.int64)])
    return CreditedTrace(**base, replayed_by=replayed_by, credit=summary)


def _rename_launches(copies: Events, cap: TraceColumns) -> None:
    """The copied launch calls read "… (replayed)": they were not made again (names past the capture's own)."""
    if len(copies):
        copies.name = np.where(copies.cat == int(Cat.RUNTIME), copies.name + len(cap.names), copies.name)


@dataclass
class _Piece:
    """What merge() takes of a trace: its columns and string tables."""

    x: Events
    names: list
    cat_names: list
    shapes: list
    inst: Instants = field(default_factory=Instants)
    flow: Flows = field(default_factory=Flows)


def load_credited(
    path: str, use_cache: bool = True, capture: str | None = None, progress=None
) -> tuple[TraceColumns, list[str]]:
    """Load a replay and credit its graph kernels to their capture: the one given, vLLM's capture_traces/
    beside it, or the capture recorded in the replay itself. Returns the trace and what to tell the user
    (a refused capture is told, and the replay is returned as it is)."""
    from ...load.loader import load_trace

    replay = load_trace(path, use_cache=use_cache, progress=progress)
    if not len(graph_launches(replay)):
        if capture:
            return replay, [f"{capture}: not used: {path} has no graph launch to credit"]
        return replay, []
    found = Path(capture) if capture else capture_path(path)
    try:
        source = capture_file(found) if found else None
        other = load_trace(source, use_cache=use_cache) if source else None
        credited = credit(replay, other, str(source or ""))
    except CaptureMismatch as exc:
        return replay, [f"warning: {exc}"]
    except TraceError as exc:
        if capture:
            raise
        return replay, [f"warning: {exc}; showing the replay as it is"]
    if not isinstance(credited, CreditedTrace):
        return replay, []
    c = credited.credit
    where = f"the capture {c.source}" if c.source else "the capture recorded in the trace"
    return credited, [
        f"note: credited {c.matched:,} of {c.replayed:,} replayed kernels ({c.launches_matched} of {c.launches} "
        f"graph launches) to the ops that launched them in {where}"
    ]
