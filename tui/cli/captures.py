"""The command line on a folder of captures: the newest reported (others listed), and `diff DIR` its newest two."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from ..model import settings
from .options import BadUsage, tell

PER_CAPTURE = ("summary", "ops", "kernels", "code", "memory", "explain", "roofline", "breakdown")


def captures_of(path: str) -> list[Path]:
    """The captures of a folder, newest first ([] when path is a file or a job of ranks)."""
    from ..model.load.folder import list_captures

    path = _resolve(path)  # demo:NAME: a shipped sample (none is a folder of captures)
    return list_captures(path) if os.path.isdir(path) else []


def _resolve(named: str) -> str:
    from ..model.samples import resolve

    return resolve(named)


def captures_note(folder: str, found: list[Path]) -> str:
    """The front door's note on a folder of captures (imported when needed: the CLI starts without the model)."""
    from ..model.loading import captures_note as note

    return note(folder, found)


def run(command: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a command, first turning a folder of captures into its newest capture (or its newest two for diff)."""
    name = args.command
    if name in PER_CAPTURE and (found := captures_of(args.trace)):
        return _on_newest(command, args, found)
    if name == "diff":
        _diff_targets(args)
    elif name == "open" and len(args.traces) == 1 and (found := captures_of(args.traces[0])):
        tell(f"tracetui: note: {captures_note(args.traces[0], found)}")
        args.traces = [str(found[0])]
    elif name == "ranks" and (found := captures_of(args.trace)):
        raise BadUsage(
            f"{args.trace}: a folder of {len(found)} captures, not a job of ranks (no file names a rank); "
            f"tracetui summary {args.trace} reports the newest, tracetui diff {args.trace} compares the newest two"
        )
    return command(args)


def _on_newest(command: Callable[[argparse.Namespace], int], args: argparse.Namespace, found: list[Path]) -> int:
    """The command on the newest capture; its JSON gains "capture" and "other_captures", its text a first line."""
    from ..reports.formats import terminal_width

    folder, args.trace = args.trace, str(found[0])
    out = io.StringIO()
    with _width_kept(terminal_width()), contextlib.redirect_stdout(out):
        code = command(args)
    text = out.getvalue()
    fmt = getattr(args, "format", "text")
    if fmt == "json" and text.strip():
        doc = json.loads(text)
        text = json.dumps({"capture": args.trace, "other_captures": [str(f) for f in found[1:]], **doc}, indent=2)
        text += "\n"
    elif fmt in ("text", "md") and text:
        from ..reports.formats import wrap

        note = f"Capture: {captures_note(folder, found)}"
        text = "\n".join(wrap([note], terminal_width() if fmt == "text" else None, "    ")) + "\n\n" + text
    else:
        tell(f"tracetui: note: {captures_note(folder, found)}")
    sys.stdout.write(text)
    return code


@contextlib.contextmanager
def _width_kept(width: int | None) -> Iterator[None]:
    """The terminal's width, held for a command whose output is caught in a buffer: behind the redirect its stdout
    is no terminal, and its tables came out at full width (ops 219 columns in an 80-column terminal)."""
    if width is None or settings.columns() is not None:
        yield
        return
    os.environ["TRACETUI_COLUMNS"] = str(width)
    try:
        yield
    finally:
        del os.environ["TRACETUI_COLUMNS"]


def _what(named: str, found: list[Path]) -> str:
    """What diff was given instead of two captures: one capture, a job of ranks, a folder of none, one trace."""
    from ..model.load.folder import no_traces, trace_files

    path = Path(_resolve(named))
    if found:
        return f"{named} is a folder of 1 capture"
    if not path.is_dir():
        return f"{named} is one trace"
    return f"{named} is a job of ranks" if trace_files(path) else f"{named}: {no_traces(path)}"


def _diff_targets(args: argparse.Namespace) -> None:
    """`diff DIR`: the newest two captures (A the older); `diff A B`: as given."""
    if args.trace_b is not None:
        return
    found = captures_of(args.trace_a)
    if len(found) < 2:
        raise BadUsage(f"diff takes two traces, or a folder of two captures or more ({_what(args.trace_a, found)})")
    args.trace_a, args.trace_b = str(found[1]), str(found[0])
    tell(f"tracetui: note: comparing the newest two captures of {Path(args.trace_b).parent}")
