"""Messages the loading worker posts to the app."""

from __future__ import annotations

from textual.message import Message


class LoadProgress(Message):
    def __init__(self, fraction: float) -> None:
        super().__init__()
        self.fraction = fraction


class TraceLoaded(Message):
    def __init__(self, analysis, lanes, seconds: float) -> None:
        super().__init__()
        self.analysis, self.lanes, self.seconds = analysis, lanes, seconds


class LoadFailed(Message):
    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error


class CompareLoaded(Message):
    def __init__(self, diff, labels: tuple[str, str]) -> None:
        super().__init__()
        self.diff, self.labels = diff, labels
