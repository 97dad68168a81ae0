"""The call tree, expanded lazily, hottest children first, with a path to any event."""

from __future__ import annotations

import numpy as np
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Tree
from textual.widgets._tree import TOGGLE_STYLE
from textual.widgets.tree import TreeNode

from ..model.analyses.calltree import CallTree, Node
from ..text.fmt import fmt_dur
from ..text.names import shorten
from ..text.sanitize import cell_len, crop_cells, visible
from .details import Merged

KIND_STYLE = {
    "steps": "bold #e5c07b",
    "step": "bold #e5c07b",
    "gpu": "#56b6c2",
    "runtime": "#c678dd",
    "cpu": "",
    "thread": "bold",
}


ROW_STANDS_FOR = {"steps": "steps", "thread": "outermost events", "gpu": "runs"}  # else "calls" (ops, runtime)
MIN_NAME = 16  # cells a name keeps before the figures give way (the count, the GPU time, then the self time)


def node_label(n: Node, room: int | None = None) -> Text:
    """The node's name and figures; room: the cells the line has, the name cut in the middle (with …) and the
    figures shortened so that they fit whole, rather than run past the edge."""
    shown = visible(n.name)  # a name is data: shown as escapes, measured as shown
    count = f" ×{n.count}" if n.count > 1 else ""
    gpu = f" · GPU {fmt_dur(n.gpu_ns)}" if n.gpu_ns else ""
    total, own = f"  total {fmt_dur(n.total_ns)}", f" · self {fmt_dur(n.self_ns)}"
    forms = [total + own + gpu + count, total + own + gpu, total + gpu, total, ""]
    if room is None:
        figures, name = forms[0], shorten(shown, 90)
    else:
        figures = next((f for f in forms if len(f) + min(cell_len(shown), MIN_NAME) <= room), "")
        name = crop_cells(shorten(shown, max(room - len(figures), 4)), max(room - len(figures), 4))
    text = Text(name, style=KIND_STYLE.get(n.kind, ""))
    text.append(figures, style="#8a8f98")
    return text


class CallTreeView(Tree[Node]):
    """Children are added when a node is expanded; the hot path opens first."""

    HELP_NAME = "Call tree"

    BINDINGS = [
        Binding("enter", "details", "Details", id="tree.details"),  # as on the timeline (Textual's: open the node)
        Binding("space", "toggle_node", "Open or close", id="tree.toggle"),  # Textual's key, said
        Binding("m", "toggle_merge", "Merge same-name siblings", id="tree.merge"),
        Binding("t", "show", "Show on timeline", id="tree.show"),
    ]
    HOT_PATH_DEPTH = 6

    class Show(Message):
        def __init__(self, event: int) -> None:
            super().__init__()
            self.event = event

    class DetailsRequested(Message):
        """Enter: the details panel opened beside the tree (the panel is each view's own: screens/details_side.py)."""

    def __init__(self, calltree: CallTree, **kwargs) -> None:
        super().__init__("trace", **kwargs)
        self.calltree = calltree
        self.show_root = False

    def on_mount(self) -> None:
        self._fill_roots()

    def render_label(self, node: TreeNode[Node], base_style: Style, style: Style) -> Text:
        """The label fitted to the cells its line has at this width (the tree's lines then never run past it)."""
        if node.data is None or not self.size.width:
            return super().render_label(node, base_style, style)
        label = node_label(node.data, self._room(node))
        label.stylize(style)
        icon = self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE
        prefix = (icon, base_style + TOGGLE_STYLE) if node.allow_expand else ("", base_style)
        return Text.assemble(prefix, label)

    def _room(self, node: TreeNode[Node]) -> int:
        depth, up = 0, node.parent
        while up is not None and up is not self.root:
            depth, up = depth + 1, up.parent
        return max(self.scrollable_content_region.width - depth * self.guide_depth - len(self.ICON_NODE), 8)

    def _fill_roots(self) -> None:
        self.clear()
        for n in self.calltree.roots():
            self._add(self.root, n)
        self.root.expand()
        if self.root.children:
            self._expand_hot(self.root.children[0], self.HOT_PATH_DEPTH)

    def _add(self, parent: TreeNode[Node], n: Node) -> TreeNode[Node]:
        leaf = n.kind == "gpu"
        return parent.add_leaf(node_label(n), data=n) if leaf else parent.add(node_label(n), data=n)

    def _load(self, node: TreeNode[Node]) -> None:
        if node.data is None or node.children:
            return
        for child in self.calltree.children(node.data):
            self._add(node, child)
        node.allow_expand = bool(node.children)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[Node]) -> None:
        self._load(event.node)

    def _expand_hot(self, node: TreeNode[Node], depth: int) -> None:
        for _ in range(depth):
            self._load(node)
            node.expand()
            if not node.children:
                return
            node = node.children[0]

    def action_toggle_merge(self) -> None:
        self.calltree.merge = not self.calltree.merge
        self._fill_roots()

    def action_details(self) -> None:
        """Enter: the node's details, as Enter on the timeline (the panel opened, or moved into when open); Space
        or a click opens or closes the node."""
        if self.cursor_node is not None and self.cursor_node.data is not None:
            self.post_message(self.DetailsRequested())

    def action_show(self) -> None:
        node = self.cursor_node
        if node is not None and node.data is not None:
            self.post_message(self.Show(self.first_event(node.data)))

    def first_event(self, n: Node) -> int:
        """The event a row's details and t are about: its only one, or the first of those it stands for (in time)."""
        if n.count == 1:
            return int(n.events[0])
        return int(n.events[int(np.argmin(self.calltree.a.trace.x.ts[n.events]))])

    def merged(self, n: Node) -> Merged | None:
        """What the row stands for when it is more than one event (its details show the first): None for one."""
        if n.count <= 1:
            return None
        dur = self.calltree.a.trace.x.dur[n.events]
        what = ROW_STANDS_FOR.get(n.kind, "calls")
        return Merged(n.count, what, n.total_ns, n.self_ns, n.gpu_ns, int(dur.min()), int(dur.max()))

    def reveal(self, event: int) -> bool:
        """Expand the path from a root down to the node holding event, and move there."""
        path = self.calltree.path_to(event)
        tops = {int(e) for c in self.root.children if c.data is not None for e in c.data.events}
        start = next((k for k, ev in enumerate(path) if ev in tops), len(path))
        node, k = self.root, start
        while k < len(path):
            self._load(node)
            node.expand()
            ev = path[k]
            match = next((c for c in node.children if c.data is not None and ev in set(c.data.events.tolist())), None)
            if match is None:
                break
            node = match
            k += match.data is not None and match.data.kind != "steps"  # a group of steps holds the step itself
        if node is self.root:
            return False
        self.call_after_refresh(self._go_to, node)
        return True

    def _go_to(self, node: TreeNode[Node]) -> None:
        self.move_cursor(node)
        self.scroll_to_node(node, animate=False)
