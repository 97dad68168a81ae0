"""The main screen's critical path keys: b marks the path of the step under the cursor, x asks what 2× faster
would save, g what one CUDA graph replay of the selected op or module would, and the critical path view's Enter
goes to an event. The paths are computed in workers; the line
under the timeline says "computing …", then the result, or the error."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from textual import work

from ..appkit import faults, pace
from ..model.analyses.results import Results
from ..text.names import short_name
from ..widgets.critical_line import CriticalLine
from ..widgets.timeline import Timeline
from .messages import CriticalDone, WhatIfDone

if TYPE_CHECKING:
    from textual.screen import Screen as _Screen

    from ..model.analyses.critical import CriticalPath
    from ..widgets.critical_view import CriticalView
else:
    _Screen = object

WHAT_IF_FACTOR = 2.0


class ShowsCritical(_Screen):
    """b, x and the critical path view's jumps (the screen holds analysis and a timeline)."""

    analysis: Results
    marked_path: CriticalPath | None  # the path b marked last (the path view shows it)

    if TYPE_CHECKING:

        @property
        def timeline(self) -> Timeline: ...
        async def show_view(self, name: str) -> None: ...
        def fit_panels(self) -> None: ...

    @property
    def critical_line(self) -> CriticalLine:
        return self.query_one(CriticalLine)

    def _say_critical(self, text: str, kind: str = "done") -> None:
        self.critical_line.say(text, kind)
        self.fit_panels()  # the line takes its rows from the details panel, never from the lanes' six

    def on_timeline_critical_requested(self, message: Timeline.CriticalRequested) -> None:
        self._say_critical("computing the critical path of the step under the cursor …", "computing")
        self.critical_at(message.at, message.rank)

    def on_timeline_critical_cleared(self, _message: Timeline.CriticalCleared) -> None:
        from ..widgets.critical_view import CriticalView

        self.workers.cancel_group(self, "critical")
        self._say_critical("")
        self.marked_path = None
        for view in self.query(CriticalView):  # back to the typical step's
            view.set_path(self.analysis.critical)

    @work(thread=True, exclusive=True, group="critical", description="The critical path", exit_on_error=False)
    def critical_at(self, at: int, rank: int) -> None:
        from ..model.analyses.critical import critical_path, window_at

        a = self.analysis
        try:
            path = critical_path(a, window_at(a, at, rank), a.graph_owner)
        except Exception as exc:  # noqa: BLE001 - said in the line under the timeline, the app goes on
            faults.record("the critical path", exc)
            pace.post(self, CriticalDone(None, faults.one_line(exc)))
            return
        pace.post(self, CriticalDone(path))

    def on_critical_done(self, message: CriticalDone) -> None:
        from ..tables.critical import status

        if message.path is None:
            self._say_critical(f"critical path: {message.error}", "failed")
            return
        from ..widgets.critical_view import CriticalView

        self.marked_path = message.path
        events = np.array(sorted({it.event for it in message.path.items if it.event >= 0}), np.int64)
        self.timeline.set_path(events)
        for view in self.query(CriticalView):
            view.set_path(message.path)
        self._say_critical(status(message.path) + " (b clears)")

    def on_timeline_what_if_requested(self, message: Timeline.WhatIfRequested) -> None:
        name = self.analysis.trace.name_of(message.event)[:40]
        what = f"one CUDA graph replay of {name}" if message.graph else f"a {WHAT_IF_FACTOR:g}× faster {name}"
        self._say_critical(f"computing what {what} would save …", "computing")
        self.what_if_event(message.event, message.graph)

    @work(thread=True, exclusive=True, group="what-if", description="What if it were faster", exit_on_error=False)
    def what_if_event(self, event: int, graph: bool = False) -> None:
        from ..model.analyses.critical import WhatIfError, what_if_for_event
        from ..tables.critical import event_saving

        a = self.analysis
        try:
            w = what_if_for_event(a, event, 0.0 if graph else WHAT_IF_FACTOR, a.graph_owner, graph)
        except (
            WhatIfError
        ) as exc:  # nothing of the step's graph is this event's own (a GPU lane's copy of an annotation)
            name = short_name(a.trace.name_of(event), 40)
            line = (
                str(exc)
                if graph
                else f"{name} saves nothing: it has no time of its own on the step's critical path graph"
            )
            pace.post(self, WhatIfDone(event, line, 0))
            return
        except Exception as exc:  # noqa: BLE001 - said in the line under the timeline, the app goes on
            faults.record("the what-if", exc)
            pace.post(self, WhatIfDone(event, f"what-if: {faults.one_line(exc)}", 0))
            return
        on_path = graph or any(it.event == event for it in w.before.items)
        pace.post(self, WhatIfDone(event, event_saving(w, on_path), w.saving_ns))

    def on_what_if_done(self, message: WhatIfDone) -> None:
        failed = message.line.startswith("what-if: ")
        self._say_critical(message.line, "failed" if failed else "done")

    async def on_critical_view_jump(self, message: CriticalView.Jump) -> None:
        """Enter on a row of the critical path view: that event selected on the timeline."""
        await self.show_view("timeline")
        self.timeline.select(message.event, jump=True)
