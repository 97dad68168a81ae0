"""The key bar at the bottom: the shown bindings that work here, as one line of text.

Textual's Footer makes a widget per key and recomposes them all whenever the bindings change (every
focus change); on a big trace that was most of the time a view switch held the UI. This is one
Static, redrawn at most once per refresh, from the same live bindings.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

SEP = "  "


class KeyBar(Static):
    """Shown, enabled bindings of the focused chain, first come first, cut to the width."""

    COMPONENT_CLASSES = {"keybar--key"}
    DEFAULT_CSS = """
    KeyBar { dock: bottom; height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    KeyBar > .keybar--key { color: $accent; text-style: bold; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", **kwargs)
        self._pending = False

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._changed)
        self._changed()

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _changed(self, *_args) -> None:
        if not self._pending:  # many changes in one refresh: one redraw
            self._pending = True
            self.call_after_refresh(self._redraw)

    def _redraw(self) -> None:
        self._pending = False
        if not self.is_attached:  # the screen went away before the refresh
            return
        line, seen = Text(no_wrap=True, overflow="ellipsis"), set()
        try:
            key_style = self.get_component_rich_style("keybar--key")
        except KeyError:  # drawn before the stylesheet reached this widget
            key_style = Style(bold=True)
        active = list(self.screen.active_bindings.values())
        active.sort(key=lambda b: b.node is not self.app)  # ? and q first: they never fall off the end
        for _node, binding, enabled, _tooltip in active:
            if not binding.show or not enabled or binding.action in seen:
                continue
            seen.add(binding.action)
            if line:
                line.append(SEP)
            line.append(self.app.get_key_display(binding), style=key_style)
            line.append(f" {binding.description}")
        self.update(line)
