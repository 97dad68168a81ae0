"""The command line on a folder of captures: the newest reported (others listed), `diff DIR`, and `watch DIR`."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from .model.errors import TraceError

PER_CAPTURE = ("summary", "ops", "kernels", "code", "memory", "explain", "roofline")
ONCE_LOOKS = 4  # --once: files still being written are looked at again this many times, then left
WATCH_EPILOG = """\
prints: with --format json, one line per capture (capture, steps, step_us, verdict, reason, written), every
capture already there first, then each new one once its file is complete; --format text, the same as a table
row. Without --format: a strip of the captures with their step times and verdicts (d: diff the shown
capture against the one before it; o: open it in the viewer, q or Esc there comes back to the strip). Files
still being written, or corrupt, are skipped with a note; an empty folder is waited on.
defaults: poll every 2 s, until Ctrl-C (--once: the captures already there, then exit; none: says so).
example: tracetui watch runs/profile --format json >> profile.log"""


class CaptureUsage(Exception):
    """Bad usage on a folder of captures (exit 2, one line)."""


def captures_of(path: str) -> list[Path]:
    """The captures of a folder, newest first ([] when path is a file or a job of ranks)."""
    from .model.load.folder import list_captures

    return list_captures(path) if os.path.isdir(path) else []


def captures_note(folder: str, found: list[Path]) -> str:
    """The front door's note on a folder of captures (imported when needed: the CLI starts without the model)."""
    from .model.loading import captures_note as note

    return note(folder, found)


def run(command: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a command, first turning a folder of captures into its newest capture (or its newest two for diff)."""
    name = args.command
    if name in PER_CAPTURE and (found := captures_of(args.trace)):
        return _on_newest(command, args, found)
    if name == "diff":
        _diff_targets(args)
    elif name == "open" and len(args.traces) == 1 and (found := captures_of(args.traces[0])):
        print(f"tracetui: note: {captures_note(args.traces[0], found)}", file=sys.stderr)
        args.traces = [str(found[0])]
    elif name == "ranks" and (found := captures_of(args.trace)):
        raise CaptureUsage(
            f"{args.trace}: a folder of {len(found)} captures, not a job of ranks (no file names a rank); "
            f"tracetui summary {args.trace} reports the newest, tracetui diff {args.trace} compares the newest two"
        )
    return command(args)


def _on_newest(command: Callable[[argparse.Namespace], int], args: argparse.Namespace, found: list[Path]) -> int:
    """The command on the newest capture; its JSON gains "capture" and "other_captures", its text a first line."""
    folder, args.trace = args.trace, str(found[0])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = command(args)
    text = out.getvalue()
    fmt = getattr(args, "format", "text")
    if fmt == "json" and text.strip():
        doc = json.loads(text)
        text = json.dumps({"capture": args.trace, "other_captures": [str(f) for f in found[1:]], **doc}, indent=2)
        text += "\n"
    elif fmt in ("text", "md") and text:
        text = f"Capture: {captures_note(folder, found)}\n\n" + text
    else:
        print(f"tracetui: note: {captures_note(folder, found)}", file=sys.stderr)
    sys.stdout.write(text)
    return code


def _diff_targets(args: argparse.Namespace) -> None:
    """`diff DIR`: the newest two captures (A the older); `diff A B`: as given."""
    if args.trace_b is not None:
        return
    found = captures_of(args.trace_a)
    if len(found) < 2:
        what = "a folder of 1 capture" if found else "a job of ranks" if os.path.isdir(args.trace_a) else "one trace"
        raise CaptureUsage(f"diff takes two traces, or a folder of two captures or more ({args.trace_a} is {what})")
    args.trace_a, args.trace_b = str(found[1]), str(found[0])
    print(f"tracetui: note: comparing the newest two captures of {Path(args.trace_b).parent}", file=sys.stderr)


def add_watch_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "watch",
        help="follow a folder of captures (tensorboard_trace_handler's) as training writes them",
        epilog=WATCH_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("trace", metavar="DIR", help="the folder the training run writes its captures to")
    p.add_argument("--format", choices=("text", "json"), help="headless: one line per capture (default: the viewer)")
    p.add_argument("--interval", type=float, default=2.0, metavar="S", help="seconds between looks (default 2)")
    p.add_argument("--once", action="store_true", help="report the captures already there, then exit")
    p.add_argument(
        "--screenshot-dir", metavar="DIR", help="where the palette's Screenshot saves (default: the working directory)"
    )
    p.add_argument("--no-cache", action="store_true", help="do not read or write the on-disk cache")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    return p


def cmd_watch(args: argparse.Namespace) -> int:
    folder = Path(args.trace)
    if not folder.is_dir():
        raise TraceError(folder, "no such folder" if not folder.exists() else "not a folder (watch takes one)")
    if args.interval <= 0:
        raise CaptureUsage(f"--interval must be positive, got {args.interval:g}")
    if args.format is None and (args.once or not sys.stdout.isatty()):
        args.format = "text"  # --once, or piped: lines, never a full-screen viewer into a pipe
    if args.format is None:
        from .app import TraceApp  # the strip, and `o` opens a capture in the viewer over it

        app = TraceApp(
            [], use_cache=not args.no_cache, watch=folder, interval=args.interval, screenshot_dir=args.screenshot_dir
        )
        app.run()
        return app.return_code or 0
    return watch_headless(folder, args.format, args.interval, args.once, not args.no_cache)


def watch_headless(folder: Path, fmt: str, interval: float, once: bool, use_cache: bool) -> int:
    """One line per complete capture, as it comes; notes on skipped files on stderr."""
    from .model.watch import SETTLE_S, Watcher, summarize

    watcher = Watcher(folder)
    looks = 0
    try:
        while True:
            ready, notes = watcher.poll()
            looks += 1
            if looks == 1 and not ready and not notes and not watcher.writing():
                print(_nothing(folder, once), file=sys.stderr, flush=True)
            for note in notes:
                print(f"tracetui: note: {note}", file=sys.stderr, flush=True)
            for f in ready:
                try:
                    row = summarize(f, use_cache)
                except TraceError as exc:
                    watcher.mark_bad(f)
                    print(f"tracetui: note: {f.name} skipped: {exc.problem}", file=sys.stderr, flush=True)
                    continue
                print(_line(row, fmt), flush=True)
            if once and (looks >= ONCE_LOOKS or not watcher.writing()):
                return 0
            time.sleep(min(interval, SETTLE_S) if once else interval)
    except KeyboardInterrupt:
        return 0


def _nothing(folder: Path, once: bool) -> str:
    """What watch says of a folder with no capture in it yet."""
    if once:
        return f"tracetui: note: {folder}: no captures in it (no .json or .json.gz trace); nothing to report"
    return f"tracetui: note: {folder}: no captures yet; waiting for the first (Ctrl-C stops)"


def _line(row, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(row.as_json())
    from .fmt import fmt_time

    return f"{row.file}  {row.steps} steps  typical {fmt_time(row.step_us)}  {row.verdict or '-'}: {row.reason}"
