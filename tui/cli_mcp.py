"""`tracetui mcp`: a Model Context Protocol server over stdio, so an agent can read traces as tools.

Every tool takes the trace's path and answers with the JSON the matching command prints (the same
figures, the same event ids), large tables paged by limit and offset with how much is left. A bad
path, regex, id or query comes back as a tool error of one line; the server keeps running. It reads
the paths the client names (for a folder, the traces in it; for a graph replay, capture_traces/ beside
it), writes only its cache, and runs no command; its sql tool runs DuckDB with no file access.
"""

from __future__ import annotations

import argparse
import os
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from .cli_common import trace_opts

if TYPE_CHECKING:
    from tracetui import Trace

KEEP_OPEN = 4  # traces kept open between calls (the least recently used is closed first)
INSTRUCTIONS = """\
tracetui reads PyTorch profiler (Kineto) traces: .json, .json.gz, or a folder of per-rank traces.
Start with summary (the verdict: overhead-bound or compute-bound, and why) and explain (what the patterns
mean). ops is torch's key_averages() table, kernels the GPU kernels, code the time per source line. To dig
into events: search_events (a name regex) or events_in_range give event rows with ids; event(id) gives one
event's parents, children, the runtime call that launched it or the kernels it launched, and its flows.
sql runs DuckDB over tables events, ops, kernels, launches, steps, memory, counters, flows (ids join them).
Times are microseconds from the trace's first event."""
EPILOG = """\
prints: nothing; speaks the Model Context Protocol on stdin and stdout until the client closes it.
tools: summary, explain, ops, kernels, code, memory, roofline, critical (what_if), diff, steps,
  search_events, events_in_range, event, sql (with tracetui[sql]); each takes `trace`, the path of a trace.
add it to an agent: claude mcp add tracetui -- tracetui mcp
example: tracetui mcp   (started by the agent, not by hand)"""


def add_parser(sub) -> argparse.ArgumentParser:
    """Register `tracetui mcp`."""
    p = sub.add_parser(
        "mcp",
        help="serve the trace tools to an agent over stdio (Model Context Protocol)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    trace_opts(p)
    return p


def cmd_mcp(args: argparse.Namespace) -> int:
    from .model.errors import QueryError

    try:
        import mcp  # noqa: F401
    except ImportError:
        raise QueryError("tracetui mcp needs the MCP SDK: pip install 'tracetui[mcp]'") from None
    build_server(cache=not args.no_cache, debug=args.debug).run("stdio")
    return 0


class Traces:
    """The traces the client named, kept open (by path, size and mtime) so a second call loads nothing."""

    def __init__(self, cache: bool) -> None:
        self.cache = cache
        self.open: OrderedDict[tuple, Trace] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, path: str) -> Trace:
        import tracetui

        try:
            st = os.stat(path)
        except OSError:
            return tracetui.load(path, cache=self.cache)  # raises the loader's one line (no such file, ...)
        key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
        with self.lock:
            if key in self.open:
                self.open.move_to_end(key)
                return self.open[key]
        trace = tracetui.load(path, cache=self.cache)
        with self.lock:
            self.open[key] = trace
            while len(self.open) > KEEP_OPEN:
                self.open.popitem(last=False)
        return trace


def page(doc: dict, key: str, limit: int, offset: int) -> dict:
    """The document with doc[key] cut to limit rows from offset, and a page saying how many are left."""
    rows = doc[key]
    if limit < 1 or offset < 0:
        raise ValueError(f"limit must be 1 or more and offset 0 or more (got limit {limit}, offset {offset})")
    shown = rows[offset : offset + limit]
    left = max(len(rows) - offset - len(shown), 0)
    info = {"total": len(rows), "offset": offset, "returned": len(shown), "left": left}
    return {**doc, key: shown, "page": info | ({"next_offset": offset + len(shown)} if left else {})}


def build_server(cache: bool = True, debug: bool = False) -> Any:
    """The MCP server with every tool (sql only when DuckDB is installed); it logs warnings (all with debug)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from . import __version__

    server = MCPServer(
        "tracetui", instructions=INSTRUCTIONS, version=__version__, log_level="DEBUG" if debug else "WARNING"
    )
    traces = Traces(cache)
    for tool in _tools(traces) + _sql_tool(traces):
        server.add_tool(_one_line(tool, ToolError), name=tool.__name__, description=tool.__doc__)
    return server


def _one_line(tool, tool_error: type[Exception]):
    """The tool, its expected failures (a bad path, regex, id, sort, query) raised as one-line tool errors."""
    import functools

    import tracetui
    from tui.tables.base import UnknownSort

    expected = (tracetui.TraceError, tracetui.QueryError, tracetui.UsageError, UnknownSort, ValueError, KeyError)

    @functools.wraps(tool)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return tool(*args, **kwargs)
        except expected as exc:
            raise tool_error(str(exc).strip("'\"")) from None

    return run


def _tools(traces: Traces) -> list:
    from .cli_mcp_tools import tools

    return tools(traces)


def _sql_tool(traces: Traces) -> list:
    try:
        import duckdb  # noqa: F401
    except ImportError:
        return []
    from .cli_mcp_tools import sql_tool

    return [sql_tool(traces)]
