"""`tracetui open`: the viewer on a trace, a folder of ranks, or two traces side by side."""

from __future__ import annotations

import argparse

from .options import TRACE_HELP, BadUsage, Command, capture_opt, check_opens, screenshot_opt, trace_opts, trace_path


def add_open(sub, command: str | None) -> argparse.ArgumentParser:
    p = sub.add_parser("open", help="open a trace (.json, .json.gz or a folder of per-rank traces) in the viewer")
    p.add_argument("traces", nargs="+", metavar="TRACE", help=TRACE_HELP + "; two with --compare")
    p.add_argument("--compare", action="store_true", help="compare two traces side by side")
    screenshot_opt(p)
    trace_opts(p)
    capture_opt(p)
    return p


def cmd_open(args: argparse.Namespace) -> int:
    from ..model.snapshot.read import is_snapshot

    paths = [trace_path(named) for named in args.traces]  # the viewer reads files: demo:NAME is its sample's
    for path in paths:
        if not is_snapshot(path):  # said before the full screen starts
            check_first_bytes(path)
            check_small_file(path, args.no_cache, getattr(args, "graph_capture", None))
    if args.compare and len(args.traces) != 2:
        raise BadUsage("--compare takes exactly two traces")
    if not args.compare and len(args.traces) > 1:
        raise BadUsage("open takes one trace or a folder of per-rank traces; add --compare to compare two")
    if args.compare and any(is_snapshot(p) for p in args.traces):
        raise BadUsage("--compare compares two traces; for two memory snapshots, tracetui diff A B says what grew")
    from ..app import TraceApp

    app = TraceApp(
        paths,
        use_cache=not args.no_cache,
        compare=args.compare,
        initial_view=getattr(args, "initial_view", None) or "timeline",
        graph_capture=getattr(args, "graph_capture", None),
        screenshot_dir=getattr(args, "screenshot_dir", None),
    )
    app.run()
    if app.load_error:
        raise app.load_error
    return app.return_code or 0


def check_first_bytes(path: str) -> None:
    """What a file's first bytes show it cannot be (empty, no JSON, no gzip), said before the full screen starts
    (TraceError); a folder, before its files are read, says it holds no trace. Anything else the load finds."""
    from pathlib import Path

    from ..model.errors import TraceError
    from ..model.load.folder import first_problem, no_traces, trace_files

    p = Path(path)
    if p.is_dir():
        if not trace_files(p):
            raise TraceError(path, no_traces(p))
        from ..model.loading import folder_problem

        problem = folder_problem(path)
        if problem:
            raise TraceError(path, problem)
        return
    problem = first_problem(p)
    if problem is not None:
        raise TraceError(path, problem)


SMALL_FILE = 2 << 20  # a file this small is read whole before the full screen: its error, if any, as one line


def check_small_file(path: str, no_cache: bool, graph_capture: str | None) -> None:
    """A small file is opened (into the cache, where the viewer then finds it) before the full screen starts, so
    what only a whole read finds (a cut file with no events) is one line, never a screen that flashes."""
    import os

    if os.path.isfile(path) and os.path.getsize(path) <= SMALL_FILE:
        check_opens(path, no_cache, graph_capture)  # TraceError: one line, as for the first bytes


COMMANDS = {"open": Command(add_open, cmd_open)}
