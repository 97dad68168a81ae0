"""`tracetui mcp`: a Model Context Protocol server over stdio, so an agent can read traces as tools.

Every tool takes the trace's path and answers with the JSON the matching command prints (the same
figures, the same event ids), large tables paged by limit and offset with how much is left. A bad
path, regex, id or query comes back as a tool error of one line; the server keeps running. It reads
the paths the client names (for a folder, the traces in it; for a graph replay, capture_traces/ beside
it), writes only its cache, and runs no command; its sql tool runs DuckDB with no file access.
"""

from __future__ import annotations

import argparse
import importlib.util

from ..options import Command, trace_opts

EPILOG = """\
prints: nothing; speaks the Model Context Protocol on stdin and stdout until the client closes it.
tools: summary, explain, ops, kernels, code, memory, roofline, critical (what_if), diff, steps,
  search_events, events_in_range, event, sql (with tracetui[sql]); each takes `trace`, the path of a trace.
calls: made in parallel, the cores + 4 (at most 32) run at once, the others wait their turn (the quickest
  first); a failed call answers one line, and logs one on stderr (--debug: with the traceback of a bug).
agents: claude mcp add tracetui -- tracetui mcp   (codex, gemini and the others: see README)
example: tracetui mcp   (started by the agent, not by hand)"""


def needs_sdk() -> str:
    from ..install import extra_hint

    return f"tracetui mcp needs the MCP SDK: {extra_hint('mcp')}"


class _NeedsSDK(argparse.Action):
    """--help without the MCP SDK: the one line that says which extra to install (the help describes a server
    that cannot start here), exit 2."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None) -> None:  # noqa: A002
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        parser.exit(2, f"tracetui: error: {needs_sdk()}\n")


def add_mcp(sub, command: str | None) -> argparse.ArgumentParser:
    """Register `tracetui mcp`; when it is the command run and the SDK is missing, its --help says so."""
    missing = command == "mcp" and importlib.util.find_spec("mcp") is None  # found, not imported
    p = sub.add_parser(
        "mcp",
        help="serve the trace tools to an agent over stdio (Model Context Protocol)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=not missing,
    )
    if missing:
        p.add_argument("-h", "--help", action=_NeedsSDK, help="show this help message and exit")
    trace_opts(p)
    return p


def cmd_mcp(args: argparse.Namespace) -> int:
    from ...model.errors import QueryError

    try:
        import mcp  # noqa: F401
    except ImportError:
        raise QueryError(needs_sdk()) from None
    from .server import build_server

    build_server(cache=not args.no_cache, debug=args.debug).run("stdio")
    return 0


COMMANDS = {"mcp": Command(add_mcp, cmd_mcp)}
