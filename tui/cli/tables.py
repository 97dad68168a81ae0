"""The headless commands over a trace: summary, steps, ops, kernels, code, memory, roofline, explain, critical,
diff and ranks. Each prints what its report in tui/reports renders; the model is imported when a command runs."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable

from .options import (
    FORMATS,
    BadUsage,
    Command,
    capture_opt,
    count,
    format_opt,
    load,
    one_trace,
    percent,
    table_opts,
    tell,
    trace_opts,
    trace_path,
)

TEXT_JSON_MD = ("text", "json", "md")


def _sorts(table: str) -> Callable[[], str]:
    """The sort keys of a table, for its --sort help, read when the help is shown (options.table_opts): the table's
    module imports the model and numpy, which a command's start leaves alone (a report replayed from the cache,
    replay.py, never imports them)."""

    def keys() -> str:
        names = importlib.import_module(f"..tables.{table}", __package__).SORTS  # that table's module alone
        return ", ".join(names) + (" (or torch's names: cuda_time_total, ...)" if table == "ops" else "")

    return keys


def add_summary(sub, command: str | None) -> argparse.ArgumentParser:
    return capture_opt(one_trace(sub, "summary", "print the summary and verdict", TEXT_JSON_MD))


def add_steps(sub, command: str | None) -> argparse.ArgumentParser:
    return capture_opt(one_trace(sub, "steps", "print each ProfilerStep: CPU span, GPU busy, elapsed, launches"))


def add_ops(sub, command: str | None) -> argparse.ArgumentParser:
    p = capture_opt(one_trace(sub, "ops", "print the key_averages() table"))
    table_opts(p, _sorts("ops"))
    p.add_argument("--group-by-shape", action="store_true", help="one row per (name, input shapes)")
    p.add_argument(
        "--python-frames",
        action="store_true",
        help="Python frames (with_stack) as rows, as torch 2.12 and 2.13 print them (default: torch's table up to 2.11)",
    )
    p.add_argument("--hide-python", action="store_true", help=argparse.SUPPRESS)  # deprecated: the default now
    p.add_argument(
        "--kernels",
        action="store_true",
        help="per op and the sequence of kernels, copies and sets it launched: calls, op-to-launch and launch-to-start "
        "delays (--sort count, op_to_launch, launch_to_start, device or name). HTA's get_aten_op_kernels_and_delay "
        "finds a launch's aten op by time on any thread and keeps kernels only; here the op is the innermost one "
        "above the launch on its own thread (an aten op, else any op) and copies and sets are in the sequence",
    )
    return p


def add_kernels(sub, command: str | None) -> argparse.ArgumentParser:
    p = capture_opt(one_trace(sub, "kernels", "print per-kernel GPU statistics"))
    table_opts(p, _sorts("kernels"))
    p.add_argument(
        "--queues",
        action="store_true",
        help="per stream: its launch queue (time-weighted mean, p50, p95, max, time full; HTA's "
        "get_queue_length_summary describes one sample per launch and start: its mean is Mean/sample) and its "
        "launches' delays, from the call's start (HTA's get_cuda_kernel_launch_stats: from its end, 0 if negative), "
        "with HTA's outliers: calls over 50us, starts over 100us after the call. HTA counts only some launch calls "
        "by name (no cuLaunchKernelEx, no graph launches); here every call linked to device work",
    )
    p.add_argument(
        "--sequences",
        action="store_true",
        help="the recurring sequences of kernels an op, annotation or module launched (HTA's "
        "get_frequent_cuda_kernel_sequences, with no operator name to give): count, total and mean device time, the "
        "stack they come from, and what fusing each would save on the critical path of the typical step",
    )
    p.add_argument(
        "--min-length", type=count, default=None, metavar="N", help="with --sequences: the fewest kernels (default 3)"
    )
    p.add_argument("--top", type=count, default=None, metavar="K", help="with --sequences: rows (default 10, 0: all)")
    return p


def add_code(sub, command: str | None) -> argparse.ArgumentParser:
    text = "print time per function at its def line (Python frames), with the GPU time launched from it"
    p = capture_opt(one_trace(sub, "code", text))
    table_opts(p, _sorts("code"))
    p.add_argument("--all-frames", action="store_true", help="do not fold library frames into your code's")
    return p


def add_memory(sub, command: str | None) -> argparse.ArgumentParser:
    text = "print peak memory per device, the ops that allocate most, what is never freed (or a memory snapshot's)"
    p = one_trace(sub, "memory", text)
    p.add_argument(
        "--snapshot",
        metavar="SNAPSHOT",
        help="a memory snapshot of the same run: the trace's allocations gain its frames (matched by address and time)",
    )
    return p


def add_roofline(sub, command: str | None) -> argparse.ArgumentParser:
    text = "print FLOPs, bytes and achieved FLOP/s and GB/s per op against the GPU's roofs"
    p = capture_opt(one_trace(sub, "roofline", text))
    table_opts(p, _sorts("roofline"))
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
        help="exit 3 if B's typical step is more than PCT%% slower than A's and more than the runs' own "
        "step-to-step spread (PCT >= 0)",
    )
    trace_opts(p)
    return p


def add_explain(sub, command: str | None) -> argparse.ArgumentParser:
    text = "say what the patterns in a trace mean (cold start, overhead, kernel names...)"
    # its findings read the credited trace (per-op rules; the note on replayed kernels left uncredited names
    # this option), so it takes the capture as summary and ops do
    return capture_opt(one_trace(sub, "explain", text, TEXT_JSON_MD))


CRITICAL_EPILOG = """prints: what bounds the window (the classes of its critical path as bars), the path grouped by name, kind
and class (time, share, calls; bookkeeping before the first op and after the last in one row), a line of advice
per class that matters; with --what-if, the saving and the new breakdown
defaults: the typical step (the median warm step, as the summary's verdict reads; the whole trace without
steps), --format text
{what_if}
example: tracetui critical trace.json --step 5 --what-if 'kernel:gemm=2'"""


def _what_if_help(command: str | None) -> tuple[str, str]:
    """The --what-if option's help and the epilog's what-if lines, from the what-if grammar; only `critical` (or
    every command, for None) reads it: the other commands start without importing the critical path."""
    if command not in (None, "critical"):
        return (
            "a what-if SPEC (see tracetui critical --help); repeat to combine",
            "what-if: see tracetui critical --help",
        )
    from ..model.analyses.critical.whatif import GRAMMAR, grammar_help

    forms = ", ".join(" or ".join(f.written) for f in GRAMMAR)
    lines = f"what-if: a SPEC is {grammar_help()}; F: times faster, 0: gone; specs combine when the option is repeated"
    return f"{forms} (F times faster, 0: gone); repeat to combine", lines  # --help wraps it


def add_critical(sub, command: str | None) -> argparse.ArgumentParser:
    text = "print what bounds a step (its critical path) and what a change would save"
    p = one_trace(sub, "critical", text, TEXT_JSON_MD)
    option, lines = _what_if_help(command)
    p.epilog, p.formatter_class = CRITICAL_EPILOG.format(what_if=lines), argparse.RawDescriptionHelpFormatter
    window = p.add_mutually_exclusive_group()
    window.add_argument(
        "--step", type=int, metavar="N", help="ProfilerStep#N (default: the typical step, else the trace)"
    )
    window.add_argument("--annotation", metavar="NAME", help="a span whose name holds NAME (the first; see --instance)")
    p.add_argument("--instance", type=count, default=0, metavar="K", help="with --annotation: the K-th span, from 0")
    p.add_argument(
        "--what-if",
        action="append",
        default=[],
        metavar="SPEC",
        help=option,
    )
    p.add_argument(
        "--python-frames",
        action="store_true",
        help="Python frames (with_stack) as rows of the path's table (default: a frame's time is its op's, as in "
        "the viewer's path view and the ops table)",
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

    print(render_explain(load(args.trace, args.no_cache, args.graph_capture), args.format))
    return 0


def cmd_ops(args: argparse.Namespace) -> int:
    from ..reports import render_ops
    from ..tables import ops

    if args.kernels:
        return _op_kernels(args)
    ops.check_sort(args.sort)  # before loading: a typo costs nothing
    if args.hide_python:
        print(HIDE_PYTHON_NOTE, file=sys.stderr)
    a = load(args.trace, args.no_cache, args.graph_capture)
    print(render_ops(a, args.format, args.sort, args.limit, args.group_by_shape, args.python_frames))
    return 0


HIDE_PYTHON_NOTE = (
    "tracetui: --hide-python is deprecated: Python frames are no rows by default now (torch's table up to 2.11); "
    "--python-frames lists them"
)


def _op_kernels(args: argparse.Namespace) -> int:
    from ..reports import render_op_kernels
    from ..tables import op_kernels

    if args.group_by_shape or args.python_frames:
        raise BadUsage("--kernels lists kernel sequences per op: it takes no --group-by-shape or --python-frames")
    op_kernels.resolve_sort(args.sort)
    a = load(args.trace, args.no_cache, args.graph_capture)
    print(render_op_kernels(a, args.format, args.sort, args.limit))
    return 0


def cmd_code(args: argparse.Namespace) -> int:
    from ..reports import render_code
    from ..tables import code

    code.resolve_sort(args.sort)
    a = load(args.trace, args.no_cache, args.graph_capture)
    table = a.code_all if args.all_frames else a.code
    if not table.frames:
        raise BadUsage(f"{args.trace}: {code.NO_FRAMES}")
    print(render_code(table, args.format, args.sort, args.limit))
    return 0


def cmd_kernels(args: argparse.Namespace) -> int:
    from ..reports import render_kernels
    from ..tables import kernels

    if args.queues and args.sequences:
        raise BadUsage("--queues and --sequences are two reports: give one")
    if args.queues:
        return _queues(args)
    if args.sequences:
        return _sequences(args)
    if args.min_length is not None or args.top is not None:
        raise BadUsage("--min-length and --top go with --sequences")
    kernels.resolve_sort(args.sort)
    print(render_kernels(load(args.trace, args.no_cache, args.graph_capture), args.format, args.sort, args.limit))
    return 0


def _queues(args: argparse.Namespace) -> int:
    from ..reports import render_queues

    if args.sort or args.limit:
        raise BadUsage("--queues prints one row per stream: it takes no --sort or --limit")
    print(render_queues(load(args.trace, args.no_cache, args.graph_capture), args.format))
    return 0


def _sequences(args: argparse.Namespace) -> int:
    from ..reports import render_sequences
    from ..tables import sequences

    if args.sort or args.limit:
        raise BadUsage("--sequences ranks by device time: it takes --top K, not --sort or --limit")
    least = sequences.DEFAULT_MIN_LENGTH if args.min_length is None else args.min_length
    if least < 2:
        raise BadUsage("--min-length: a sequence has 2 kernels at least")
    top = sequences.DEFAULT_TOP if args.top is None else args.top
    print(render_sequences(load(args.trace, args.no_cache, args.graph_capture), args.format, least, top))
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
        raise BadUsage(str(exc)) from None
    if note:
        tell(f"tracetui: note: {note}")
    table = load(args.trace, args.no_cache, args.graph_capture).roofline
    if not table.has_shapes:
        raise BadUsage(f"{args.trace}: {roofline.HOW_TO_SHAPES}")
    table = with_device(table, device) if device else table
    print(render_roofline(table, args.format, args.sort, args.limit))
    return 0


def cmd_memory(args: argparse.Namespace) -> int:
    from ..model.errors import TraceError
    from ..model.snapshot import is_snapshot

    if is_snapshot(args.trace):  # an allocator snapshot (torch.cuda.memory._dump_snapshot), not a trace
        from .snapshot import memory_of_snapshot

        if args.snapshot:
            raise BadUsage("--snapshot joins a snapshot to a trace: give the trace as TRACE")

        return memory_of_snapshot(args)
    from ..reports import render_memory
    from ..tables.memory import NO_MEMORY

    results = load(args.trace, args.no_cache)
    devices = results.memory
    if not devices:
        raise TraceError(args.trace, NO_MEMORY)
    if args.snapshot:  # the trace's allocations with the frames of a snapshot of the same run
        from .snapshot import memory_with_snapshot

        return memory_with_snapshot(args, results, devices)
    print(render_memory(devices, args.format))
    return 0


def cmd_ranks(args: argparse.Namespace) -> int:
    from ..model.jobs import run_job
    from ..reports import render_ranks

    path = trace_path(args.trace)
    if args.scheduler and args.engine != "dask":
        raise BadUsage("--scheduler goes with --engine dask")
    report = run_job(path, not args.no_cache, args.engine, args.scheduler, args.workers)
    for warning in report.job.warnings:
        tell(f"tracetui: warning: {args.trace}: {warning}")
    print(render_ranks(report, args.format))
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from ..model.analyses.diff import diff
    from ..model.snapshot import is_snapshot
    from ..reports import render_diff

    snapshots = [is_snapshot(p) for p in (args.trace_a, args.trace_b)]
    if any(snapshots):  # allocator snapshots: what grew, by frame
        from .snapshot import diff_of_snapshots

        if not all(snapshots):
            one, other = (args.trace_a, args.trace_b) if snapshots[0] else (args.trace_b, args.trace_a)
            raise BadUsage(f"{one} is a memory snapshot and {other} is not: diff compares two of a kind")
        return diff_of_snapshots(args)

    a, b = load(args.trace_a, args.no_cache), load(args.trace_b, args.no_cache)
    d = diff(a, b)
    print(render_diff(d, args.format, args.limit, (args.trace_a, args.trace_b)))
    if args.fail_if_slower is None:
        return 0
    passed = d.gate(args.fail_if_slower)
    print(f"tracetui: {gate_words(d, args.fail_if_slower, passed)}", file=sys.stderr)
    return 0 if passed else 3


def gate_words(d, limit: float, passed: bool) -> str:
    """What --fail-if-slower decided and by which spread: one line on stderr, pass or fail."""
    from ..tables.summary import pct

    change = f"B's typical step is {abs(d.slower_pct):.1f}% {'slower' if d.slower_pct >= 0 else 'faster'} than A's"
    spread = (
        f"the runs' own spread of ±{pct(d.spread)} (the larger of A's and B's step-to-step spreads)"
        if d.spread is not None
        else "no step-to-step spread (fewer than 2 steps in each)"
    )
    verdict = "the gate passes" if passed else "the gate fails"
    return f"{change}; limit {limit:g}%, {spread}: {verdict}"


def cmd_critical(args: argparse.Namespace) -> int:
    from ..model.analyses.critical import WhatIfError, WindowError, parse_spec
    from ..reports import render_critical

    if args.instance and args.annotation is None:
        raise BadUsage("--instance goes with --annotation")
    try:
        specs = [parse_spec(s) for s in args.what_if]  # before loading: a typo costs nothing
        a = load(args.trace, args.no_cache)
        text = render_critical(
            a,
            args.format,
            step=args.step,
            annotation=args.annotation,
            instance=args.instance,
            what_if=specs,
            python_frames=args.python_frames,
        )
    except (WhatIfError, WindowError) as exc:
        raise BadUsage(f"{args.trace}: {exc}" if isinstance(exc, WindowError) else str(exc)) from None
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
