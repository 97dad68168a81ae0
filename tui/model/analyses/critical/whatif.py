"""What-if: the window's graph re-solved with some edges faster, slower or gone.

The specs a user may write are GRAMMAR's forms (FACTOR: how many times faster; 0: gone); the same table parses
them, and gives the CLI's help, MCP's description and the README's table their words. Factors of several specs
that touch one edge multiply. The order of work stays as recorded: a kernel still runs after the one before it
on its stream, an op after the one before it on its thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ...analysis import Analysis
from ...cats import BUSY_CATS, Cat
from ...sets import distinct
from ...steps import step_events
from ..graphs.replay import graph_owner
from ..kernel_roles import device_class
from ..kernel_select import Selector, SelectorError
from ..kernel_select import parse as selector
from .classes import Edge, Kind
from .graph import Graph
from .path import CriticalPath, graph, path_of, walk
from .replay import Replayed, replayed
from .solve import solve
from .unmatched import unmatched
from .window import Window, span_window, whole_trace

DEVICE_CATS = tuple(int(c) for c in BUSY_CATS)
_FACTOR = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*[x×]?\s*$")


class WhatIfError(ValueError):
    """A --what-if spec that does not parse or matches nothing in the window: a usage error naming the spec."""


@dataclass(frozen=True)
class Form:
    """One form of a --what-if spec: what it touches (Spec.what, which _match reads), how it is written and what it
    changes (the README's table, word for word), its words in the CLI's help and MCP's description, and the rules
    parse_spec holds it to.

    pattern: "needed" (what:REGEX=F), "none" (what=F) or "optional" (graphs, graphs:REGEX).
    factor: "any" (F times faster, 0: gone), "zero" (only removed, said by `only`) or "none" (graphs: no factor).
    example: a spec of this form that matches on a sample (MCP's description; a test runs each).
    """

    what: str
    written: tuple[str, ...]
    changes: str
    brief: str
    example: str
    pattern: Literal["needed", "none", "optional"] = "needed"
    factor: Literal["any", "zero", "none"] = "any"
    only: str = ""


GRAMMAR: tuple[Form, ...] = (
    Form(
        "kernel",
        ("kernel:REGEX=F",),
        "the device activities whose name matches (kernels, copies, memsets)",
        "the kernels, copies and memsets whose name matches",
        "kernel:gemm=2",
    ),
    Form(
        "kernel",
        ("kernel:role=ROLE=F",),
        "the device activities of a role, as the kernels table names it (`gemm`, `attention`, "
        "`elementwise\\|reduction`, `triton`, `data movement`; case, spaces and punctuation forgiven, a term may start "
        "any word of a role); also `unit=matrix\\|vector` and `dtype=fp32`, joined by commas: "
        "`kernel:role=gemm,unit=vector,dtype=fp32=8`",
        "a kernel role: gemm, attention, ...; also unit= and dtype=",
        "kernel:role=gemm=2",
    ),
    Form("op", ("op:REGEX=F",), "the self time of CPU events whose name matches", "CPU ops' self time", "op:mm=2"),
    Form(
        "sync",
        ("sync:REGEX=0",),
        "the waits of the blocking calls whose name, or an enclosing op's, matches",
        "a synchronize removed",
        "sync:Synchronize=0",
        factor="zero",
        only="a synchronize can only be removed",
    ),
    Form(
        "launch",
        ("launch=0",),
        "launch delays and the CPU time of launch calls (only those: not what CUDA graphs do)",
        "the launch calls and delays; any F",
        "launch=0",
        pattern="none",
    ),
    Form("cpu", ("cpu=F",), "all CPU time on every thread", "all CPU work", "cpu=2", pattern="none"),
    Form(
        "graphs",
        ("graphs", "graphs:REGEX"),
        "the region as one CUDA graph replay per instance: its CPU work (Python, dispatch, the compiled graph's "
        "wrapper, every launch) gone, one replay's CPU cost instead, its kernels back to back in their recorded "
        "order and durations; the region is the compiled graphs (`## Call CompiledFxGraph … ##`) when the window has "
        "them, else the step's forward and backward (all its CPU work but the optimizer's and data loading), or the "
        "spans REGEX names",
        "the compiled graphs, the forward and backward, or REGEX's spans as CUDA graph replays",
        "graphs",
        pattern="optional",
        factor="none",
    ),
)
FORMS = {f.what: f for f in reversed(GRAMMAR)}  # what -> its first form (the rules of a what's forms agree)
WHATS = tuple(dict.fromkeys(f.what for f in GRAMMAR))


def grammar_help() -> str:
    """The forms as the CLI's help says them: "kernel:REGEX=F (the kernels ...); ..."."""
    return "; ".join(f"{' or '.join(f.written)} ({f.brief})" for f in GRAMMAR)


def grammar_examples() -> str:
    """The forms by example, as MCP's description gives them: "'kernel:gemm=2' (the kernels ...), ..."."""
    return ", ".join(f"{f.example!r} ({f.brief})" for f in GRAMMAR)


def grammar_table() -> list[str]:
    """The README's table rows, one per form: "| `kernel:REGEX=F` | the device activities ... |"."""
    return [f"| {', '.join(f'`{w}`' for w in f.written)} | {f.changes} |" for f in GRAMMAR]


@dataclass(frozen=True)
class Spec:
    """One change: what it touches, the pattern names must match ("" for all), the factor (times faster; 0: gone)."""

    text: str
    what: str  # kernel | op | sync | launch | cpu | graphs | event | events
    pattern: str = ""
    factor: float = 2.0
    event: int = -1  # what == "event": one event (a device activity, or a CPU event with what runs under it)
    events: tuple[int, ...] = ()  # what == "events": these device activities' spans and CPU events' own time


@dataclass
class WhatIf:
    """The path before and after the changes; matched: per spec, the distinct names it touched (the first few);
    on_path: whether the changes alter an edge of the recorded path (one that saves nothing is off it, or is on it
    and a path as long takes its place)."""

    specs: list[Spec]
    before: CriticalPath
    after: CriticalPath
    matched: list[list[str]] = field(default_factory=list)
    caveats: list[tuple[str, int]] = field(default_factory=list)  # what the changes could not model, with a count
    on_path: bool = True

    @property
    def saving_ns(self) -> int:
        return self.before.length_ns - self.after.length_ns


def parse_spec(text: str) -> Spec:
    """A spec as written on the command line (raises WhatIfError saying what is wrong with it)."""
    what, sep, rest = text.partition(":")
    if not sep:
        what, _, rest = text.partition("=")
        what, rest = what.strip(), "=" + rest if "=" in text else ""
    what = what.strip()
    form = FORMS.get(what)
    if form is not None and form.factor == "none" and "=" not in rest:
        return _graphs_spec(text, rest if sep else "")
    if form is None:
        raise WhatIfError(f"--what-if {text!r}: start it with one of {', '.join(WHATS)} (e.g. kernel:gemm=2)")
    pattern, eq, factor_text = rest.rpartition("=")
    if not eq:
        raise WhatIfError(f"--what-if {text!r}: say how much faster after '=' (e.g. {what}{':REGEX' if sep else ''}=2)")
    if form.pattern == "none" and pattern:
        raise WhatIfError(f"--what-if {text!r}: {what} takes no pattern ({what}=FACTOR)")
    if form.pattern == "needed" and not pattern:
        raise WhatIfError(f"--what-if {text!r}: give a pattern ({what}:REGEX=FACTOR)")
    factor = _factor(text, factor_text)
    if form.factor == "zero" and factor != 0:
        raise WhatIfError(f"--what-if {text!r}: {form.only} ({form.written[0]})")
    try:
        if what != "kernel" or selector(pattern) is None:
            re.compile(pattern)
    except SelectorError as exc:
        raise WhatIfError(f"--what-if {text!r}: {exc}") from None
    except re.error as exc:
        raise WhatIfError(f"--what-if {text!r}: bad regular expression: {exc}") from None
    return Spec(text, what, pattern, factor)


def _graphs_spec(text: str, pattern: str) -> Spec:
    """graphs, or graphs:REGEX: the region as CUDA graph replays (no factor: the region's CPU work is gone)."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise WhatIfError(f"--what-if {text!r}: bad regular expression: {exc}") from None
    return Spec(text, "graphs", pattern, 0.0)


def _factor(text: str, value: str) -> float:
    m = _FACTOR.match(value)
    if not m:
        raise WhatIfError(f"--what-if {text!r}: the factor must be a number of times faster, or 0 for gone")
    return float(m.group(1))


def recorded(a: Analysis, window: Window, replayed_by: np.ndarray) -> tuple[Graph, CriticalPath]:
    """The window's graph and its path as recorded: what every what-if on the window starts from."""
    g = graph(a, window, replayed_by)
    return g, path_of(a, g, None, None)


def what_if(
    a: Analysis,
    window: Window,
    specs: list[Spec],
    replayed_by: np.ndarray,
    base: tuple[Graph, CriticalPath] | None = None,
) -> WhatIf:
    """The window's path as recorded and with every spec applied at once (base: recorded() of the window, when
    several what-ifs share it)."""
    g, before = base or recorded(a, window, replayed_by)
    scale = np.ones(len(g.e))
    alive = np.ones(len(g.e), bool)
    matched: list[list[str]] = []
    replays: list[Replayed] = []
    for spec in specs:
        if spec.what == "graphs":
            replays.append(_replay(a, g, spec, window))
            matched.append(replays[-1].names)
            continue
        hit, gone, names = _match(a, g, spec)
        if not hit.any() and not gone.any():
            raise WhatIfError(unmatched(a, g, spec.text, spec.what == "kernel"))
        scale[hit] *= 0.0 if spec.factor == 0 else 1.0 / spec.factor
        alive &= ~gone
        matched.append(names)
    weight = g.dp_weight() * scale
    for r in replays:  # a replay sets its edges' weights outright (other specs' factors still apply on top)
        weight[r.edges] = r.weights * scale[r.edges]
    times, bind = solve(g, weight, alive)
    caveats = [("graph_syncs", r.syncs) for r in replays if r.syncs]
    caveats += [(_replay_cost(r), r.cpu_ns) for r in replays if len(r.regions)]
    caveats += [("already_replayed", r.already) for r in replays if r.already]
    one_time = {int(i) for r in replays for i in r.one_time.tolist()}
    on_path = sum(it.dur_ns for it in before.items if it.event in one_time)
    caveats += [("one_time_launches", on_path)] if on_path else []
    changed = (weight != g.dp_weight()) | ~alive
    return WhatIf(specs, before, path_of(a, g, times, bind), matched, caveats, _on_path(g, changed))


def _on_path(g: Graph, changed: np.ndarray) -> bool:
    """Does a change alter an edge of the recorded path (one that lasts)? If not, it can save nothing."""
    ks = np.asarray(walk(g, g.ts, g.bind)[0], np.int64)
    lasting = ks[g.ts[g.e.dst[ks]] > np.maximum(g.ts[g.e.src[ks]], g.start)]
    return bool(changed[lasting].any())


def _replay_cost(r: Replayed) -> str:
    """Where a replay's CPU cost came from: this trace, or the default for a compiled graph or a bare launch."""
    if r.measured:
        return "replay_cpu_trace_trees" if r.compiled else "replay_cpu_trace"
    return "replay_cpu_trees" if r.compiled else "replay_cpu_launch"


NO_DEVICE_WORK = (
    "the trace records no device work (no kernel, copy or set), and a CUDA graph replays only that: nothing to replay"
)


def _replay(a: Analysis, g: Graph, spec: Spec, window: Window) -> Replayed:
    if not np.isin(a.trace.x.cat, DEVICE_CATS).any():  # what a replay would remove is the ops' own work
        subject = a.trace.name_of(spec.event)[:40] if spec.event >= 0 else f"--what-if {spec.text!r}"
        raise WhatIfError(f"{subject}: {NO_DEVICE_WORK}")
    found = replayed(a, g, spec.pattern, spec.event)
    if found.already:  # the run replays graphs there already: nothing to re-simulate, the step as recorded
        return found
    if not len(found.regions) and spec.event >= 0:
        name = a.trace.name_of(spec.event)[:40]
        raise WhatIfError(f"{name} has no CPU work on the critical path graph of {window.name}: nothing to replay")
    if not len(found.regions):
        what = f"no span matching /{spec.pattern}/" if spec.pattern else "no step work or compiled graph"
        raise WhatIfError(f"--what-if {spec.text!r}: {window.name} has {what} to replay as a CUDA graph")
    return found


def _match(a: Analysis, g: Graph, spec: Spec) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The edges a spec scales, the edges it removes, and the names it touched."""
    e, none = g.e, np.zeros(len(g.e), bool)
    if spec.what == "cpu":
        return (e.rule == int(Edge.CPU)) | (e.rule == int(Edge.WAKE)), none, []
    if spec.what == "launch":
        calls = np.isin(e.owner, g.launch_calls) & (e.rule == int(Edge.CPU))
        return (e.rule == int(Edge.LAUNCH)) | calls, none, []
    if spec.what == "event":
        return _event_edges(a, g, spec.event), none, [a.trace.name_of(spec.event)]
    if spec.what == "events":
        mine = np.isin(e.owner, np.asarray(spec.events, np.int64))
        hit = mine & (device_work(g) | (e.rule == int(Edge.CPU)))
        return hit, none, _names(a, e.owner[hit])
    if spec.what == "sync":
        return _sync_edges(a, g, spec.pattern)
    picked = selector(spec.pattern) if spec.what == "kernel" else None
    chosen = _named(a, e.owner, spec.pattern) if picked is None else _selected(a, e.owner, picked)
    hit = (device_work(g) if spec.what == "kernel" else e.rule == int(Edge.CPU)) & chosen
    return hit, none, _names(a, e.owner[hit])


def device_work(g: Graph) -> np.ndarray:
    """Per edge: is it a device activity's own work? Its span, and the stretch from its start to the start of the
    next activity on its stream when that one starts before it ends (a programmatic dependent launch, a graph's
    overlapped nodes: the next one waits inside for this one's work, see lanes.device_lanes), so a faster activity
    lets the next one go sooner there too."""
    e = g.e
    return (e.rule == int(Edge.DEVICE)) | ((e.rule == int(Edge.STREAM)) & (e.kind != int(Kind.WAIT)))


def _selected(a: Analysis, owner: np.ndarray, picked: Selector) -> np.ndarray:
    """Per owner: is it a device activity the selector picks (by its class: role, unit, dtype)?"""
    x = a.trace.x
    ok = owner >= 0
    kernel = x.cat[owner[ok]] == int(Cat.KERNEL)
    keys, inv = np.unique(x.name[owner[ok]].astype(np.int64) * 2 + kernel, return_inverse=True)
    classes = [device_class(a.trace.names[int(k) // 2], bool(k % 2)) for k in keys.tolist()]
    hit = np.zeros(len(owner), bool)
    hit[ok] = np.array([picked.matches(c) for c in classes], bool)[inv] if len(keys) else False
    return hit


def _named(a: Analysis, owner: np.ndarray, pattern: str) -> np.ndarray:
    """Per owner: does its name match (-1 never does)?"""
    rx = re.compile(pattern)
    x = a.trace.x
    ok = owner >= 0
    names, inv = np.unique(x.name[owner[ok]], return_inverse=True)
    hit = np.zeros(len(owner), bool)
    hit[ok] = np.array([bool(rx.search(a.trace.names[int(k)])) for k in names], bool)[inv] if len(names) else False
    return hit


def _names(a: Analysis, owner: np.ndarray, most: int = 5) -> list[str]:
    ids = distinct(a.trace.x.name[owner[owner >= 0]])
    return [a.trace.names[int(k)] for k in ids[:most]]


def _sync_edges(a: Analysis, g: Graph, pattern: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """A synchronize removed: its waits gone and its own CPU time with them."""
    e = g.e
    calls = distinct(np.concatenate([e.owner[e.rule == int(Edge.SYNC)], e.owner[e.kind == int(Kind.SYNC)]]))
    calls = calls[calls >= 0]
    parent = a.nesting.time_parent
    hit = _named(a, calls, pattern)
    up = parent[calls].astype(np.int64)
    while (up >= 0).any():
        hit |= _named(a, up, pattern)
        up = np.where(up >= 0, parent[np.maximum(up, 0)], -1)
    chosen = calls[hit]
    mine = np.isin(e.owner, chosen)
    return mine & (e.rule == int(Edge.CPU)), mine & (e.rule == int(Edge.SYNC)), _names(a, chosen)


def _event_edges(a: Analysis, g: Graph, event: int) -> np.ndarray:
    """One event's own edges: a device activity's span, or the CPU stretches of an event and what runs under it."""
    e = g.e
    if (e.owner[e.rule == int(Edge.DEVICE)] == event).any():
        return device_work(g) & (e.owner == event)
    parent = a.nesting.time_parent
    cpu = (e.rule == int(Edge.CPU)) & (e.owner >= 0)
    under = np.zeros(len(e), bool)
    up = np.where(cpu, e.owner, -1)
    while (up >= 0).any():
        under |= up == event
        up = np.where(up >= 0, parent[np.maximum(up, 0)], -1)
    return under


def what_if_for_event(
    a: Analysis, event: int, factor: float = 2.0, replayed_by: np.ndarray | None = None, graph: bool = False
) -> WhatIf:
    """If one event were factor times faster (0: gone): a device activity's span, or a CPU event and what runs
    under it on its thread; with graph, a CPU event (an op, a module, an annotation) replayed as one CUDA graph;
    solved in the ProfilerStep that holds it (the whole trace outside any step)."""
    owner = graph_owner(a.trace) if replayed_by is None else replayed_by
    name = a.trace.name_of(event)
    if graph and (a.trace.x.cat[event] in DEVICE_CATS or a.trace.track_of(event).kind == "gpu"):
        raise WhatIfError(f"{name[:40]} is on a GPU lane: select the op or module on a CPU lane that launched it")
    spec = Spec(f"graphs:{name}" if graph else f"{name}={factor:g}", "graphs" if graph else "event", "", factor, event)
    return what_if(a, window_of(a, event), [spec], owner)


def window_of(a: Analysis, event: int) -> Window:
    """The ProfilerStep of the event's rank that holds it (a device activity: where it was launched from)."""
    x = a.trace.x
    launcher = int(a.links.launcher[event])
    t = int(x.ts[launcher if launcher >= 0 else event])
    return window_at(a, t, a.trace.track_of(event).rank)


def window_at(a: Analysis, t: int, rank: int) -> Window:
    """The ProfilerStep of a rank that holds the instant t (ns, raw clock); the whole trace outside any step."""
    x = a.trace.x
    steps = step_events(a.trace, rank)
    inside = steps[(x.ts[steps] <= t) & (x.ts[steps] + x.dur[steps] >= t)]
    return span_window(a.trace, int(inside[0])) if len(inside) else whole_trace(a.trace, rank)
