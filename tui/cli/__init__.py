"""The tracetui command line: a table of commands (`commands.py`), one module per command group (view, tables,
profile, watch, sql, mcp), the options they share (`options.py`) and the help's manners (`help.py`)."""

from .commands import build_parser, main

__all__ = ["build_parser", "main"]
