"""A failed MCP call, told in one line: to the agent, what went wrong and what to try; to the log, the same line
(and, with --debug, the traceback).

The SDK wraps what a tool raises in its own errors ("Error executing tool sql", the cause hidden): here the
cause is read back and said as the command line says it. A bad argument names the argument, what it got and
what it takes; an unknown argument or tool lists the known ones; a trace that cannot be read says why (and,
for a relative path, where the server looks); anything else is a bug, said as one line and logged.
"""

from __future__ import annotations

import inspect
import logging
import sys
from typing import Any, Literal

LOG = logging.getLogger("tracetui.mcp")
MAX_CHARS = 600  # of a failure's line: an agent reads it, a log keeps it


def one_line_failure(tool: str, exc: BaseException, tools: dict[str, inspect.Signature]) -> str:
    """What the agent reads about a failed call: one line."""
    from pydantic import ValidationError

    cause = _cause(exc)
    if tool not in tools:
        return f"no tool named {tool!r}; the tools: {', '.join(sorted(tools))}"
    if isinstance(cause, ValidationError) and not _crashed(exc):
        return _bad_arguments(tool, cause, tools[tool])
    if _expected(cause):
        return _flat(_unreadable_hint(str(cause).strip("'\""), cause))
    return _flat(
        f"{tool} failed unexpectedly ({type(cause).__name__}: {cause}); this is a bug in tracetui, not in the call "
        "(started with --debug, the server logs its traceback)"
    )


def unknown_arguments(tool: str, arguments: dict[str, Any], tools: dict[str, inspect.Signature]) -> str | None:
    """One line naming the arguments the tool does not take (None: it takes them all)."""
    signature = tools.get(tool)
    if signature is None:
        return None
    unknown = [name for name in arguments if name not in signature.parameters]
    if not unknown:
        return None
    names = ", ".join(repr(n) for n in unknown)
    return f"{tool} takes no argument {names}; it takes {', '.join(signature.parameters)}"


class FailureLog:
    """The server's log on stderr: one line per failed call (its traceback too with debug)."""

    def __init__(self, debug: bool) -> None:
        self.debug = debug
        self.level: Literal["DEBUG", "WARNING"] = "DEBUG" if debug else "WARNING"
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_Formatter(debug))
        root = logging.getLogger()
        if not root.handlers:  # the server's own process (the SDK's server then leaves logging as it is)
            root.addHandler(handler)
            root.setLevel(self.level)

    def failed(self, tool: str, line: str, exc: BaseException) -> Any:
        """Log the failure and answer the call with its line as a tool error."""
        cause = _cause(exc)
        bug = _crashed(exc) and not _expected(cause)
        LOG.warning("%s failed: %s", tool, line, exc_info=cause if self.debug and bug else None)
        return _error(line)

    def refused(self, tool: str, line: str) -> Any:
        """A call refused before it ran (an argument the tool does not take): logged and answered as a tool error."""
        LOG.warning("%s refused: %s", tool, line)
        return _error(line)


def _error(line: str) -> Any:
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=line)], is_error=True)


class _Formatter(logging.Formatter):
    """One line per record (a message's line breaks folded); a traceback only with debug."""

    def __init__(self, debug: bool) -> None:
        super().__init__("tracetui mcp: %(levelname)s: %(message)s")
        self.debug = debug

    def format(self, record: logging.LogRecord) -> str:
        if self.debug:
            return super().format(record)
        record.exc_text = None
        saved, record.exc_info = record.exc_info, None
        try:
            return _flat(super().format(record)) + (f" ({_flat(_described(saved))})" if saved else "")
        finally:
            record.exc_info = saved


def _described(exc_info: Any) -> str:
    exc = exc_info[1] if isinstance(exc_info, tuple) else exc_info
    return f"{type(exc).__name__}: {exc}" if isinstance(exc, BaseException) else ""


def _cause(exc: BaseException) -> BaseException:
    """What the tool raised, under the SDK's wrapping of it."""
    while type(exc).__module__.startswith("mcp.") and exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


def _crashed(exc: BaseException) -> bool:
    """Did the SDK take it for a crash (anything but a rejected argument or a ToolError)?"""
    from mcp.server.mcpserver.exceptions import UnexpectedToolError

    return isinstance(exc, UnexpectedToolError) or not type(exc).__module__.startswith("mcp.")


def _expected(cause: BaseException) -> bool:
    """A failure tracetui says in one line (a bad path, regex, id, sort, query, limit), not a bug."""
    from pydantic import ValidationError

    import tracetui
    from tui.tables.base import UnknownSort

    if isinstance(cause, ValidationError):  # an answer the SDK could not send: a bug
        return False
    return isinstance(
        cause, (tracetui.TraceError, tracetui.QueryError, tracetui.UsageError, UnknownSort, ValueError, KeyError)
    )


def _unreadable_hint(text: str, cause: BaseException) -> str:
    """A trace named by a relative path that is not there: say where the server looked."""
    import os

    import tracetui

    path = getattr(cause, "path", None)
    if isinstance(cause, tracetui.TraceError) and path and not os.path.isabs(path) and not os.path.exists(path):
        return f"{text} (a relative path is read from the server's folder, {os.getcwd()}: give an absolute path)"
    return text


def _bad_arguments(tool: str, error: Any, signature: inspect.Signature) -> str:
    """Each argument the SDK refused: its name, what it got, what was wrong, what it takes."""
    said = []
    for e in error.errors():
        name = str(e["loc"][0]) if e.get("loc") else "?"
        takes = _takes(signature.parameters.get(name))
        if e.get("type") == "missing":
            said.append(f"missing argument {name} ({takes})")
        else:
            said.append(f"bad argument {name}={e.get('input')!r}: {e.get('msg', 'refused')} ({takes})")
    return _flat(f"{tool}: " + "; ".join(said))


def _takes(p: inspect.Parameter | None) -> str:
    if p is None:
        return "an argument it does not take"
    kind = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", str(p.annotation))
    default = "" if p.default is inspect.Parameter.empty else f", default {p.default!r}"
    return f"{p.name} takes {kind}{default}"


def _flat(text: str) -> str:
    """One line, cut to MAX_CHARS."""
    line = " ".join(str(text).split())
    return line if len(line) <= MAX_CHARS else line[: MAX_CHARS - 1] + "…"
