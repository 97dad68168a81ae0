"""The MCP server: every tool of tools.py registered on the SDK's server, expected failures as one-line tool errors."""

from __future__ import annotations

from typing import Any

from .tools import sql_tool, tools
from .traces import Traces

INSTRUCTIONS = """\
tracetui reads PyTorch profiler (Kineto) traces: .json, .json.gz, or a folder of per-rank traces; demo:NAME
names a sample shipped with tracetui (demo:h100-bert-small, an H100 BERT inference run), to try the tools on.
Start with summary (the verdict: overhead-bound or compute-bound, and why) and explain (what the patterns
mean). ops is torch's key_averages() table, kernels the GPU kernels, code the time per source line. To dig
into events: search_events (a name regex) or events_in_range give event rows with ids; event(id) gives one
event's parents, children, the runtime call that launched it or the kernels it launched, and its flows.
sql runs DuckDB over tables events, ops, kernels, launches, steps, memory, counters, flows (ids join them).
Times are microseconds from the trace's first event. A memory snapshot (torch.cuda.memory._dump_snapshot
.pickle, read without running anything in it) goes to memory and diff as a trace does, and allocations lists
its allocations with the frames that made them."""


def build_server(cache: bool = True, debug: bool = False) -> Any:
    """The MCP server with every tool (sql only when DuckDB is installed); it logs warnings (all with debug)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from ... import __version__

    server = MCPServer(
        "tracetui", instructions=INSTRUCTIONS, version=__version__, log_level="DEBUG" if debug else "WARNING"
    )
    traces = Traces(cache)
    for tool in tools(traces) + _sql_tool(traces):
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


def _sql_tool(traces: Traces) -> list:
    try:
        import duckdb  # noqa: F401
    except ImportError:
        return []
    return [sql_tool(traces)]
