"""A test hook: each worker's result can be held back before it is posted, as a busy machine holds it back.

Every worker posts what it made through post() (or calls back through call_from()). With a delay set
(set_delay, or TRACETUI_RESULT_DELAY in seconds), each result waits that long in its worker thread, so the
keys a user presses meanwhile arrive first: the orders a loaded 2-core server produces, on every test run.
"""

from __future__ import annotations

import time
from typing import Any

from ..model import settings

_delay = [settings.result_delay()]


def set_delay(seconds: float) -> None:
    """Hold back each worker's result this long (0: post at once)."""
    _delay[0] = max(float(seconds), 0.0)


def delay() -> float:
    return _delay[0]


def _wait() -> None:
    if _delay[0] > 0:
        time.sleep(_delay[0])


def post(node: Any, message: Any) -> bool:
    """Post a worker's result to node (a widget, screen or app), after the hook's delay."""
    _wait()
    return bool(node.post_message(message))


def call_from(app: Any, callback: Any, *args: Any) -> Any:
    """Run callback on the UI thread from a worker (App.call_from_thread), after the hook's delay."""
    _wait()
    return app.call_from_thread(callback, *args)
