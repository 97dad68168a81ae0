"""Where a graph replay's capture is looked for when none is given: vLLM's capture_traces/ beside the trace.

Light (pathlib alone): the command line asks it before deciding whether a report can be replayed from the cache
(tui/cli/replay.py), before numpy or the model is imported."""

from __future__ import annotations

from pathlib import Path

CAPTURE_FOLDER = "capture_traces"


def capture_path(replay: str | Path) -> Path | None:
    """vLLM's capture_traces/ folder beside the replay, when there is one."""
    folder = Path(replay).parent / CAPTURE_FOLDER
    return folder if folder.is_dir() and not Path(replay).is_dir() else None
