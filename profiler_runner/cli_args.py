"""The `tracetui profile` argument parser (no torch import here)."""

from __future__ import annotations

import argparse

from .registry import WORKLOADS

COMPILE_MODES = ("default", "reduce-overhead", "max-autotune")
EPILOG = """\
prints: where the trace and its key_averages table were written, the verdict and the step times; then
opens the viewer on the overview (--no-open: not). The file name carries the capture's flags, e.g.
traces/matmul_add/64_bf16_cold_eager_stack_mem.json; a name already taken gets the next free suffix
(-2, -3, ...), --force overwrites it.
defaults: 1 wait + 1 warm-up + 3 active steps, shapes recorded, no stack, no memory, bf16, cuda when available.
example: tracetui profile mycode/train.py:step --with-stack"""


def positive_int(text: str) -> int:
    """argparse type: a positive integer (0, negatives and words are usage errors)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def add_profile_parser(sub) -> argparse.ArgumentParser:
    names = ", ".join(WORKLOADS)
    p = sub.add_parser(
        "profile",
        help="capture a trace of a built-in workload or your own function, then open it",
        description=f"Workloads: {names}. Or FILE.py:function / package.module:function to profile your own code "
        "(a function without arguments, called once per step).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("workload", metavar="WORKLOAD", help="a built-in workload (tracetui workloads), or FILE.py:function")
    p.add_argument("--device", choices=("cuda", "cpu"), help="default: cuda when available, else cpu")
    p.add_argument("--dtype", choices=("bf16", "fp32"), default="bf16", help="the tensors' dtype (default bf16)")
    p.add_argument("--compile", action="store_true", help="wrap the workload in torch.compile")
    p.add_argument(
        "--compile-mode",
        choices=COMPILE_MODES,
        help="torch.compile's mode (implies --compile; a mode other than default also implies --warmup, "
        "so compiling, autotuning and graph capture happen before the profiled window)",
    )
    p.add_argument("--warmup", action="store_true", help="run three calls before profiling (a warm start)")
    p.add_argument(
        "--steps", type=positive_int, default=3, metavar="N", help="active profiler steps (after 1 wait + 1 warmup)"
    )
    p.add_argument(
        "--record-shapes",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="record the ops' input shapes (default: on; the roofline needs them)",
    )
    p.add_argument("--with-stack", action="store_true", help="record Python stacks (tracetui's own frames dropped)")
    p.add_argument("--profile-memory", action="store_true", help="record allocations (memory lanes, tracetui memory)")
    p.add_argument(
        "-o", "--output", metavar="PATH", help="trace path (.json or .json.gz); default traces/<workload>/<tag>.json"
    )
    p.add_argument("--force", action="store_true", help="overwrite the trace at that name (default: the next free one)")
    p.add_argument("--no-open", action="store_true", help="do not open the viewer after the capture")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    add_job_options(p)
    g = p.add_argument_group("workload options (defaults: the series' sizes on CUDA, small ones on the CPU)")
    size = {"type": positive_int, "metavar": "N"}
    g.add_argument("--size", **size, help="matmul_add: the side of the square tensors; allreduce: the elements reduced")
    g.add_argument("--batch", **size, help="linear/mlp/attention/ddp: batch size")
    g.add_argument("--seq", **size, help="mlp/attention: sequence length")
    g.add_argument("--dim", **size, help="mlp/ddp: model dim; allreduce: the side of the compute step's matmul")
    g.add_argument("--hidden", **size, help="mlp/ddp: hidden dim")
    g.add_argument("--in-features", **size, help="linear: input features")
    g.add_argument("--out-features", **size, help="linear: output features")
    g.add_argument("--heads", **size, help="attention: heads")
    g.add_argument("--head-dim", **size, help="attention: head dim")
    g.add_argument("--variant", choices=("naive", "inplace", "sdpa"), help="attention variant (default sdpa)")
    g.add_argument(
        "--backend", choices=("auto", "math", "flash", "efficient", "cudnn"), help="sdpa backend (default auto)"
    )
    g.add_argument("--slow-rank", type=int, metavar="R", help="allreduce: the rank that sleeps before its collective")
    g.add_argument("--delay-ms", type=float, metavar="D", help="allreduce: how long the slow rank sleeps (ms)")
    return p


def add_job_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("a job of N ranks on this machine (rendezvous on 127.0.0.1)")
    g.add_argument(
        "--nproc",
        type=positive_int,
        metavar="N",
        help="run N ranks of one job (gloo on the CPU, NCCL on CUDA, one GPU per rank), each profiled with the same "
        "schedule; writes traces/<workload>/<tag>-ranks/rank-K.json. FILE.py:fn gets the process group made and "
        "RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set as torchrun sets them",
    )
    g.add_argument(
        "--oversubscribe",
        action="store_true",
        help="run more CPU ranks than the machine has cores (they then share cores, and their steps time that)",
    )
