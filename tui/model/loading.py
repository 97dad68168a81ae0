"""The front door of loading: one function that opens a trace for the CLI, the app, the API and the MCP server.

open_trace() takes what a user names (a .json, a .json.gz, a folder of per-rank traces, a folder of
captures, or demo:NAME, a sample shipped in the package), loads it through the on-disk cache, credits
replayed graph kernels to their capture, and returns the Results with what loading has to tell, as data:
each Notice is a warning (something was skipped or refused) or a note (a fact about what was opened). The
caller decides how to say them: the CLI prints `tracetui: warning: ...` lines on stderr, the viewer
notifies, the API keeps them on the trace.

Threads that open the same trace at the same moment share one opening (its Opened, or its error): the
trace is read once while the others wait for it. A thread that opens it later opens it again, from the
cache (see load/cache.py, which also holds one writer per entry across processes).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .analyses.graphs.capture import load_credited
from .analyses.results import Results
from .errors import TraceError
from .load.flight import SingleFlight
from .load.folder import list_captures, skipped_captures
from .samples import resolve

Level = Literal["warning", "note"]
OTHERS_NAMED = 5  # of a folder's other captures, named in its note
_OPENING: SingleFlight[Opened] = SingleFlight()  # the openings under way, by what was asked for


@dataclass(frozen=True)
class Notice:
    """One thing loading has to tell: a warning or a note, in one line."""

    level: Level
    text: str

    def __str__(self) -> str:
        return f"{self.level}: {self.text}"


@dataclass
class Opened:
    """An opened trace: its Results, what loading told, and, for a folder of captures, which one was opened."""

    path: str  # as the caller named it
    results: Results
    notices: list[Notice] = field(default_factory=list)
    capture: str | None = None  # a folder of captures: the newest, the one opened
    other_captures: list[str] = field(default_factory=list)  # and the others, newest first

    @property
    def warnings(self) -> list[str]:
        return [n.text for n in self.notices if n.level == "warning"]

    @property
    def notes(self) -> list[str]:
        return [n.text for n in self.notices if n.level == "note"]


def open_trace(
    path: str | Path,
    *,
    cache: bool = True,
    graph_capture: str | None = None,
    progress: Callable[[float], None] | None = None,
) -> Opened:
    """Open a trace file, a folder of ranks (one job), a folder of captures (its newest) or demo:NAME (a shipped
    sample), through the cache. What loading tells names the trace as the caller did.

    Raises TraceError (one line naming the file) when nothing can be read. Threads asking for the same trace
    (as named, with the same options) while it is opened share that opening; only the first one's progress
    is told.
    """
    named = str(path)
    key = (named, os.path.abspath(resolve(named)), cache, graph_capture)
    return _OPENING.do(key, lambda: _open(named, cache, graph_capture, progress))


def _open(named: str, cache: bool, graph_capture: str | None, progress: Callable[[float], None] | None) -> Opened:
    real = resolve(named)
    found = list_captures(real)
    problem = folder_problem(real, found)
    if problem:
        raise TraceError(named, problem)
    target = str(found[0]) if found else real
    trace, told = load_credited(target, cache, graph_capture, progress)
    notices = [_notice(line) for line in told]
    if found:
        notices.insert(0, Notice("note", captures_note(named, found)))
    warning = trace.report.warning()
    said = target if found else named  # demo:NAME, not the sample's path in the package
    if warning:
        notices.append(Notice("warning", f"{said}: {warning}"))
    if trace.job:
        notices.append(
            Notice(
                "note",
                f"{said} is a job of {len(trace.ranks)} ranks, read together: totals add up every rank "
                f"(tracetui ranks {said} compares them side by side)",
            )
        )
    others = [str(f) for f in found[1:]]
    return Opened(named, Results(trace), notices, target if found else None, others)


def _notice(line: str) -> Notice:
    """A line of the graph-capture credit ("warning: ..." or "note: ..."; anything else is a note)."""
    level, sep, text = line.partition(": ")
    if sep and level in ("warning", "note"):
        return Notice(level, text)  # type: ignore[arg-type]
    return Notice("note", line)


def folder_problem(folder: str, found: list[Path] | None = None) -> str | None:
    """Why a folder of captures cannot be opened: none of its files is a trace (None: it can be, or is no such
    folder). found: its captures, when the caller has them."""
    if found is None:
        found = list_captures(folder)
    skipped = [] if found else skipped_captures(folder)
    return f"no file of this folder is a trace: {_skipped(skipped)}" if skipped else None


def _skipped(files: list[tuple[Path, str]]) -> str:
    """notes.txt.json (not a JSON trace), a.json (empty trace)"""
    return ", ".join(f"{f.name} ({why.split(' (')[0]})" for f, why in files)


def captures_note(folder: str, found: list[Path]) -> str:
    """A folder of captures: which one is reported, the others, newest first, and the files that are no trace."""
    others = ", ".join(f.name for f in found[1 : OTHERS_NAMED + 1]) + (" ..." if len(found) > OTHERS_NAMED + 1 else "")
    skipped = skipped_captures(folder)
    said = _skipped(skipped)
    return (
        f"{folder} is a folder of {len(found)} capture{'s' if len(found) != 1 else ''}; this is the newest, {found[0].name}"
        + (f" (the others, newest first: {others})" if others else "")
        + (
            f"; skipped {len(skipped)} file{'s' if len(skipped) != 1 else ''} that {'are' if len(skipped) != 1 else 'is'} no trace: {said}"
            if skipped
            else ""
        )
    )
