"""`tracetui open`: the viewer on a trace, a folder of ranks, or two traces side by side."""

from __future__ import annotations

import argparse

from .options import TRACE_HELP, Command, UsageError, capture_opt, screenshot_opt, trace_opts, trace_path


def add_open(sub, command: str | None) -> argparse.ArgumentParser:
    p = sub.add_parser("open", help="open a trace (.json, .json.gz or a folder of per-rank traces) in the viewer")
    p.add_argument("traces", nargs="+", metavar="TRACE", help=TRACE_HELP + "; two with --compare")
    p.add_argument("--compare", action="store_true", help="compare two traces side by side")
    screenshot_opt(p)
    trace_opts(p)
    capture_opt(p)
    return p


def cmd_open(args: argparse.Namespace) -> int:
    paths = [trace_path(named) for named in args.traces]  # the viewer reads files: demo:NAME is its sample's
    if args.compare and len(args.traces) != 2:
        raise UsageError("--compare takes exactly two traces")
    if not args.compare and len(args.traces) > 1:
        raise UsageError("open takes one trace or a folder of per-rank traces; add --compare to compare two")
    from ..model.snapshot.read import is_snapshot

    if args.compare and any(is_snapshot(p) for p in args.traces):
        raise UsageError("--compare compares two traces; for two memory snapshots, tracetui diff A B says what grew")
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


COMMANDS = {"open": Command(add_open, cmd_open)}
