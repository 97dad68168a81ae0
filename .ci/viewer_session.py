"""A viewer session from the installed package: the demo opens on the timeline, then every view's number key (from
the view registry, so a new view is pressed too) shows its view, each view's widget mounted. Run by
.ci/wheel_check.sh with each interpreter's own venv; prints one line per view and exits non-zero on the first that
does not show."""

import asyncio
import sys

from textual.widgets import TabbedContent

from tui.app import TraceApp
from tui.model.samples import resolve
from tui.views.registry import MAIN


def shown(app) -> str:
    """The main screen's active view once its tabs are mounted ("" before): leaving run_test while they still
    mount raised from Textual's ContentTabs on a loaded machine."""
    if type(app.screen).__name__ != "MainScreen" or not app.screen.query(TabbedContent):
        return ""
    return app.screen.query_one(TabbedContent).active


async def wait_for(pilot, app, name: str) -> bool:
    for _ in range(600):  # 30 s: a loaded CI machine computes the view's results in a worker
        await pilot.pause(0.05)
        if shown(app) == name:
            return True
    return False


async def main() -> None:
    app = TraceApp([resolve("demo:h100-bert-small")])
    async with app.run_test(size=(120, 40)) as pilot:
        if not await wait_for(pilot, app, "timeline"):
            sys.exit(f"still on {type(app.screen).__name__}: {app.load_error}")
        print("the viewer shows", type(app.screen).__name__)
        for spec in MAIN:
            await pilot.press(spec.key)
            if not await wait_for(pilot, app, spec.name):
                sys.exit(f"key {spec.key} left the viewer on {shown(app)!r}, not {spec.name!r}")
            print(f"key {spec.key}: {spec.name}")
        await pilot.press("question_mark")
        await pilot.pause(0.2)
        print("help:", type(app.screen).__name__)


asyncio.run(main())
