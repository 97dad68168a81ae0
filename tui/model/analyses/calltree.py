"""The call tree: step -> Python frame -> annotation -> aten op -> runtime call -> GPU work.

Nodes group sibling events of the same name (merged, with a count); children are built only
when a node is expanded, hottest first. Times are in nanoseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..analysis import Analysis
from ..cats import Cat
from ..steps import step_events
from .graphs.replay import is_graph_launch

NodeKind = Literal["cpu", "runtime", "gpu", "step", "thread", "steps"]
STEPS_PER_GROUP = 50  # more steps than this: grouped, so the tree opens at once on long captures


@dataclass
class Node:
    """One line of the tree: a name and the events merged into it."""

    name: str
    events: np.ndarray
    total_ns: int
    self_ns: int
    gpu_ns: int
    kind: NodeKind

    @property
    def count(self) -> int:
        return len(self.events)


class CallTree:
    """Lazily expanded call tree over one Analysis."""

    def __init__(self, analysis: Analysis, merge: bool = True) -> None:
        self.a = analysis
        self.merge = merge
        self.gpu_ns = analysis.gpu_below

    def roots(self) -> list[Node]:
        """One node per ProfilerStep#N if there are steps, else the roots of each CPU thread."""
        x = self.a.trace.x
        steps = step_events(self.a.trace)
        cpu_tracks = [t.id for t in self.a.trace.tracks if t.kind == "cpu"]
        order = self.a.nesting.order
        roots = order[(self.a.nesting.parent[order] < 0) & np.isin(x.track[order], cpu_tracks)]
        if not len(steps):
            return self._group(roots)
        nodes = self._steps(steps)
        step_tracks = set(x.track[steps].tolist())
        for track in cpu_tracks:  # other threads (the autograd thread, data loaders) as one node each
            mine = roots[x.track[roots] == track]
            if track not in step_tracks and len(mine):
                nodes.append(self._thread_node(track, mine))
        return nodes

    def _steps(self, steps: np.ndarray) -> list[Node]:
        """A node per step, or per run of STEPS_PER_GROUP steps when there are more."""
        if len(steps) <= STEPS_PER_GROUP:
            return [self._node(np.array([i]), "step") for i in steps]
        groups = [steps[k : k + STEPS_PER_GROUP] for k in range(0, len(steps), STEPS_PER_GROUP)]
        return [self._group_node(g) for g in groups]

    def _group_node(self, steps: np.ndarray) -> Node:
        x, names = self.a.trace.x, self.a.trace.names
        first, last = names[int(x.name[steps[0]])], names[int(x.name[steps[-1]])]
        return Node(
            f"{first} … {last.split('#')[-1]} ({len(steps)} steps)",
            steps,
            int(x.dur[steps].sum()),
            int(self.a.self_ns[steps].sum()),
            int(self.gpu_ns[steps].sum()),
            "steps",
        )

    def _thread_node(self, track: int, roots: np.ndarray) -> Node:
        x = self.a.trace.x
        return Node(
            self.a.trace.tracks[track].name,
            roots,
            int(x.dur[roots].sum()),
            int(self.a.self_ns[roots].sum()),
            int(self.gpu_ns[roots].sum()),
            "thread",
        )

    def path_to(self, event: int) -> list[int]:
        """Event indices from the outermost ancestor down to event (a kernel via its launch)."""
        x = self.a.trace.x
        chain = [int(event)]
        if int(x.cat[event]) in (int(Cat.KERNEL), int(Cat.MEMCPY), int(Cat.MEMSET)):
            launcher = int(self.a.links.launcher[event])
            if launcher < 0:
                return chain
            chain.append(launcher)
        parent = self.a.nesting.parent
        while parent[chain[-1]] >= 0:
            chain.append(int(parent[chain[-1]]))
        return chain[::-1]

    def children(self, node: Node) -> list[Node]:
        if node.kind == "thread":
            return self._group(node.events)
        if node.kind == "steps":
            return [self._node(np.array([i]), "step") for i in node.events]
        kids = [self.a.children(int(i)) for i in node.events]
        launched = [self.a.links.launched(int(i)) for i in node.events if node.kind == "runtime"]
        if launched and is_graph_launch(self.a.trace, int(node.events[0])):  # a replay: its kernels by name
            replayed = self._group(np.concatenate(launched).astype(np.int64), merge=True)
            return self._group(np.concatenate(kids).astype(np.int64)) + replayed
        flat = np.concatenate(kids + launched) if kids or launched else np.empty(0, int)
        return self._group(flat.astype(np.int64))

    def _group(self, idx: np.ndarray, merge: bool | None = None) -> list[Node]:
        """Sibling events as nodes: merged by name (the most time first), or one per event in time order."""
        if not len(idx):
            return []
        x = self.a.trace.x
        merge = self.merge if merge is None else merge
        if merge:
            idx = idx[np.argsort(x.name[idx], kind="stable")]
            cuts = np.flatnonzero(np.diff(x.name[idx])) + 1
            groups = np.split(idx, cuts)
        else:
            groups = [np.array([i]) for i in idx[np.argsort(x.ts[idx])]]
        nodes = [self._node(g, None) for g in groups]
        return sorted(nodes, key=lambda n: -n.total_ns) if merge else nodes

    def _node(self, events: np.ndarray, kind: NodeKind | None) -> Node:
        x = self.a.trace.x
        first = int(events[0])
        cat = int(x.cat[first])
        if kind is None:
            kind = (
                "gpu"
                if cat in (int(Cat.KERNEL), int(Cat.MEMCPY), int(Cat.MEMSET))
                else ("runtime" if cat == int(Cat.RUNTIME) else "cpu")
            )
        return Node(
            self.a.trace.names[int(x.name[first])],
            events,
            int(x.dur[events].sum()),
            int(self.a.self_ns[events].sum()),
            int(self.gpu_ns[events].sum()),
            kind,
        )
