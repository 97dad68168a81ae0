"""What the commands share (pip's cmdoptions): the trace and format arguments, counts and percentages that must
not be negative, a command's entry in the table, the usage error, and the front door that loads a trace."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

FORMATS = ("text", "csv", "json", "md")
TRACE_HELP = (
    "a trace (.json or .json.gz), or a folder: of per-rank traces (one job), or of captures (the newest); "
    "demo:NAME: a sample shipped with tracetui (tracetui demo --list)"
)


class BadUsage(Exception):
    """Bad usage that argparse could not catch; exit 2 with one line."""


@dataclass(frozen=True)
class Command:
    """One command of a group module: how it adds its parser (given the subparsers and the command being run,
    None when building them all) and the function that runs it."""

    add: Callable[[Any, str | None], argparse.ArgumentParser | None]
    run: Callable[[argparse.Namespace], int]


def trace_opts(p: argparse.ArgumentParser) -> None:
    """--no-cache and --debug, which every command that reads a trace takes."""
    p.add_argument("--no-cache", action="store_true", help="do not read or write the on-disk cache")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")


def format_opt(p: argparse.ArgumentParser, formats: tuple[str, ...]) -> None:
    """--format, one of formats (text by default)."""
    p.add_argument("--format", choices=formats, default="text", help="how to print it (default: text)")


def one_trace(sub, name: str, text: str, formats: tuple[str, ...] = FORMATS) -> argparse.ArgumentParser:
    """A command over one TRACE with --format, --no-cache and --debug."""
    p = sub.add_parser(name, help=text)
    p.add_argument("trace", metavar="TRACE", help=TRACE_HELP)
    format_opt(p, formats)
    trace_opts(p)
    return p


def capture_opt(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """--graph-capture PATH."""
    p.add_argument(
        "--graph-capture",
        metavar="PATH",
        help="a graph capture trace (file or folder) to credit replayed graph kernels to the code that captured them "
        "(default: capture_traces/ beside the trace, or the capture recorded in it)",
    )
    return p


def screenshot_opt(p: argparse.ArgumentParser) -> None:
    """--screenshot-dir DIR."""
    p.add_argument(
        "--screenshot-dir",
        metavar="DIR",
        help="where the palette's Screenshot saves its SVG (default: the working directory)",
    )


LATER = "tracetui_later"  # an option's attribute: what fills its help's {}, called when the help is shown (Help)


def table_opts(p: argparse.ArgumentParser, sorts: Callable[[], str]) -> None:
    """--sort KEY (its keys read when --help shows them) and --limit N."""
    sort = p.add_argument("--sort", metavar="KEY", help="the column to sort by, largest first: {}")
    setattr(sort, LATER, sorts)
    p.add_argument("--limit", type=count, default=0, metavar="N", help="rows to print (0: all)")


def count(text: str) -> int:
    """argparse type: a count of rows, 0 or more (0: all); a negative one is a usage error."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (all) or more, got {value}")
    return value


def percent(text: str) -> float:
    """argparse type: a percentage, 0 or more; a negative one is a usage error."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage such as 5 or 2.5, got {text!r}") from None
    if not value >= 0:  # also NaN
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def trace_path(named: str) -> str:
    """A trace as named on the command line, as a path on disk (demo:NAME: its shipped sample's); TraceError, naming
    it as the user did, when nothing is there. Commands that load through load() need not call it: the front door
    reads demo:NAME too."""
    from ..model.errors import TraceError, no_such_file
    from ..model.samples import resolve

    path = resolve(named)
    if not os.path.exists(path):
        raise TraceError(named, no_such_file(named))
    return path


def tell(line: str, *, error: bool = False) -> None:
    """A line on stderr (`tracetui: note: ...`), wrapped at the terminal's width when stderr is one, or at
    TRACETUI_COLUMNS (for a note: an error stays one line in a log, for scripts), continued 4 spaces in."""
    import textwrap

    from ..model import settings
    from .output import stream_columns

    width = 0 if error else settings.columns() or 0
    if sys.stderr.isatty():
        width = width or stream_columns(sys.stderr) or 80
    lines = textwrap.wrap(line, width, subsequent_indent="    ", break_on_hyphens=False) if width > 8 else [line]
    print("\n".join(lines), file=sys.stderr, flush=True)


def check_opens(path: str, no_cache: bool, graph_capture: str | None = None) -> None:
    """Open the trace through the front door and keep nothing (a TraceError is the one line to say); what loading
    tells is left to the caller that opens it next, from the cache (the viewer)."""
    from ..model.loading import open_trace

    open_trace(path, cache=not no_cache, graph_capture=graph_capture)


def load(path: str, no_cache: bool, graph_capture: str | None = None):
    """The trace's Results through the front door (model/loading.py), what loading told printed on stderr."""
    from ..model.loading import open_trace
    from ..model.snapshot.read import is_snapshot

    if is_snapshot(path):  # an allocator snapshot: the commands that read one say so
        raise BadUsage(
            f"{path}: a memory snapshot, not a trace: tracetui memory, tracetui open and tracetui diff read it"
        )
    opened = open_trace(path, cache=not no_cache, graph_capture=graph_capture)
    for notice in opened.notices:
        tell(f"tracetui: {notice}")
    return opened.results
