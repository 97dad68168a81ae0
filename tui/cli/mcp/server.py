"""The MCP server: every tool of tools.py, run side by side in worker threads, each failure one line.

As many calls run at once as calls_at_once() says (the cores and a few more, for the time a call waits on the
disk or in DuckDB); the others wait their turn, the quickest first (turns.py: by how long the same tool took
on the same trace before, and how long each has waited), and each answer goes back as soon as its call ends
(the pipes are read and written on the event loop: stdio.py). A call that names a trace not yet open loads it
first: one load however many calls name it, the others waiting for it without holding a worker, so calls on
traces already open go on meanwhile. Every failure reaches the client as one line saying what went wrong and
what to try (failures.py), and the log as one line (the traceback too with --debug).
"""

from __future__ import annotations

import functools
import inspect
import os
from typing import Any

from . import stdio
from .failures import FailureLog, one_line_failure, unknown_arguments
from .tools import sql_tool, tools
from .traces import Traces
from .turns import Turns

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
its allocations with the frames that made them. Calls may be made in parallel."""
TRACE_ARGS = ("trace", "a", "b")  # the arguments that name a trace: opened before the call takes a worker
TRACE_HELP = "give the path of a .json or .json.gz trace, or of a folder of traces, as the server sees it"


def calls_at_once() -> int:
    """How many calls run at once: the cores and 4 more (threads wait on the disk and in DuckDB), at most 32."""
    return min(32, (os.cpu_count() or 1) + 4)


def build_server(cache: bool = True, debug: bool = False) -> Any:
    """The MCP server with every tool (sql only when DuckDB is installed); it logs one line per failure."""
    from ... import __version__

    log = FailureLog(debug)  # before the SDK's server, whose logging then leaves ours in place
    signatures: dict[str, inspect.Signature] = {}
    server = _server_class()(
        "tracetui", instructions=INSTRUCTIONS, version=__version__, log_level=log.level, log=log, tools=signatures
    )
    traces = Traces(cache)
    turns = Turns(calls_at_once())
    for tool in tools(traces) + _sql_tool(traces):
        signatures[tool.__name__] = inspect.signature(tool)
        server.add_tool(_in_turn(tool, traces, turns), name=tool.__name__, description=tool.__doc__)
    return server


def _server_class() -> type:
    """The SDK's server, each failed call answered as one line and logged as one (failures.py), served over
    pipes the event loop reads and writes itself (stdio.py)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError

    class TraceServer(MCPServer):
        def __init__(self, *args: Any, log: FailureLog, tools: dict[str, inspect.Signature], **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.log, self.signatures = log, tools

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            unknown = unknown_arguments(name, arguments, self.signatures)  # the SDK would drop them unsaid
            if unknown is not None:
                return self.log.refused(name, unknown)
            try:
                return await super().call_tool(name, arguments, context)
            except MCPError:  # a protocol error, answered as the SDK answers it
                raise
            except Exception as exc:
                return self.log.failed(name, one_line_failure(name, exc, self.signatures), exc)

        async def run_stdio_async(self) -> None:
            if os.name != "posix":  # no waiting on a pipe from the loop there: the SDK's threads
                return await super().run_stdio_async()
            with stdio.claimed() as (wire_in, wire_out):
                async with stdio_server(stdin=wire_in, stdout=wire_out) as (read, write):  # type: ignore[arg-type]
                    low = self._lowlevel_server
                    await low.run(read, write, low.create_initialization_options())

    return TraceServer


def _in_turn(tool, traces: Traces, turns: Turns) -> Any:
    """The tool as a coroutine: the traces it names opened first (once, see Traces.ready), then its body run in
    a worker thread when its turn comes (turns.py)."""
    from tracetui import UsageError

    named = [name for name in inspect.signature(tool).parameters if name in TRACE_ARGS]

    @functools.wraps(tool)
    async def run(**kwargs: Any) -> Any:
        paths = {name: kwargs[name] for name in named if isinstance(kwargs.get(name), str)}
        for name, path in paths.items():
            if not path.strip():
                raise UsageError(f"{tool.__name__}: {name} is empty; {TRACE_HELP}")
            await traces.ready(path, turns)
        return await turns.run((tool.__name__, *paths.values()), functools.partial(tool, **kwargs))

    return run


def _sql_tool(traces: Traces) -> list:
    try:
        import duckdb  # noqa: F401
    except ImportError:
        return []
    return [sql_tool(traces)]
