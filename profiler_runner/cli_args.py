"""The `tracetui profile` argument parser (no torch import here)."""

from __future__ import annotations

import argparse

from .registry import WORKLOADS


def add_profile_parser(sub) -> argparse.ArgumentParser:
    names = ", ".join(WORKLOADS)
    p = sub.add_parser(
        "profile",
        help="capture a trace of a built-in workload or your own function, then open it",
        description=f"Workloads: {names}. Or FILE.py:function / package.module:function to profile your own code.",
    )
    p.add_argument("workload", metavar="WORKLOAD")
    p.add_argument("--device", choices=("cuda", "cpu"), help="default: cuda when available, else cpu")
    p.add_argument("--dtype", choices=("bf16", "fp32"), default="bf16")
    p.add_argument("--compile", action="store_true", help="wrap the workload in torch.compile")
    p.add_argument("--warmup", action="store_true", help="run three calls before profiling (a warm start)")
    p.add_argument("--steps", type=int, default=3, metavar="N", help="active profiler steps (after 1 wait + 1 warmup)")
    p.add_argument("--record-shapes", action="store_true")
    p.add_argument("--with-stack", action="store_true")
    p.add_argument("--profile-memory", action="store_true")
    p.add_argument(
        "-o", "--output", metavar="PATH", help="trace path (.json or .json.gz); default traces/<workload>/<tag>.json"
    )
    p.add_argument("--force", action="store_true", help="overwrite an existing trace")
    p.add_argument("--no-open", action="store_true", help="do not open the viewer after the capture")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    g = p.add_argument_group("workload options (defaults: the series' sizes on CUDA, small ones on the CPU)")
    g.add_argument("--size", type=int, help="matmul_add: the side of the square tensors")
    g.add_argument("--batch", type=int)
    g.add_argument("--seq", type=int, help="mlp/attention: sequence length")
    g.add_argument("--dim", type=int, help="mlp: model dim")
    g.add_argument("--hidden", type=int, help="mlp: hidden dim")
    g.add_argument("--in-features", type=int, help="linear: input features")
    g.add_argument("--out-features", type=int, help="linear: output features")
    g.add_argument("--heads", type=int, help="attention: heads")
    g.add_argument("--head-dim", type=int, help="attention: head dim")
    g.add_argument("--variant", choices=("naive", "inplace", "sdpa"), help="attention variant (default sdpa)")
    g.add_argument(
        "--backend", choices=("auto", "math", "flash", "efficient", "cudnn"), help="sdpa backend (default auto)"
    )
    return p
