"""Messages the main screen's workers post to it: search matches, the marked range, a new nesting, value lanes."""

from __future__ import annotations

from textual.message import Message

from ..model.view.lanes import LaneIndex


class SearchDone(Message):
    def __init__(self, pattern: str, matches) -> None:
        super().__init__()
        self.pattern, self.matches = pattern, matches


class RangeDone(Message):
    def __init__(self, span: tuple[int, int], rows: list) -> None:
        super().__init__()
        self.span, self.rows = span, rows


class StructureReady(Message):
    """The nesting with Python frames shown or hidden is computed: the timeline can switch to it."""

    def __init__(self, hide_python: bool, lanes: LaneIndex) -> None:
        super().__init__()
        self.hide_python, self.lanes = hide_python, lanes


class SeriesReady(Message):
    """The value lanes (memory, counters) are computed: the timeline can show them."""

    def __init__(self, series: list) -> None:
        super().__init__()
        self.series = series


class RanksCompared(Message):
    def __init__(self, diff, labels: tuple[str, str]) -> None:
        super().__init__()
        self.diff, self.labels = diff, labels


class CriticalDone(Message):
    """The critical path of the step under the cursor is computed (path), or could not be (error, one line)."""

    def __init__(self, path, error: str = "") -> None:
        super().__init__()
        self.path, self.error = path, error


class WhatIfDone(Message):
    """What making one event faster saves (line: the sentence, or the error in one line)."""

    def __init__(self, event: int, line: str, saving_ns: int = 0) -> None:
        super().__init__()
        self.event, self.line, self.saving_ns = event, line, saving_ns
