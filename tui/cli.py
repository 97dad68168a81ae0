"""The tracetui command line: parse, dispatch to one small function per command, exit codes."""

from __future__ import annotations

import argparse
import gc
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from profiler_runner.errors import ProfileError, UserCodeError

from .cli_captures import CaptureUsage, cmd_watch
from .cli_captures import run as run_command
from .cli_common import TRACE_HELP, format_opt, load, trace_opts
from .cli_help import Help, count, percent
from .cli_mcp import add_parser as add_mcp_parser
from .cli_mcp import cmd_mcp
from .cli_sql import add_parser as add_sql_parser
from .cli_sql import cmd_sql
from .model.errors import QueryError, TraceError
from .tables.base import UnknownSort

FORMATS = ("text", "csv", "json", "md")


class UsageError(Exception):
    """Bad usage that argparse could not catch; exit 2 with one line."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit 2 (the usage is in --help)."""

    def error(self, message: str):  # type: ignore[override]
        where = f"tracetui {self.prog.split(' ', 1)[-1]} --help" if " " in self.prog else "tracetui --help"
        self.exit(2, f"tracetui: error: {message} (see {where})\n")


def _one_trace(sub, name: str, text: str, formats: tuple[str, ...] = FORMATS) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=text)
    p.add_argument("trace", metavar="TRACE", help=TRACE_HELP)
    format_opt(p, formats)
    trace_opts(p)
    return p


def _capture_opt(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument(
        "--graph-capture",
        metavar="PATH",
        help="a graph capture trace (file or folder) to credit replayed graph kernels to the code that captured them "
        "(default: capture_traces/ beside the trace, or the capture recorded in it)",
    )
    return p


def _screenshot_opt(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--screenshot-dir",
        metavar="DIR",
        help="where the palette's Screenshot saves its SVG (default: the working directory)",
    )


def _table_opts(p: argparse.ArgumentParser, sorts: str) -> None:
    p.add_argument("--sort", metavar="KEY", help=f"the column to sort by, largest first: {sorts}")
    p.add_argument("--limit", type=count, default=0, metavar="N", help="rows to print (0: all)")


class _Version(argparse.Action):
    """--version, reading the package's metadata only when asked (importlib.metadata costs every start 20 ms)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None) -> None:  # noqa: A002
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from .cli_help import version

        print(f"tracetui {version()}")
        parser.exit()


TABLES = ("ops", "kernels", "code", "roofline")  # the commands whose --sort help lists their table's sort keys


def _sorts(table: str, command: str | None) -> str:
    """The sort keys of a table, for its --sort help; only the command run (or every one, for None) reads its
    table's definition: a command starts without importing the others' tables."""
    if command not in (None, table):
        return "see --help"
    from .tables import code, kernels, ops, roofline

    keys = {"ops": ops.SORTS, "kernels": kernels.SORTS, "code": code.SORTS, "roofline": roofline.SORTS}[table]
    return ", ".join(keys) + (" (or torch's names: cuda_time_total, ...)" if table == "ops" else "")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with command, only that command's sort help reads its table (a faster start)."""
    parser: argparse.ArgumentParser = OneLineParser(
        prog="tracetui", description="A terminal viewer for PyTorch profiler traces.", formatter_class=Help
    )
    parser.add_argument("--version", action=_Version, help="show program's version number and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("open", help="open a trace (.json, .json.gz or a folder of per-rank traces) in the viewer")
    p.add_argument("traces", nargs="+", metavar="TRACE", help=TRACE_HELP + "; two with --compare")
    p.add_argument("--compare", action="store_true", help="compare two traces side by side")
    _screenshot_opt(p)
    trace_opts(p)
    _capture_opt(p)
    _capture_opt(_one_trace(sub, "summary", "print the summary and verdict", ("text", "json", "md")))
    _capture_opt(_one_trace(sub, "steps", "print each ProfilerStep: CPU span, GPU busy, elapsed, launches"))
    p = _capture_opt(_one_trace(sub, "ops", "print the key_averages() table"))
    _table_opts(p, _sorts("ops", command))
    p.add_argument("--group-by-shape", action="store_true", help="one row per (name, input shapes)")
    p.add_argument("--hide-python", action="store_true", help="leave out the Python-frame rows (with_stack traces)")
    _table_opts(_capture_opt(_one_trace(sub, "kernels", "print per-kernel GPU statistics")), _sorts("kernels", command))
    p = _capture_opt(
        _one_trace(
            sub, "code", "print time per function at its def line (Python frames), with the GPU time launched from it"
        )
    )
    _table_opts(p, _sorts("code", command))
    p.add_argument("--all-frames", action="store_true", help="do not fold library frames into your code's")
    _one_trace(sub, "memory", "print peak memory per device, the ops that allocate most, what is never freed")
    p = _capture_opt(
        _one_trace(sub, "roofline", "print FLOPs, bytes and achieved TFLOP/s and GB/s per op against the GPU's roofs")
    )
    _table_opts(p, _sorts("roofline", command))
    p.add_argument(
        "--gpu",
        metavar="NAME",
        help="the GPU whose roofs to use, any part of its name: a100, 'h100 sxm' (default: the trace's own GPU)",
    )
    p.add_argument(
        "--peaks",
        metavar="FILE",
        help="measured roofs: JSON/TOML with peak_gbps, peak_tflops (or TraceLens's arch JSON)",
    )
    p = sub.add_parser("ranks", help="one row per rank of a folder of per-rank traces: stragglers, collectives")
    p.add_argument("trace", metavar="DIR", help="a folder of per-rank traces (one file per rank)")
    format_opt(p, FORMATS)
    p.add_argument(
        "--engine", choices=("local", "dask"), default="local", help="a local process pool, or a Dask cluster"
    )
    p.add_argument("--scheduler", default="", metavar="ADDR", help="the Dask scheduler (with --engine dask)")
    p.add_argument("--workers", type=int, default=0, metavar="N", help="local processes (0: one per core)")
    trace_opts(p)
    p = sub.add_parser("diff", help="compare two traces (ops, kernels, steps, summaries)")
    p.add_argument("trace_a", metavar="A", help="the trace to compare against (or a folder of captures)")
    p.add_argument("trace_b", metavar="B", nargs="?", help="the trace compared (none: A's newest two captures)")
    format_opt(p, ("text", "json", "md"))
    p.add_argument("--limit", type=count, default=20, metavar="N", help="op and kernel rows to print (0: all)")
    p.add_argument(
        "--fail-if-slower",
        type=percent,
        metavar="PCT",
        help="exit 3 if B's typical step is more than PCT%% slower than A's (PCT >= 0)",
    )
    trace_opts(p)
    _one_trace(
        sub,
        "explain",
        "say what the patterns in a trace mean (cold start, overhead, kernel names...)",
        ("text", "json", "md"),
    )
    _critical_parser(sub)
    from profiler_runner.cli_args import add_profile_parser

    add_profile_parser(sub)
    p = sub.add_parser("workloads", help="list the built-in workloads")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    from .cli_captures import add_watch_parser
    from .cli_help import add_epilogs

    add_watch_parser(sub)
    add_sql_parser(sub)
    add_mcp_parser(sub)
    add_epilogs(sub)
    return parser


CRITICAL_EPILOG = """prints: what bounds the window (the classes of its critical path as bars), the ops and kernels on the path
with their share, a line of advice per class that matters; with --what-if, the saving and the new breakdown
defaults: the slowest ProfilerStep (the whole trace without steps), --format text
what-if specs (F: times faster, 0: gone; repeat --what-if to combine):
  kernel:REGEX=F  op:REGEX=F (self time)  launch=0 (as with CUDA graphs)  sync:REGEX=0  cpu=F
example: tracetui critical trace.json --step 5 --what-if 'kernel:gemm=2'"""


def _critical_parser(sub) -> None:
    p = _one_trace(
        sub,
        "critical",
        "print what bounds a step (its critical path) and what a change would save",
        ("text", "json", "md"),
    )
    p.epilog, p.formatter_class = CRITICAL_EPILOG, argparse.RawDescriptionHelpFormatter
    window = p.add_mutually_exclusive_group()
    window.add_argument(
        "--step", type=int, metavar="N", help="ProfilerStep#N (default: the slowest step, else the trace)"
    )
    window.add_argument("--annotation", metavar="NAME", help="a span whose name holds NAME (the first; see --instance)")
    p.add_argument("--instance", type=count, default=0, metavar="K", help="with --annotation: the K-th span, from 0")
    p.add_argument(
        "--what-if",
        action="append",
        default=[],
        metavar="SPEC",
        help="kernel:REGEX=F, op:REGEX=F, launch=0, sync:REGEX=0 or cpu=F (F times faster); repeat to combine",
    )


def cmd_summary(args: argparse.Namespace) -> int:
    from .reports import render_summary

    print(render_summary(load(args.trace, args.no_cache, args.graph_capture), args.format))
    return 0


def cmd_steps(args: argparse.Namespace) -> int:
    from .reports import render_steps

    print(render_steps(load(args.trace, args.no_cache, args.graph_capture), args.format))
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from .reports import render_explain

    print(render_explain(load(args.trace, args.no_cache), args.format))
    return 0


def cmd_ops(args: argparse.Namespace) -> int:
    from .reports import render_ops
    from .tables import ops

    ops.check_sort(args.sort)  # before loading: a typo costs nothing
    a = load(args.trace, args.no_cache, args.graph_capture)
    print(render_ops(a, args.format, args.sort, args.limit, args.group_by_shape, args.hide_python))
    return 0


def cmd_code(args: argparse.Namespace) -> int:
    from .reports import render_code
    from .tables import code

    code.resolve_sort(args.sort)
    a = load(args.trace, args.no_cache, args.graph_capture)
    table = a.code_all if args.all_frames else a.code
    if not table.frames:
        raise UsageError(f"{args.trace}: {code.NO_FRAMES}")
    print(render_code(table, args.format, args.sort, args.limit))
    return 0


def cmd_kernels(args: argparse.Namespace) -> int:
    from .reports import render_kernels
    from .tables import kernels

    kernels.resolve_sort(args.sort)
    print(render_kernels(load(args.trace, args.no_cache, args.graph_capture), args.format, args.sort, args.limit))
    return 0


def cmd_roofline(args: argparse.Namespace) -> int:
    from .cli_gpu import match_gpu
    from .model.analyses.roofline.peaks import PeaksError, read_peaks
    from .model.analyses.roofline.points import with_device
    from .reports import render_roofline
    from .tables import roofline

    roofline.resolve_sort(args.sort)
    try:
        device, note = (read_peaks(args.peaks), "") if args.peaks else match_gpu(args.gpu) if args.gpu else (None, "")
    except PeaksError as exc:
        raise UsageError(str(exc)) from None
    if note:
        print(f"tracetui: note: {note}", file=sys.stderr)
    table = load(args.trace, args.no_cache, args.graph_capture).roofline
    if not table.has_shapes:
        raise UsageError(f"{args.trace}: {roofline.HOW_TO_SHAPES}")
    table = with_device(table, device) if device else table
    print(render_roofline(table, args.format, args.sort, args.limit))
    return 0


def cmd_memory(args: argparse.Namespace) -> int:
    from .reports import render_memory
    from .tables.memory import NO_MEMORY

    devices = load(args.trace, args.no_cache).memory
    if not devices:
        raise TraceError(args.trace, NO_MEMORY)
    print(render_memory(devices, args.format))
    return 0


def cmd_ranks(args: argparse.Namespace) -> int:
    from .model.jobs import run_job
    from .reports import render_ranks

    if not os.path.exists(args.trace):
        raise TraceError(args.trace, "no such file or folder")
    if args.scheduler and args.engine != "dask":
        raise UsageError("--scheduler goes with --engine dask")
    report = run_job(args.trace, not args.no_cache, args.engine, args.scheduler, args.workers)
    for warning in report.job.warnings:
        print(f"tracetui: warning: {args.trace}: {warning}", file=sys.stderr)
    print(render_ranks(report, args.format))
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from .model.analyses.diff import diff
    from .reports import render_diff

    a, b = load(args.trace_a, args.no_cache), load(args.trace_b, args.no_cache)
    d = diff(a, b)
    print(render_diff(d, args.format, args.limit, (args.trace_a, args.trace_b)))
    if args.fail_if_slower is not None and d.slower_pct > args.fail_if_slower:
        print(
            f"tracetui: B's typical step is {d.slower_pct:.1f}% slower than A's (limit {args.fail_if_slower:g}%)",
            file=sys.stderr,
        )
        return 3
    return 0


def cmd_open(args: argparse.Namespace) -> int:
    for path in args.traces:
        if not os.path.exists(path):
            raise TraceError(path, "no such file")
    if args.compare and len(args.traces) != 2:
        raise UsageError("--compare takes exactly two traces")
    if not args.compare and len(args.traces) > 1:
        raise UsageError("open takes one trace or a folder of per-rank traces; add --compare to compare two")
    from .app import TraceApp

    app = TraceApp(
        args.traces,
        use_cache=not args.no_cache,
        compare=args.compare,
        initial_view=getattr(args, "initial_view", None) or "timeline",
        graph_capture=getattr(args, "graph_capture", None),
        screenshot_dir=getattr(args, "screenshot_dir", None),
    )
    app.run()
    if app.load_error:
        raise app.load_error
    return app.return_code or 0


def cmd_critical(args: argparse.Namespace) -> int:
    from .model.analyses.critical import WhatIfError, WindowError, parse_spec
    from .reports import render_critical

    if args.instance and args.annotation is None:
        raise UsageError("--instance goes with --annotation")
    try:
        specs = [parse_spec(s) for s in args.what_if]  # before loading: a typo costs nothing
        a = load(args.trace, args.no_cache)
        text = render_critical(
            a, args.format, step=args.step, annotation=args.annotation, instance=args.instance, what_if=specs
        )
    except (WhatIfError, WindowError) as exc:
        raise UsageError(f"{args.trace}: {exc}" if isinstance(exc, WindowError) else str(exc)) from None
    print(text)
    return 0


def cmd_workloads(args: argparse.Namespace) -> int:
    from profiler_runner.registry import describe

    print(describe())
    return 0


class CaptureReader:
    """What `tracetui profile` asks of tracetui after a capture; the new trace is loaded once."""

    def __init__(self, debug: bool) -> None:
        self.debug = debug
        self._loaded: dict[Path, object] = {}

    def _results(self, trace: Path):
        if trace not in self._loaded:
            self._loaded[trace] = load(str(trace), no_cache=False)
        return self._loaded[trace]

    def table(self, trace: Path, sort: str, rows: int) -> str:
        from .reports import render_ops

        return render_ops(self._results(trace), "text", sort, rows, False)  # type: ignore[arg-type]

    def verdict(self, trace: Path) -> list[str]:
        s = self._results(trace).summary  # type: ignore[attr-defined]
        steps = ", ".join(f"{st.name} {st.dur_us:,.0f} us" for st in s.steps)
        return [f"verdict: {s.verdict} ({s.reason})"] + ([f"steps: {steps}"] if steps else [])

    def open(self, trace: Path) -> int:
        args = argparse.Namespace(
            traces=[str(trace)], compare=False, no_cache=False, debug=self.debug, graph_capture=None
        )
        args.initial_view = "overview"  # the view that shows the verdict just printed
        return cmd_open(args)


def cmd_profile(args: argparse.Namespace) -> int:
    from profiler_runner.runner import run_profile

    return run_profile(args, CaptureReader(args.debug))


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "summary": cmd_summary,
    "steps": cmd_steps,
    "explain": cmd_explain,
    "critical": cmd_critical,
    "ops": cmd_ops,
    "kernels": cmd_kernels,
    "code": cmd_code,
    "ranks": cmd_ranks,
    "memory": cmd_memory,
    "roofline": cmd_roofline,
    "diff": cmd_diff,
    "open": cmd_open,
    "workloads": cmd_workloads,
    "profile": cmd_profile,
    "watch": cmd_watch,
    "sql": cmd_sql,
    "mcp": cmd_mcp,
}


def _command(argv: Sequence[str] | None) -> str | None:
    """The command named on the command line, when it is one (None: build the whole parser)."""
    words = [a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")]
    return words[0] if words and words[0] in COMMANDS else None


HEADLESS = {"summary", "steps", "ops", "kernels", "code", "memory", "roofline", "explain", "critical", "diff"}


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. A headless command over one or two traces runs with the cycle collector off (it makes
    no cycles worth collecting, and the collector walked the imports' objects 20 ms of a 0.3 s cached start)."""
    command = _command(argv)
    was = gc.isenabled()
    if command in HEADLESS:
        gc.disable()
    try:
        return _run(build_parser(command), argv)
    finally:
        if was:
            gc.enable()


def _run(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    args = parser.parse_args(argv)
    try:
        return run_command(COMMANDS[args.command], args)
    except UserCodeError as exc:  # the user's code raised: their frames, exit 2 (1 stays for our own bugs)
        print(exc.report(), file=sys.stderr)
        return 2
    except (TraceError, UsageError, ProfileError, UnknownSort, CaptureUsage, QueryError) as exc:
        print(f"tracetui: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - the last resort of the CLI: one line unless --debug
        if getattr(args, "debug", False):
            traceback.print_exc()
        else:
            print(
                f"tracetui: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
                file=sys.stderr,
            )
        return 1


if __name__ == "__main__":
    sys.exit(main())
