"""`tracetui export`: the trace as Chrome JSON with tracetui's counters and critical path added, for Perfetto."""

from __future__ import annotations

import argparse

from .options import BadUsage, Command, load, tell, trace_opts

KINDS = ("queue", "bandwidth", "critical")  # tui/model/export's KINDS, here so --help imports no model
EPILOG = """says: one line on stderr naming the file written and what was added (so -o /dev/stdout pipes the \
trace alone); the file holds every event of the trace \
as it was (its bytes copied), then each stream's launch-queue length and each device's copy bandwidth per \
direction and its memset bandwidth as counters, and the critical path of a step as a lane of its own (a slice per stretch, its class and \
the event's id in its args)
defaults: --counters queue,bandwidth,critical; the slowest step's critical path (--step N: ProfilerStep#N); a \
name ending in .gz is written gzipped
HTA: generate_trace_with_counters adds the queue length and the copy and memset bandwidth (from Kineto's own \
bandwidth arg)
viewers: Perfetto (ui.perfetto.dev), chrome://tracing and tracetui open read it
example: tracetui export trace.json.gz -o shared.json.gz --counters queue,critical"""


def counters(text: str) -> list[str]:
    """argparse type: a comma-separated list of KINDS."""
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        raise argparse.ArgumentTypeError(f"expected some of {','.join(KINDS)}, got {text!r}")
    return list(dict.fromkeys(kinds))


def add_export(sub, command: str | None) -> argparse.ArgumentParser:
    p = sub.add_parser("export", help="write the trace as Chrome JSON with queue, bandwidth and critical-path lanes")
    p.epilog = EPILOG
    p.add_argument("trace", metavar="TRACE", help="a trace (.json or .json.gz); one rank's file of a folder")
    p.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="the file to write (never the trace itself; -: stdout)"
    )
    p.add_argument(
        "--counters",
        type=counters,
        default=list(KINDS),
        metavar="KINDS",
        help=f"what to add, comma-separated: {','.join(KINDS)} (default: all)",
    )
    p.add_argument("--step", type=int, metavar="N", help="the critical path of ProfilerStep#N (default: the slowest)")
    p.add_argument("--force", action="store_true", help="replace OUT when it is a file already (by default: refused)")
    trace_opts(p)
    return p


def cmd_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..model.analyses.critical import WindowError
    from ..model.export import ExportError, check_target, export
    from ..model.samples import resolve

    output = "/dev/stdout" if args.output == "-" else args.output  # -: standard output, as for most tools
    try:
        check_target(Path(args.trace), Path(output))  # before loading: a wrong -o costs nothing
        if Path(output).is_file() and not args.force:  # a regular file only: /dev/stdout and pipes are written
            raise BadUsage(f"{output}: exists; tracetui export never replaces a file unless --force is given")
        done = export(load(args.trace, args.no_cache), output, args.counters, args.step)
    except ExportError as exc:  # said of the trace by the name the user gave it (demo:NAME, not its sample's path)
        raise BadUsage(str(exc).replace(f"{resolve(args.trace)}:", f"{args.trace}:", 1)) from None
    except WindowError as exc:
        raise BadUsage(f"{args.trace}: {exc}") from None
    added = ", ".join(f"{n:,} {kind}" for kind, n in done.added.items())
    for note in done.notes:
        tell(f"tracetui: note: {note}")
    tell(f"wrote {done.path}: the trace's events as they were, and {added} events added")
    return 0


COMMANDS = {"export": Command(add_export, cmd_export)}
