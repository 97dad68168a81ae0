"""A tab whose view is made on its first visit, once the analyses it needs are ready."""

from __future__ import annotations

from collections.abc import Callable

from textual.widget import Widget
from textual.widgets import Static, TabPane


class ViewPane(TabPane):
    """Says "computing …" until every analysis in `needs` is ready, then mounts build()."""

    def __init__(
        self, title: str, needs: tuple[str, ...], build: Callable[[], Widget], source: Callable | None = None, **kwargs
    ) -> None:
        super().__init__(title, **kwargs)
        self.needs, self.build = needs, build
        self.source = source  # which analysis the needs are read on (default: the one passed to ensure)
        self.view: Widget | None = None
        self.visited = False

    def ensure(self, analysis) -> bool:
        """Show the view if its data is ready (else the computing note); True once the view is up."""
        self.visited = True
        if self.view is not None:
            return True
        analysis = self.source() if self.source is not None else analysis
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

    def rebuild(self, analysis) -> None:
        """Drop the view (its data changed, e.g. frames shown or hidden) and make it again if visited."""
        if self.view is not None:
            self.view.remove()
            self.view = None
        if self.visited:
            self.ensure(analysis)
