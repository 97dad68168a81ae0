"""A tab holding one view: "computing …" until its results are ready, then the view, made exactly once.

What a view needs, how it is made and what it says when the trace has nothing for it come from its
ViewSpec (tui/views/registry.py). A result that failed to compute, or a view that failed to build,
is said in this pane, with the log file that holds the traceback; the other views carry on.
"""

from __future__ import annotations

from typing import Any

from textual.widget import AwaitMount, Widget
from textual.widgets import Static, TabPane


class ViewPane(TabPane):
    """The pane of one ViewSpec on a screen (the host, which holds the analysis and the failures)."""

    def __init__(self, spec: Any, host: Any, **kwargs) -> None:
        super().__init__(spec.tab_label(), id=spec.name, **kwargs)
        self.spec, self.host = spec, host
        self.view: Widget | None = None
        self.visited = spec.eager

    def _on_descendant_focus(self, event) -> None:
        """Focus that lands in a view not shown (Textual moving it off a view as it hides) does not switch back to
        that view's tab; the host puts it in the view shown."""
        if getattr(self.host, "view_name", self.id) == self.id:
            super()._on_descendant_focus(event)
        elif hasattr(self.host, "settle_view"):
            self.host.call_later(self.host.settle_view)

    def compose(self):
        if self.spec.eager:
            self.view = self.spec.build(self.host)
            yield self.view

    def _say(self, text: str, kind: str = "computing") -> None:
        notes = self.query(".pane-note")
        if notes:
            note = notes.first(Static)
            note.update(text)
            note.set_classes(f"pane-note {kind}")
        else:
            self.mount(Static(text, classes=f"pane-note {kind}", markup=False))

    def ensure(self) -> bool:
        """Show the view if its results are ready (else say what is computing, or what failed); True once shown."""
        self.visited = True
        if self.view is not None:
            return True
        source = self.host.structure if self.spec.on_structure else self.host.analysis
        failed = [(r, self.host.failures[r.name]) for r in self.spec.needs if r.name in self.host.failures]
        if failed:
            result, (line, log) = failed[0]
            self._say(f"Could not compute the {result.title}: {line}\nThe traceback is in {log}.", "failed")
            return False
        missing = [r.title for r in self.spec.needs if not source.ready(r)]
        if missing:
            self._say(f"computing {', '.join(missing)} …")
            return False
        return self._build()

    def _build(self) -> bool:
        try:
            reason = self.spec.unavailable(self.host)
            view = None if reason else self.spec.build(self.host)
        except Exception as exc:  # noqa: BLE001 - a view that cannot be made says so in its pane
            log = self.host.record_failure(f"the {self.spec.title.lower()} view", exc)
            self._say(f"Could not show the {self.spec.title.lower()} view: {exc}\nThe traceback is in {log}.", "failed")
            return False
        if reason:
            self._say(reason, "unavailable")
            return False
        self.query(".pane-note").remove()
        assert view is not None
        self.view = view
        self.mount(view)
        return True

    async def shown(self) -> bool:
        """ensure(), then wait until the view is mounted (its children too), so it can take the focus."""
        if not self.ensure():
            return False
        view = self.view
        if view is not None and not view.is_mounted:
            await AwaitMount(self, [view])
        return self.view is view

    async def rebuild(self) -> None:
        """Drop the view (its data changed: frames shown or hidden) and make it again if it was visited."""
        old, self.view = self.view, None
        if old is not None:
            await old.remove()  # gone before its successor mounts: a view is never mounted twice
        if self.visited:
            self.ensure()

    @property
    def showing(self) -> bool:
        return self.view is not None


def focus_target(pane: ViewPane) -> Widget | None:
    """What takes focus when the pane is shown: the spec's selector inside the view, else the view."""
    if pane.view is None:
        return None
    if pane.spec.focus is None:
        return pane.view if pane.view.can_focus else None
    found = pane.query(pane.spec.focus)
    return found.first() if found else None
