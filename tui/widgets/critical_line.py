"""One line under the timeline that says what the critical path keys found: the path marked (b), a what-if (x).

Attributes down: the screen calls say() with the text and its kind (computing, done, failed); hidden until then.
"""

from __future__ import annotations

from textual.widgets import Static


class CriticalLine(Static):
    """The critical path's status: "critical path of ProfilerStep#6: 2.18 ms, bound by GPU compute (64%)"."""

    DEFAULT_CSS = """
    CriticalLine { height: auto; max-height: 2; padding: 0 1; background: $panel; color: $text; }
    CriticalLine.computing { color: $text-muted; }
    CriticalLine.failed { color: $error; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)
        self.text = ""
        self.display = False

    def say(self, text: str, kind: str = "done") -> None:
        self.text = text
        self.set_classes(kind)
        self.update(text)
        self.display = bool(text)
