"""`tracetui watch DIR`: follow a folder of captures as training writes them, in the viewer's strip or as lines."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from ..model.errors import TraceError
from .options import BadUsage, Command, screenshot_opt, tell, trace_opts

ONCE_LOOKS = 4  # --once: files still being written are looked at again this many times, then left
WATCH_EPILOG = """\
prints: with --format json, one line per capture (capture, steps, step_us, verdict, reason, written), every
capture already there first, then each new one once its file is complete; --format text, the same as a table
row (the typical step: the median elapsed step, a cold first step left out). Without --format: a strip of the
captures with their step times and verdicts (d: diff the shown capture against the one before it; o: open it in
the viewer, q or Esc there comes back to the strip). A file still being written (changed in the last second, or
not yet a whole JSON document) is skipped with a note and looked at again; one unchanged for 30 s that still is
not a whole trace, or that cannot be read, is called corrupt once and skipped until it changes. An empty folder
is waited on.
defaults: poll every 2 s, until Ctrl-C (--once: the captures already there, then exit; none: says so).
example: tracetui watch runs/profile --format json >> profile.log"""


def add_watch(sub, command: str | None) -> argparse.ArgumentParser:
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
    screenshot_opt(p)
    trace_opts(p)
    return p


def cmd_watch(args: argparse.Namespace) -> int:
    folder = Path(args.trace)
    if not folder.is_dir():
        raise TraceError(folder, "no such folder" if not folder.exists() else "not a folder (watch takes one)")
    if args.interval <= 0:
        raise BadUsage(f"--interval must be positive, got {args.interval:g}")
    if args.format is None and (args.once or not sys.stdout.isatty()):
        args.format = "text"  # --once, or piped: lines, never a full-screen viewer into a pipe
    if args.format is None:
        from ..app import TraceApp  # the strip, and `o` opens a capture in the viewer over it

        app = TraceApp(
            [], use_cache=not args.no_cache, watch=folder, interval=args.interval, screenshot_dir=args.screenshot_dir
        )
        app.run()
        return app.return_code or 0
    return watch_headless(folder, args.format, args.interval, args.once, not args.no_cache)


def watch_headless(folder: Path, fmt: str, interval: float, once: bool, use_cache: bool) -> int:
    """One line per complete capture, as it comes; notes on skipped files on stderr."""
    from ..model.watch import SETTLE_S, Watcher, summarize

    watcher = Watcher(folder)
    looks = 0
    before = None  # the capture printed last: each line says its change against it
    try:
        while True:
            ready, notes = watcher.poll()
            looks += 1
            if looks == 1 and not ready and not notes and not watcher.writing():
                tell(_nothing(folder, once))
            for note in notes:
                tell(f"tracetui: note: {note}")
            for f in ready:
                try:
                    row = summarize(f, use_cache)
                except TraceError as exc:
                    watcher.mark_bad(f)
                    tell(f"tracetui: note: {f.name} skipped: {exc.problem}")
                    continue
                print(_line(row, fmt, before), flush=True)
                before = row
            if once and (looks >= ONCE_LOOKS or not watcher.writing()):
                return 0
            time.sleep(min(interval, SETTLE_S) if once else interval)
    except KeyboardInterrupt:
        return 0


def _nothing(folder: Path, once: bool) -> str:
    """What watch says of a folder with no capture in it yet."""
    if once:
        from ..model.load.folder import traces_below

        where = traces_below(folder)
        where = f"; {where}" if where else ""
        return f"tracetui: note: {folder}: no captures in it (no .json or .json.gz trace{where}); nothing to report"
    return f"tracetui: note: {folder}: no captures yet; waiting for the first (Ctrl-C stops)"


def _line(row, fmt: str, before=None) -> str:
    if fmt == "json":
        return json.dumps(row.as_json())
    from ..reports.formats import terminal_width, wrap
    from ..text.fmt import fmt_time, plural

    line = f"{row.file}  {plural(row.steps, 'step')}  typical {fmt_time(row.step_us)}{_vs(before, row)}  "
    line += f"{row.verdict or '-'}: {row.reason}"
    return "\n".join(wrap([line], terminal_width(), "    "))


def _vs(before, row) -> str:
    """' (+53.2% vs the previous)', or within the runs' own spread, said as no change."""
    from ..model.watch import change
    from ..tables.summary import pct

    c = change(before, row) if before is not None else None
    if c is None:
        return ""
    if c.noise:
        return f" (vs the previous {c.pct:+.1f}%: within the runs' own spread of ±{pct(c.spread or 0.0)}: no change)"
    return f" ({c.pct:+.1f}% vs the previous)"


COMMANDS = {"watch": Command(add_watch, cmd_watch)}
