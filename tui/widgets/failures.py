"""The one handler of failed workers, mixed into every node that starts them (Worker.StateChanged does not bubble).

A failed worker is a message, not an exit: the user reads one line, the traceback goes to the log.
"""

from __future__ import annotations

from textual.worker import Worker, WorkerState

from ..appkit import faults


class ReportsFailedWorkers:
    """Mixed into an App, Screen or Widget: its failed workers are notified in one line and logged."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        error = event.worker.error
        if event.state != WorkerState.ERROR or error is None:
            return
        self.report_failure((event.worker.description or event.worker.name or "a task").lower(), error)

    def report_failure(self, what: str, error: BaseException) -> None:
        """One line to the user, the traceback to the log: for a failed worker, or work done in place."""
        log = faults.record(what, error)
        self.notify(  # type: ignore[attr-defined]
            f"could not finish {what}: {faults.one_line(error)} (traceback in {log})", severity="error", timeout=10
        )
