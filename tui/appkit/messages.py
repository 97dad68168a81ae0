"""Messages the workers post: load progress per phase, the loaded trace, analyses as they finish."""

from __future__ import annotations

from textual.message import Message

PHASES = ("decode", "nest", "link", "aggregate")  # decode and nest before the first paint; the rest behind it


class LoadProgress(Message):
    """How far a phase of loading or analysing has come (0..1; negative: waiting on another process's cache write)."""

    def __init__(self, phase: str, fraction: float) -> None:
        super().__init__()
        self.phase, self.fraction = phase, fraction


class TraceLoaded(Message):
    def __init__(self, analysis, lanes, seconds: float, hide_python: bool = False) -> None:
        super().__init__()
        self.analysis, self.lanes, self.seconds, self.hide_python = analysis, lanes, seconds, hide_python


class LoadFailed(Message):
    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error


class AnalysisReady(Message):
    """A result (Results.ops, Results.summary, ...) can now be read without waiting."""

    def __init__(self, result) -> None:
        super().__init__()
        self.result = result


class AnalysisFailed(Message):
    """A result could not be computed: one line for its panes, the traceback in the log."""

    def __init__(self, result, line: str, log) -> None:
        super().__init__()
        self.result, self.line, self.log = result, line, log


class CompareLoaded(Message):
    def __init__(self, diff, labels: tuple[str, str]) -> None:
        super().__init__()
        self.diff, self.labels = diff, labels
