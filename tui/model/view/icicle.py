"""The icicle (flame) drawing of the code view's frame tree: which frame spans which columns on which row.

Row 0 is the zoomed-in frame (or every root side by side), each row below holds the children of the
row above, laid out left to right, widest first, each as wide as its share of its parent's time
(device time launched from beneath it, or CPU time). A frame narrower than one column is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

Width = Literal["device", "cpu"]
ALL = -1  # the virtual root above every root frame


class FrameTree(Protocol):
    """Frames merged along their call paths (analyses.code.FrameTree): node k has parent[k] (-1: a root)."""

    parent: list[int]
    name: list[str]
    cpu_ns: list[int]
    device_ns: list[int]


@dataclass(frozen=True)
class Span:
    start: int  # first column
    end: int  # one past the last column
    node: int


class Icicle:
    """A FrameTree with its children indexed, laid out for a width and a zoom."""

    def __init__(self, tree: FrameTree) -> None:
        self.tree = tree
        self.kids: dict[int, list[int]] = {}
        for k, p in enumerate(tree.parent):
            self.kids.setdefault(p, []).append(k)

    def value(self, node: int, by: Width) -> int:
        if node == ALL:
            return sum(self.value(k, by) for k in self.kids.get(ALL, []))
        return (self.tree.device_ns if by == "device" else self.tree.cpu_ns)[node]

    def children(self, node: int, by: Width) -> list[int]:
        """Children, widest first (ties by name, so the drawing is stable)."""
        return sorted(self.kids.get(node, []), key=lambda k: (-self.value(k, by), self.tree.name[k]))

    def rows(self, root: int, width: int, by: Width, depth: int = 64) -> list[list[Span]]:
        """Spans per row, row 0 being root itself (the virtual root spans the whole width too)."""
        out: list[list[Span]] = [[Span(0, width, root)]]
        total = self.value(root, by)
        if total <= 0:
            return out
        level = out[0]
        for _ in range(depth):
            below = [s for span in level for s in self._split(span, by)]
            if not below:
                break
            out.append(below)
            level = below
        return out

    def _split(self, span: Span, by: Width) -> list[Span]:
        """The children of a span's frame, each as wide as its share of the frame's time."""
        whole = self.value(span.node, by)
        if whole <= 0:
            return []
        out, at, acc = [], span.start, 0
        cols = span.end - span.start
        for k in self.children(span.node, by):
            acc += self.value(k, by)
            end = span.start + int(cols * acc / whole)
            if end > at:
                out.append(Span(at, end, k))
            at = max(at, end)
        return out

    def parent(self, node: int) -> int:
        return ALL if node == ALL else self.tree.parent[node]

    def name(self, node: int) -> str:
        return "all frames" if node == ALL else self.tree.name[node]
