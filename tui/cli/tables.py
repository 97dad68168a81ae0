"""The headless commands over a trace: summary, steps, ops, kernels, code, memory, roofline, explain, critical,
diff and ranks. Each prints what its report in tui/reports renders; the model is imported when a command runs."""

from __future__ import annotations

import argparse
import os
import sys

from .options import (
    FORMATS,
    Command,
    UsageError,
    capture_opt,
    count,
    format_opt,
    load,
    one_trace,
    percent,
    table_opts,
    tell,
    trace_opts,
)

TEXT_JSON_MD = ("text", "json", "md")
SORTED = ("ops", "kernels", "code", "roofline")  # the commands whose --sort help lists their table's sort keys


def _sorts(table: str, command: str | None) -> str:
    """The sort keys of a table, for its --sort help; only the command run (or every one, for None) reads its
    table's definition: a command starts without importing the others' tables."""
    if command not in (None, table):
        return "see --help"
    from ..tables import code, kernels, ops, roofline

    keys = {"ops": ops.SORTS, "kernels": kernels.SORTS, "code": code.SORTS, "roofline": roofline.SORTS}[table]
    return ", ".join(keys) + (" (or torch's names: cuda_time_total, ...)" if table == "ops" else "")


def add_summary(sub, command: str | None) -> argparse.ArgumentParser:
    return capture_opt(one_trace(sub, "summary", "print the summary and verdict", TEXT_JSON_MD))


def add_steps(sub, command: str | None) -> argparse.ArgumentParser:
    return capture_opt(one_trace(sub, "steps", "print each ProfilerStep: CPU span, GPU busy, elapsed, launches"))


def add_ops(sub, command: str | None) -> argparse.ArgumentParser:
    p = capture_opt(one_trace(sub, "ops", "print the key_averages() table"))
    table_opts(p, _sorts("ops", command))
    p.add_argument("--group-by-shape", action="store_true", help="one row per (name, input shapes)")
    p.add_argument("--hide-python", action="store_true", help="leave out the Python-frame rows (with_stack traces)")
    return p


def add_kernels(sub, command: str | None) -> argparse.ArgumentParser:
    p = capture_opt(one_trace(sub, "kernels", "print per-kernel GPU statistics"))
    table_opts(p, _sorts("kernels", command))
    return p


def add_code(sub, command: str | None) -> argparse.ArgumentParser:
    text = "print time per function at its def line (Python frames), with the GPU time launched from it"
    p = capture_opt(one_trace(sub, "code", text))
    table_opts(p, _sorts("code", command))
    p.add_argument("--all-frames", action="store_true", help="do not fold library frames into your code's")
    return p


def add_memory(sub, command: str | None) -> argparse.ArgumentParser:
    return one_trace(sub, "memory", "print peak memory per device, the ops that allocate most, what is never freed")


def add_roofline(sub, command: str | None) -> argparse.ArgumentParser:
    text = "print FLOPs, bytes and achieved TFLOP/s and GB/s per op against the GPU's roofs"
    p = capture_opt(one_trace(sub, "roofline", text))
    table_opts(p, _sorts("roofline", command))
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
    return p


def add_ranks(sub, command: str | None) -> argparse.ArgumentParser:
    p = sub.add_parser("ranks", help="one row per rank of a folder of per-rank traces: stragglers, collectives")
    p.add_argument("trace", metavar="DIR", help="a folder of per-rank traces (one file per rank)")
    format_opt(p, FORMATS)
    p.add_argument(
        "--engine", choices=("local", "dask"), default="local", help="a local process pool, or a Dask cluster"
    )
    p.add_argument("--scheduler", default="", metavar="ADDR", help="the Dask scheduler (with --engine dask)")
    p.add_argument("--workers", type=int, default=0, metavar="N", help="local processes (0: one per core)")
    trace_opts(p)
    return p


def add_diff(sub, command: str | None) -> argparse.ArgumentParser:
    p = sub.add_parser("diff", help="compare two traces (ops, kernels, steps, summaries)")
    p.add_argument("trace_a", metavar="A", help="the trace to compare against (or a folder of captures)")
    p.add_argument("trace_b", metavar="B", nargs="?", help="the trace compared (none: A's newest two captures)")
    format_opt(p, TEXT_JSON_MD)
    p.add_argument("--limit", type=count, default=20, metavar="N", help="op and kernel rows to print (0: all)")
    p.add_argument(
        "--fail-if-slower",
        type=percent,
        metavar="PCT",
        help="exit 3 if B's typical step is more than PCT%% slower than A's (PCT >= 0)",
    )
    trace_opts(p)
    return p


def add_explain(sub, command: str | None) -> argparse.ArgumentParser:
    text = "say what the patterns in a trace mean (cold start, overhead, kernel names...)"
    return one_trace(sub, "explain", text, TEXT_JSON_MD)


CRITICAL_EPILOG = """prints: what bounds the window (the classes of its critical path as bars), the path grouped by name, kind
and class (time, share, calls; bookkeeping before the first op and after the last in one row), a line of advice
per class that matters; with --what-if, the saving and the new breakdown
defaults: the slowest ProfilerStep (the whole trace without steps), --format text
what-if specs (F: times faster, 0: gone; repeat --what-if to combine):
  kernel:REGEX=F  op:REGEX=F (self time)  launch=0 (as with CUDA graphs)  sync:REGEX=0  cpu=F
example: tracetui critical trace.json --step 5 --what-if 'kernel:gemm=2'"""


def add_critical(sub, command: str | None) -> argparse.ArgumentParser:
    text = "print what bounds a step (its critical path) and what a change would save"
    p = one_trace(sub, "critical", text, TEXT_JSON_MD)
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
    return p


def cmd_summary(args: argparse.Namespace) -> int:
    from ..reports import render_summary

    print(render_summary(load(args.trace, args.no_cache, args.graph_capture), args.format))
    return 0


def cmd_steps(args: argparse.Namespace) -> int:
    from ..reports import render_steps

    print(render_steps(load(args.trace, args.no_cache, args.graph_capture), args.format))
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from ..reports import render_explain

    print(render_explain(load(args.trace, args.no_cache), args.format))
    return 0


def cmd_ops(args: argparse.Namespace) -> int:
    from ..reports import render_ops
    from ..tables import ops

    ops.check_sort(args.sort)  # before loading: a typo costs nothing
    a = load(args.trace, args.no_cache, args.graph_capture)
    print(render_ops(a, args.format, args.sort, args.limit, args.group_by_shape, args.hide_python))
    return 0


def cmd_code(args: argparse.Namespace) -> int:
    from ..reports import render_code
    from ..tables import code

    code.resolve_sort(args.sort)
    a = load(args.trace, args.no_cache, args.graph_capture)
    table = a.code_all if args.all_frames else a.code
    if not table.frames:
        raise UsageError(f"{args.trace}: {code.NO_FRAMES}")
    print(render_code(table, args.format, args.sort, args.limit))
    return 0


def cmd_kernels(args: argparse.Namespace) -> int:
    from ..reports import render_kernels
    from ..tables import kernels

    kernels.resolve_sort(args.sort)
    print(render_kernels(load(args.trace, args.no_cache, args.graph_capture), args.format, args.sort, args.limit))
    return 0


def cmd_roofline(args: argparse.Namespace) -> int:
    from ..model.analyses.roofline.peaks import PeaksError, read_peaks
    from ..model.analyses.roofline.points import with_device
    from ..reports import render_roofline
    from ..tables import roofline
    from .gpu import match_gpu

    roofline.resolve_sort(args.sort)
    try:
        device, note = (read_peaks(args.peaks), "") if args.peaks else match_gpu(args.gpu) if args.gpu else (None, "")
    except PeaksError as exc:
        raise UsageError(str(exc)) from None
    if note:
        tell(f"tracetui: note: {note}")
    table = load(args.trace, args.no_cache, args.graph_capture).roofline
    if not table.has_shapes:
        raise UsageError(f"{args.trace}: {roofline.HOW_TO_SHAPES}")
    table = with_device(table, device) if device else table
    print(render_roofline(table, args.format, args.sort, args.limit))
    return 0


def cmd_memory(args: argparse.Namespace) -> int:
    from ..model.errors import TraceError
    from ..reports import render_memory
    from ..tables.memory import NO_MEMORY

    devices = load(args.trace, args.no_cache).memory
    if not devices:
        raise TraceError(args.trace, NO_MEMORY)
    print(render_memory(devices, args.format))
    return 0


def cmd_ranks(args: argparse.Namespace) -> int:
    from ..model.errors import TraceError
    from ..model.jobs import run_job
    from ..reports import render_ranks

    if not os.path.exists(args.trace):
        raise TraceError(args.trace, "no such file or folder")
    if args.scheduler and args.engine != "dask":
        raise UsageError("--scheduler goes with --engine dask")
    report = run_job(args.trace, not args.no_cache, args.engine, args.scheduler, args.workers)
    for warning in report.job.warnings:
        tell(f"tracetui: warning: {args.trace}: {warning}")
    print(render_ranks(report, args.format))
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from ..model.analyses.diff import diff
    from ..reports import render_diff

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


def cmd_critical(args: argparse.Namespace) -> int:
    from ..model.analyses.critical import WhatIfError, WindowError, parse_spec
    from ..reports import render_critical

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


COMMANDS = {
    "summary": Command(add_summary, cmd_summary),
    "steps": Command(add_steps, cmd_steps),
    "ops": Command(add_ops, cmd_ops),
    "kernels": Command(add_kernels, cmd_kernels),
    "code": Command(add_code, cmd_code),
    "memory": Command(add_memory, cmd_memory),
    "roofline": Command(add_roofline, cmd_roofline),
    "ranks": Command(add_ranks, cmd_ranks),
    "diff": Command(add_diff, cmd_diff),
    "explain": Command(add_explain, cmd_explain),
    "critical": Command(add_critical, cmd_critical),
}
