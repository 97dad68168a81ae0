"""The key bar at the bottom: what is on (frames hidden, a mark, a filter), the focused view's keys, `? more`.

Textual's Footer makes a widget per key and recomposes them all whenever the bindings change (every
focus change); on a big trace that was most of the time a view switch held the UI. This is one
Static, redrawn at most once per refresh, from the same live bindings.

The line is cut at whole entries, never inside one, and always ends with `? more` (help lists every key).
First the state, which every node of the focused chain may say (keybar_state: (key, words) pairs, the
key that changes it first); then the shown bindings from the focused widget outwards, in their order
(each class lists its keys most useful first), the keys of a Binding.Group as one entry (`w/s zoom`, `ncstu sort`).
A node's base classes' keys are shown before its own, but where the line is cut a node's own keys stay first:
a table's sort letters and the ops' `b Group by shape` are what that view is for, while Enter, `/` and `e`
are every table's (the line above a table says `e shows every column` whenever it left one out).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from ..text.sanitize import visible

SEP = "  "
MORE = ("?", "more")


@dataclass
class Entry:
    keys: list[str]
    words: str
    state: bool = False  # says what is on, rather than offering a key
    keep: tuple = ()  # where the line is cut, the entries with the lower keep stay (the state always does)

    def text(self) -> str:
        return f"{self.key_text()} {self.words}"

    def key_text(self) -> str:
        if len(self.keys) > 2 and all(len(k) == 1 for k in self.keys):
            return "".join(self.keys)
        return "/".join(self.keys)


def entries(screen, display) -> list[Entry]:
    """What the bar offers on this screen, most important first: the state, then the keys of the focused chain."""
    chain = list(screen.focused.ancestors_with_self) if screen.focused is not None else [screen]
    state: list[Entry] = []
    for node in chain:
        said = getattr(node, "keybar_state", None)
        state += [Entry([key], visible(words), True) for key, words in (said() if said else [])]  # may name a frame
    taken = {k for e in state for k in e.keys} | {MORE[0]}
    keys: list[Entry] = []
    kinds: dict[str, Entry] = {}
    for binding, keep in ordered(screen):
        shown = display(binding)
        if shown in taken:
            continue
        taken.add(shown)
        kind = binding.group.description if binding.group is not None else None
        if kind is None:
            keys.append(Entry([shown], binding.description, keep=keep))
        elif kind in kinds:
            kinds[kind].keys.append(shown)
        else:
            kinds[kind] = Entry([shown], kind, keep=keep)
            keys.append(kinds[kind])
    return state + keys


def ordered(screen) -> list[tuple]:
    """The shown, enabled bindings, each once, with the rank that keeps it where the line is cut: from the focused
    widget outwards, each node's in declared order (its base classes' first); kept, each node's own keys first.

    A key bound by a nearer node to a binding not shown (a table's Enter that selects the row for its view)
    does not hide the binding further out that says what the key does there.
    """
    app = screen.app
    found: dict[object, tuple[tuple, tuple, object]] = {}
    shown_keys: set[str] = set()
    for depth, (node, bindings) in enumerate(screen._modal_binding_chain):
        for key, binding in bindings:
            ident = binding.id or (binding.action, binding.description)  # one per binding, whichever of its keys
            if not binding.show or ident in found or key in shown_keys:
                continue
            if not app._check_action_state(binding.action, node):  # disabled, or not offered here
                continue
            shown_keys.add(key)
            place = _declared(node, binding)
            if place is None:  # declared by no class of the node: after its others, shown and kept
                found[ident] = ((depth, 1, 0), (depth, LAST, 0), binding)
            else:
                up, k = place
                found[ident] = ((depth, -up, k), (depth, up, k), binding)
    return [(b, keep) for _, keep, b in sorted(found.values(), key=lambda t: t[0])]


LAST = 10**6


def _declared(node, binding) -> tuple[int, int] | None:
    """Where the binding is declared: how far up the node's classes (0: its own class), and its place in that
    class's BINDINGS (None: in no class's)."""
    for up, cls in enumerate(type(node).__mro__):
        own = [b for b in cls.__dict__.get("BINDINGS", []) if hasattr(b, "action")]
        for k, b in enumerate(own):
            if b.action == binding.action and b.description == binding.description:
                return up, k
    return None


def fitted(all_entries: list[Entry], width: int) -> list[Entry]:
    """The entries that fit in width, whole ones only, in their order, with `? more` always last: the state first,
    then by their keep rank (ties in their order)."""
    more = Entry([MORE[0]], MORE[1])
    room = width - len(more.text())
    kept: dict[int, Entry] = {}
    for k in sorted(range(len(all_entries)), key=lambda k: (not all_entries[k].state, all_entries[k].keep, k)):
        e = all_entries[k]
        need = len(e.text()) + len(SEP)
        if need <= room:
            kept[k] = e
            room -= need
        elif e.state:  # what is on is never left out: shorten its words instead
            words = e.words[: max(room - len(SEP) - len(e.key_text()) - 2, 1)] + "…"
            kept[k] = Entry(e.keys, words, True)
            room = 0
        else:  # in keep order: a key that does not fit is not passed over for a less useful one
            room = -1
    return [kept[k] for k in sorted(kept)] + [more]


class KeyBar(Static):
    """What is on, then the focused view's keys in their order, cut to the width at whole entries; `? more` last."""

    COMPONENT_CLASSES = {"keybar--key", "keybar--state"}
    DEFAULT_CSS = """
    KeyBar { dock: bottom; height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    KeyBar > .keybar--key { color: $accent; text-style: bold; }
    KeyBar > .keybar--state { color: $warning; text-style: bold; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", **kwargs)
        self._pending = False
        self.shown: list[Entry] = []  # what the bar says now (for tests and the help)

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._changed)
        self._changed()

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def on_resize(self) -> None:
        self._changed()

    def _changed(self, *_args) -> None:
        if not self._pending:  # many changes in one refresh: one redraw
            self._pending = True
            self.call_after_refresh(self._redraw)

    def _style(self, part: str) -> Style:
        try:
            return self.get_component_rich_style(f"keybar--{part}")
        except KeyError:  # drawn before the stylesheet reached this widget
            return Style(bold=True)

    def _redraw(self) -> None:
        self._pending = False
        if not self.is_attached:  # the screen went away before the refresh
            return
        width = max(self.size.width, 20)
        self.shown = fitted(entries(self.screen, self.app.get_key_display), width)
        line = Text(no_wrap=True, overflow="crop")
        for k, e in enumerate(self.shown):
            if k:
                line.append(SEP)
            line.append(e.key_text(), style=self._style("key"))
            line.append(" " + e.words, style=self._style("state") if e.state else None)
        self.update(line)

    def text(self) -> str:
        return SEP.join(e.text() for e in self.shown)
