"""Which view a screen shows, and where the focus is: one piece of state (view_name), one owner (the screen).

Every way to a view goes through show_view: the screen's first view, a number key, the palette, a click
on a tab, a jump from a table to the timeline. Every change that can move a view or the focus (a view's
results arrive, a view is made again when Python frames are shown or hidden) ends in settle_view, which
makes the tabs, the view and the focus agree with view_name. So the screen shows the view it was asked
for, with the focus in it, whatever order the workers' results arrive in.

The focus is set at once (Screen.set_focus), never after a refresh: the key pressed next goes to the view
just shown. A view still computing holds no focus; the keys of the screen and the app still work.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.widget import Widget
from textual.widgets import TabbedContent, Tabs

from ..widgets.view_pane import ViewPane, focus_target


class ShowsViews:
    """Mixed into a Screen whose views are ViewPanes in one TabbedContent."""

    AUTO_FOCUS: ClassVar[str | None] = ""  # Textual would focus the tab bar as the screen starts: ours to place
    view_name: str

    def pane(self, name: str) -> ViewPane:
        return self.query_one(f"ViewPane#{name}", ViewPane)  # type: ignore[attr-defined]

    @property
    def active_view(self) -> str:
        """The view shown (or being made ready to show)."""
        return self.view_name

    def on_resize(self) -> None:
        self.fit_tabs()

    def fit_tabs(self) -> None:
        """Short tab titles where the full ones would scroll the tab bar (nine views at 80 columns)."""
        panes = list(self.query(ViewPane))  # type: ignore[attr-defined]
        full = sum(len(p.spec.tab_label()) + 2 for p in panes)  # a tab pads its label by one cell each side
        short = full > self.size.width  # type: ignore[attr-defined]
        tabs = self.query_one(TabbedContent)  # type: ignore[attr-defined]
        for p in panes:
            tab = tabs.get_tab(p)
            if str(tab.label) != p.spec.tab_label(short):
                tab.label = p.spec.tab_label(short)

    async def action_view(self, name: str) -> None:
        await self.show_view(name)

    async def show_view(self, name: str) -> None:
        """Show a view and put the focus in it (once its results are ready)."""
        self.view_name = name
        await self.settle_view(take_focus=True)

    async def settle_view(self, take_focus: bool = False) -> None:
        """Make the tabs, the view and the focus agree with view_name.

        take_focus: the user asked for this view, so the focus moves into it; otherwise (a result arrived, a
        tab chosen on the tab bar with the keyboard) it moves only from where it is lost (nowhere, or in a
        hidden view).
        """
        name = self.view_name
        tabs = self.query_one(TabbedContent)  # type: ignore[attr-defined]
        if self._focus_lost(self.focused):  # type: ignore[attr-defined]
            self.set_focus(None)  # type: ignore[attr-defined]  # before the old view hides: Textual would move it
        if tabs.active != name:
            tabs.active = name
        pane = self.pane(name)
        ready = await pane.shown()
        if self.view_name != name or not pane.is_attached:  # another view was asked for meanwhile: it settles
            return
        self.view_settled(pane)
        focused: Widget | None = self.focused  # type: ignore[attr-defined]
        inside = focused is not None and pane in focused.ancestors_with_self
        if ready and not inside and (take_focus or self._focus_lost(focused)):
            target = focus_target(pane)
            self.set_focus(target)  # type: ignore[attr-defined]
        elif not ready and self._focus_lost(focused):
            self.set_focus(None)  # type: ignore[attr-defined]  # not left in a hidden view

    def _focus_lost(self, focused: Widget | None) -> bool:
        """Nowhere, or inside a view that is not shown."""
        if focused is None:
            return True
        holder = next((n for n in focused.ancestors_with_self if isinstance(n, ViewPane)), None)
        return holder is not None and holder.id != self.view_name

    def view_settled(self, pane: ViewPane) -> None:
        """What else follows the view shown (the details panel beside it): for the screen to say."""

    async def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """A tab was clicked (our own changes set view_name first): that view is now the one asked for."""
        pane: Any = event.pane
        current = self.query_one(TabbedContent).active  # type: ignore[attr-defined]
        if isinstance(pane, ViewPane) and pane.id != self.view_name and pane.id == current:  # not a stale message
            self.view_name = str(pane.id)
            await self.settle_view(take_focus=not isinstance(self.focused, Tabs))  # type: ignore[attr-defined]
