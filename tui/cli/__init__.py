"""The tracetui command line: a table of commands (`commands.py`), one module per command group (view, tables,
profile, watch, sql, mcp), the options they share (`options.py`) and the help's manners (`help.py`)."""

import sys

try:
    from .commands import build_parser, main
except KeyboardInterrupt:  # Ctrl-C while the command line's modules import, before main() can take it
    if sys.argv and sys.argv[0].replace("\\", "/").endswith(("/tracetui", "/tracetui.exe", "tui/__main__.py")):
        raise SystemExit(130) from None  # the `tracetui` program: stopped, as main() says it (no traceback)
    raise

__all__ = ["build_parser", "main"]
