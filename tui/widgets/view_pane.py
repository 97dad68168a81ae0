"""A tab whose view is made on its first visit, once the analyses it needs are ready."""

from __future__ import annotations

from collections.abc import Callable

from textual.widget import Widget
from textual.widgets import Static, TabPane


class ViewPane(TabPane):
    """Says "computing …" until every analysis in `needs` is ready, then mounts build()."""

    def __init__(self, title: str, needs: tuple[str, ...], build: Callable[[], Widget], **kwargs) -> None:
        super().__init__(title, **kwargs)
        self.needs, self.build = needs, build
        self.view: Widget | None = None
        self.visited = False

    def ensure(self, analysis) -> bool:
        """Show the view if its data is ready (else the computing note); True once the view is up."""
        self.visited = True
        if self.view is not None:
            return True
        missing = [n.strip("_").replace("_", " ") for n in self.needs if not analysis.ready(n)]
        notes = self.query(".computing")
        if missing:
            text = f"computing {', '.join(missing)} …"
            if notes:
                notes.first(Static).update(text)
            else:
                self.mount(Static(text, classes="computing"))
            return False
        notes.remove()
        self.view = self.build()
        self.mount(self.view)
        return True
