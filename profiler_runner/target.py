"""Resolve what to profile: a built-in workload or the user's FILE.py:fn / module:fn."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import ProfileError
from .registry import WORKLOADS, Workload

CUDA_ONLY = {"flash", "efficient", "cudnn"}


@dataclass
class Target:
    """What one profiler step calls, its record_function label and its file tag."""

    label: str
    workload: str
    tag: str
    step: Callable[[], object]
    fn: Callable | None = None
    args: tuple = ()


def load_user_function(spec: str) -> Callable:
    """Import FILE.py:fn or package.module:fn and return fn."""
    where, _, name = spec.rpartition(":")
    if not where or not name:
        raise ProfileError(f"{spec}: expected FILE.py:function or package.module:function")
    if where.endswith(".py") or Path(where).exists():
        path = Path(where)
        if not path.is_file():
            raise ProfileError(f"{where}: no such file")
        mod_spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(mod_spec)  # type: ignore[arg-type]
        sys.path.insert(0, str(path.parent.resolve()))
        mod_spec.loader.exec_module(module)  # type: ignore[union-attr]
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as exc:
            raise ProfileError(f"{where}: cannot import ({exc})") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ProfileError(f"{spec}: no function named {name!r}")
    return fn


def check_name(workload: str) -> None:
    """Fail early on an unknown workload name (before torch is imported)."""
    if ":" not in workload and workload not in WORKLOADS:
        raise ProfileError(
            f"unknown workload {workload!r}; choose from {', '.join(WORKLOADS)} or give FILE.py:function"
        )


def resolve(args, device: str) -> Target:
    """Build the target for the arguments, checking impossible combinations first."""
    if ":" in args.workload:
        fn = load_user_function(args.workload)
        return Target(fn.__name__, fn.__name__, f"{_mode_tag(args)}", fn)
    check_name(args.workload)
    workload = WORKLOADS[args.workload]
    opts = workload.options(device, vars(args))
    check_combination(workload, opts, device, args)
    from .workloads import build

    step, tag = build(workload.name, opts, device, args.dtype)
    tag = f"{tag}_{args.dtype}_{_mode_tag(args)}"
    return Target(workload.label, workload.name, tag, step, step.fn, step.args)  # type: ignore[attr-defined]


def check_combination(w: Workload, opts: dict, device: str, args) -> None:
    if w.name == "attention" and device == "cpu" and opts.get("backend") in CUDA_ONLY and opts.get("variant") == "sdpa":
        raise ProfileError(f"the {opts['backend']} attention backend needs CUDA; on the CPU use --backend math or auto")
    if w.name == "attention" and opts.get("backend") in ("flash", "cudnn") and args.dtype == "fp32":
        raise ProfileError(f"the {opts['backend']} attention backend needs bf16 or fp16 (use --dtype bf16)")
    if args.backend and opts.get("variant") != "sdpa" and w.name == "attention":
        raise ProfileError("--backend applies only to --variant sdpa")
    for key in ("size", "batch", "seq", "dim", "hidden", "in_features", "out_features", "heads", "head_dim"):
        if key in opts and opts[key] is not None and opts[key] <= 0:
            raise ProfileError(f"--{key.replace('_', '-')} must be positive")
    if args.steps <= 0:
        raise ProfileError("--steps must be positive")


def _mode_tag(args) -> str:
    return f"{'warm' if args.warmup else 'cold'}_{'compiled' if args.compile else 'eager'}"
