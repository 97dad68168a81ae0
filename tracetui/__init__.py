"""tracetui for scripts, notebooks and agents: open a PyTorch profiler trace and read its tables as plain data.

    import tracetui

    t = tracetui.load("trace.json.gz")
    t.summary()["verdict"]                      # what `tracetui summary --format json` prints, as a dict
    t.ops(sort="self_cpu", limit=10)["rows"]    # the key_averages() table
    tracetui.to_pandas(t.kernels())             # any table as a DataFrame (pandas installed)
    s = tracetui.snapshot("snapshot.pickle")    # an allocator snapshot, read safely: s.memory(), s.allocations()

Every method returns exactly what the matching command prints with --format json, and events carry the
same ids everywhere (the viewer, `tracetui sql`, the MCP server). Importing tracetui is cheap: the model
loads on the first call.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from tui import __version__

if TYPE_CHECKING:
    from tui.model.errors import QueryError, TraceError

    from ._frames import to_arrow, to_pandas
    from ._snapshot import Snapshot, snapshot
    from ._trace import Trace, UsageError, diff, load, ranks

__all__ = [
    "QueryError",
    "Snapshot",
    "Trace",
    "TraceError",
    "UsageError",
    "__version__",
    "diff",
    "load",
    "ranks",
    "snapshot",
    "to_arrow",
    "to_pandas",
]
_HOMES = {
    "Trace": "tracetui._trace",
    "UsageError": "tracetui._trace",
    "diff": "tracetui._trace",
    "load": "tracetui._trace",
    "ranks": "tracetui._trace",
    "to_arrow": "tracetui._frames",
    "to_pandas": "tracetui._frames",
    "Snapshot": "tracetui._snapshot",
    "snapshot": "tracetui._snapshot",
    "TraceError": "tui.model.errors",
    "QueryError": "tui.model.errors",
}


def __getattr__(name: str) -> Any:
    """The public names, imported on first use (so `import tracetui` stays cheap)."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
