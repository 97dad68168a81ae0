"""Resolve what to profile: a built-in workload or the user's FILE.py:fn / module:fn."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import ProfileError
from .registry import WORKLOADS, Workload
from .usercode import their_errors

CUDA_ONLY = {"flash", "efficient", "cudnn"}
DEFAULT_STEPS = 3
SIZE_KEYS = ("size", "batch", "seq", "dim", "hidden", "in_features", "out_features", "heads", "head_dim")
OPTION_KEYS = (*SIZE_KEYS, "variant", "backend", "slow_rank", "delay_ms")


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
    """Import FILE.py:fn or package.module:fn and return fn (it must take no arguments)."""
    where, _, name = spec.rpartition(":")
    if not where or not name:
        raise ProfileError(f"{spec}: expected FILE.py:function or package.module:function")
    with their_errors():
        module = _import_file(Path(where)) if _is_path(where) else _import_module(where)
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ProfileError(f"{spec}: no function named {name!r}")
    _check_no_arguments(spec, fn)
    return fn


def _is_path(where: str) -> bool:
    """FILE.py (or any path) rather than package.module."""
    return where.endswith(".py") or "/" in where or "\\" in where or Path(where).is_file()


def _import_file(path: Path):
    if path.is_dir():
        raise ProfileError(f"{path}: is a folder; give FILE.py:function or package.module:function")
    if not path.is_file():
        raise ProfileError(f"{path}: no such file")
    if path.suffix != ".py":
        raise ProfileError(f"{path}: not a Python file (expected FILE.py:function)")
    name = path.stem if path.stem not in sys.modules else f"_tracetui_user_{path.stem}"
    mod_spec = importlib.util.spec_from_file_location(name, path)
    if mod_spec is None or mod_spec.loader is None:
        raise ProfileError(f"{path}: cannot be imported as a Python file")
    module = importlib.util.module_from_spec(mod_spec)
    sys.path.insert(0, str(path.parent.resolve()))
    sys.modules[name] = module  # dataclasses, pickle and typing look their module up here
    try:
        mod_spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _import_module(where: str):
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as exc:
        if exc.name and (where == exc.name or where.startswith(exc.name + ".")):
            raise ProfileError(f"{where}: no module of that name can be imported ({exc})") from None
        raise  # an import inside their module failed: their code


def _check_no_arguments(spec: str, fn: Callable) -> None:
    """Each step calls fn(): a function that needs arguments is a usage error that says how to wrap it."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature to read (a builtin): let the call tell
        return
    needed = [
        p.name
        for p in sig.parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    if needed:
        name = getattr(fn, "__name__", "fn")
        raise ProfileError(
            f"{spec}: {name}() needs arguments ({', '.join(needed)}) but each step calls it with none; "
            f"wrap it in a function without arguments, e.g. def run(): return {name}({', '.join(needed)}) (with values for them), then profile FILE:run"
        )


def user_function_name(spec: str) -> str:
    """The function's name in FILE.py:fn or module:fn, without importing it."""
    return spec.rpartition(":")[2] or "step"


def check_name(workload: str) -> None:
    """Fail early on an unknown workload name (before torch is imported)."""
    if ":" not in workload and workload.endswith(".py"):
        raise ProfileError(f"{workload}: name the function to profile: {workload}:FUNCTION")
    if ":" not in workload and workload not in WORKLOADS:
        raise ProfileError(
            f"unknown workload {workload!r}; choose from {', '.join(WORKLOADS)} or give FILE.py:function"
        )


def resolve(args, device: str) -> Target:
    """Build the target for the arguments, checking impossible combinations first."""
    if ":" in args.workload:
        fn = load_user_function(args.workload)
        name = getattr(fn, "__name__", "step")
        return Target(name, name, mode_tag(args), fn)
    check_name(args.workload)
    workload = WORKLOADS[args.workload]
    opts = workload.options(device, vars(args))
    check_combination(workload, opts, device, args)
    from .workloads import build

    step, tag = build(workload.name, opts, device, args.dtype)
    tag = f"{tag}_{args.dtype}_{mode_tag(args)}"
    return Target(workload.label, workload.name, tag, step, step.fn, step.args)  # type: ignore[attr-defined]


def check_request(args) -> None:
    """Every check that needs neither torch nor the device: the name, and options that do not apply."""
    check_name(args.workload)
    given = [k for k in OPTION_KEYS if getattr(args, k, None) is not None]
    if ":" in args.workload:
        if given:
            raise ProfileError(f"{_flag(given[0])} is an option of the built-in workloads, not of {args.workload}")
        return
    w = WORKLOADS[args.workload]
    alien = [k for k in given if k not in w.cuda_defaults]
    if alien:
        own = ", ".join(_flag(k) for k in w.cuda_defaults)
        raise ProfileError(f"{_flag(alien[0])} does not apply to {w.name} (its options: {own})")
    opts = w.options("cuda", vars(args))
    if args.backend and opts.get("variant") != "sdpa":
        raise ProfileError("--backend applies only to --variant sdpa")
    if opts.get("backend") in ("flash", "cudnn") and args.dtype == "fp32":
        raise ProfileError(f"the {opts['backend']} attention backend needs bf16 or fp16 (use --dtype bf16)")


def check_combination(w: Workload, opts: dict, device: str, args) -> None:
    """The checks that need the device (and the defaults it picks)."""
    if w.name == "attention" and device == "cpu" and opts.get("backend") in CUDA_ONLY and opts.get("variant") == "sdpa":
        raise ProfileError(f"the {opts['backend']} attention backend needs CUDA; on the CPU use --backend math or auto")
    if w.name == "attention" and opts.get("backend") in ("flash", "cudnn") and args.dtype == "fp32":
        raise ProfileError(f"the {opts['backend']} attention backend needs bf16 or fp16 (use --dtype bf16)")
    for key in SIZE_KEYS:
        if key in opts and opts[key] is not None and opts[key] <= 0:
            raise ProfileError(f"{_flag(key)} must be positive")
    if args.steps <= 0:
        raise ProfileError("--steps must be positive")


def _flag(key: str) -> str:
    return f"--{key.replace('_', '-')}"


def mode_tag(args) -> str:
    """The capture's flags in its file name: warm/cold, eager/compiled[-mode], then stack, mem, noshapes, stepsN.

    The series' defaults (record_shapes, 3 steps, no stack, no memory) add nothing, so their names stay.
    """
    mode = getattr(args, "compile_mode", None)  # None when --compile comes without --compile-mode
    compiled = "compiled" + (f"-{mode}" if mode and mode != "default" else "")
    parts = ["warm" if args.warmup else "cold", compiled if args.compile else "eager"]
    parts += ["stack"] * bool(args.with_stack) + ["mem"] * bool(args.profile_memory)
    parts += ["noshapes"] * (not args.record_shapes) + ([f"steps{args.steps}"] if args.steps != DEFAULT_STEPS else [])
    return "_".join(parts)
