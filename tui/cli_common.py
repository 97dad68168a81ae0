"""What every command that reads a trace shares: its arguments and the front door that loads it, warnings on stderr."""

from __future__ import annotations

import argparse
import sys


def trace_opts(p: argparse.ArgumentParser) -> None:
    """--no-cache and --debug, which every command that reads a trace takes."""
    p.add_argument("--no-cache", action="store_true", help="do not read or write the on-disk cache")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")


TRACE_HELP = "a trace (.json or .json.gz), or a folder: of per-rank traces (one job), or of captures (the newest)"


def format_opt(p: argparse.ArgumentParser, formats: tuple[str, ...]) -> None:
    """--format, one of formats (text by default)."""
    p.add_argument("--format", choices=formats, default="text", help="how to print it (default: text)")


def load(path: str, no_cache: bool, graph_capture: str | None = None):
    """The trace's Results through the front door (model/loading.py), what loading told printed on stderr."""
    from .model.loading import open_trace

    opened = open_trace(path, cache=not no_cache, graph_capture=graph_capture)
    for notice in opened.notices:
        print(f"tracetui: {notice}", file=sys.stderr)
    return opened.results
