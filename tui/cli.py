"""The tracetui command line: open, summary, ops, kernels, explain, diff, profile, workloads."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence

from profiler_runner.errors import ProfileError

from .model.errors import TraceError

FORMATS = ("text", "csv", "json", "md")


class UsageError(Exception):
    """Bad usage that argparse could not catch; exit 2 with one line."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit 2 (the usage is in --help)."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(
            2,
            f"tracetui: error: {message} (see tracetui {self.prog.split(' ', 1)[-1]} --help)\n"
            if " " in self.prog
            else f"tracetui: error: {message} (see tracetui --help)\n",
        )


def _trace_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-cache", action="store_true", help="do not read or write the on-disk cache")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="tracetui", description="A terminal viewer for PyTorch profiler traces.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("open", help="open a trace (.json, .json.gz or a folder of per-rank traces) in the viewer")
    p.add_argument("traces", nargs="+", metavar="TRACE")
    p.add_argument("--compare", action="store_true", help="compare two traces")
    _trace_opts(p)
    p = sub.add_parser("summary", help="print the summary and verdict")
    p.add_argument("trace", metavar="TRACE")
    p.add_argument("--format", choices=("text", "json", "md"), default="text")
    _trace_opts(p)
    for name, text in (("ops", "print the key_averages() table"), ("kernels", "print per-kernel GPU statistics")):
        p = sub.add_parser(name, help=text)
        p.add_argument("trace", metavar="TRACE")
        p.add_argument("--sort", help="column to sort by (descending)")
        p.add_argument("--limit", type=int, default=0, metavar="N", help="rows to print (0: all)")
        p.add_argument("--format", choices=FORMATS, default="text")
        if name == "ops":
            p.add_argument("--group-by-shape", action="store_true", help="one row per (name, input shapes)")
        _trace_opts(p)
    p = sub.add_parser("diff", help="compare two traces (ops, kernels, steps, summaries)")
    p.add_argument("trace_a", metavar="A")
    p.add_argument("trace_b", metavar="B")
    p.add_argument("--format", choices=("text", "json", "md"), default="text")
    p.add_argument("--limit", type=int, default=20, metavar="N", help="op and kernel rows to print (0: all)")
    p.add_argument(
        "--fail-if-slower", type=float, metavar="PCT", help="exit 3 if B's typical step is PCT%% slower than A's"
    )
    _trace_opts(p)
    p = sub.add_parser("explain", help="say what the patterns in a trace mean (cold start, overhead, kernel names...)")
    p.add_argument("trace", metavar="TRACE")
    p.add_argument("--format", choices=("text", "json", "md"), default="text")
    _trace_opts(p)
    from profiler_runner.cli_args import add_profile_parser

    add_profile_parser(sub)
    p = sub.add_parser("workloads", help="list the built-in workloads")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    return parser


def load(path: str, no_cache: bool):
    from .model.analyses.results import Results
    from .model.load import load_trace

    trace = load_trace(path, use_cache=not no_cache)
    warning = trace.report.warning()
    if warning:
        print(f"tracetui: warning: {path}: {warning}", file=sys.stderr)
    return Results(trace)


def run(args: argparse.Namespace) -> int:
    from . import report

    if args.command in ("summary", "ops", "kernels", "explain"):
        a = load(args.trace, args.no_cache)
        try:
            if args.command == "summary":
                out = report.render_summary(a, args.format)
            elif args.command == "explain":
                out = report.render_explain(a, args.format)
            elif args.command == "ops":
                out = report.render_ops(a, args.format, args.sort, args.limit, args.group_by_shape)
            else:
                out = report.render_kernels(a, args.format, args.sort, args.limit)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        print(out)
        return 0
    if args.command == "diff":
        return run_diff(args)
    if args.command == "open":
        return open_viewer(args)
    if args.command == "workloads":
        from profiler_runner.registry import describe

        print(describe())
        return 0
    if args.command == "profile":
        from profiler_runner.runner import run_profile

        return run_profile(
            args,
            open_viewer=lambda path: open_viewer(
                argparse.Namespace(traces=[path], compare=False, no_cache=False, debug=args.debug)
            ),
        )
    raise UsageError(f"unknown command {args.command}")


def run_diff(args: argparse.Namespace) -> int:
    from .diff_report import render_diff
    from .model.analyses.diff import diff

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


def open_viewer(args: argparse.Namespace) -> int:
    for path in args.traces:
        if not os.path.exists(path):
            raise TraceError(path, "no such file")
    if args.compare and len(args.traces) != 2:
        raise UsageError("--compare takes exactly two traces")
    if not args.compare and len(args.traces) > 1:
        raise UsageError("open takes one trace or a folder of per-rank traces; add --compare to compare two")
    from .app import TraceApp

    app = TraceApp(args.traces, use_cache=not args.no_cache, compare=args.compare)
    app.run()
    if app.load_error:
        raise app.load_error
    return app.return_code or 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return run(args)
    except TraceError as exc:
        print(f"tracetui: error: {exc}", file=sys.stderr)
        return 2
    except (UsageError, ProfileError) as exc:
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
