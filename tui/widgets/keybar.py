"""The key bar at the bottom: what is on (frames hidden, a mark, a filter), the focused view's keys, `? more`.

Textual's Footer makes a widget per key and recomposes them all whenever the bindings change (every
focus change); on a big trace that was most of the time a view switch held the UI. This is one
Static, redrawn at most once per refresh, from the same live bindings.

The line is cut at whole entries, never inside one, and always ends with `? more` (help lists every key).
First the state, which every node of the focused chain may say (keybar_state: (key, words) pairs, the
key that changes it first); then the shown bindings from the focused widget outwards, in their order
(each class lists its keys most useful first), the keys of a Binding.Group as one entry (`w/s zoom`, `ncstu sort`).
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
    for binding in ordered(screen):
        shown = display(binding)
        if shown in taken:
            continue
        taken.add(shown)
        kind = binding.group.description if binding.group is not None else None
        if kind is None:
            keys.append(Entry([shown], binding.description))
        elif kind in kinds:
            kinds[kind].keys.append(shown)
        else:
            kinds[kind] = Entry([shown], kind)
            keys.append(kinds[kind])
    return state + keys


def ordered(screen) -> list:
    """The shown, enabled bindings, each once: from the focused widget outwards, each node's in declared order.

    A key bound by a nearer node to a binding not shown (a table's Enter that selects the row for its view)
    does not hide the binding further out that says what the key does there.
    """
    app = screen.app
    found: dict[object, tuple[int, int, object]] = {}
    shown_keys: set[str] = set()
    for depth, (node, bindings) in enumerate(screen._modal_binding_chain):
        for key, binding in bindings:
            ident = binding.id or (binding.action, binding.description)  # one per binding, whichever of its keys
            if not binding.show or ident in found or key in shown_keys:
                continue
            if not app._check_action_state(binding.action, node):  # disabled, or not offered here
                continue
            shown_keys.add(key)
            found[ident] = (depth, _rank(node, binding), binding)
    return [b for _, _, b in sorted(found.values(), key=lambda t: t[:2])]


def _rank(node, binding) -> int:
    """Where the binding is declared: a base class's keys before its subclass's, each in its BINDINGS order."""
    mro = type(node).__mro__
    for depth, cls in enumerate(mro):
        own = [b for b in cls.__dict__.get("BINDINGS", []) if hasattr(b, "action")]
        for k, b in enumerate(own):
            if b.action == binding.action and b.description == binding.description:
                return (len(mro) - depth) * 1000 + k
    return 10**6


def fitted(all_entries: list[Entry], width: int) -> list[Entry]:
    """The entries that fit in width, whole ones only, with `? more` always last."""
    more = Entry([MORE[0]], MORE[1])
    room = width - len(more.text())
    out: list[Entry] = []
    for e in all_entries:
        need = len(e.text()) + len(SEP)
        if need <= room:
            out.append(e)
            room -= need
        elif e.state:  # what is on is never left out: shorten its words instead
            words = e.words[: max(room - len(SEP) - len(e.key_text()) - 2, 1)] + "…"
            out.append(Entry(e.keys, words, True))
            room = 0
        else:  # in priority order: a key that does not fit is not passed over for a less useful one
            room = -1
    return out + [more]


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
