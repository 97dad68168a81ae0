"""The checks and names of a job of several ranks, before any rank starts (torch imported, no rank running)."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ProfileError
from .registry import WORKLOADS
from .runner import free_name


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity where the system says, else the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def check_job(args, torch, device: str) -> int:
    """The number of ranks, once the request is sound for this machine and the workload."""
    nproc = args.nproc
    if nproc is None:
        raise ProfileError(f"{args.workload} is a job of several ranks: give --nproc N (e.g. --nproc 2)")
    if args.slow_rank is not None or args.delay_ms is not None:
        _check_slow_rank(args, nproc)
    if args.output and Path(args.output).suffix in (".json", ".gz"):
        raise ProfileError(f"{args.output}: with --nproc, -o names the folder of the rank traces (rank-K.json)")
    if device == "cuda":
        gpus = torch.cuda.device_count()
        if nproc > gpus:
            raise ProfileError(
                f"--nproc {nproc}: this machine has {gpus} GPU{'s' * (gpus != 1)}; NCCL runs one rank per GPU (two "
                f"ranks on one GPU fail in NCCL with 'Duplicate GPU detected'); use --nproc {gpus} or fewer, or "
                "--device cpu for gloo ranks on the CPU"
            )
    elif nproc > usable_cores() and not args.oversubscribe:
        cores = usable_cores()
        raise ProfileError(
            f"--nproc {nproc}: this machine has {cores} CPU core{'s' * (cores != 1)}; {nproc} ranks would share them, "
            "so each rank's steps would time its wait for a core rather than the job; use --nproc "
            f"{cores} or fewer, or --oversubscribe to run them anyway"
        )
    if args.compile or args.compile_mode:
        raise ProfileError(
            "--compile does not apply with --nproc (each rank would compile on its own); profile one rank"
        )
    return nproc


def _check_slow_rank(args, nproc: int) -> None:
    if args.slow_rank is None or args.delay_ms is None:
        raise ProfileError("--slow-rank R and --delay-ms D go together (rank R sleeps D ms before its collective)")
    if not 0 <= args.slow_rank < nproc:
        raise ProfileError(f"--slow-rank {args.slow_rank}: the ranks are 0 to {nproc - 1}")
    if args.delay_ms < 0:
        raise ProfileError("--delay-ms must be 0 or more")


def machine_note(torch, device: str, nproc: int) -> str:
    """How the ranks sit on the machine, said once."""
    if device == "cuda":
        return f"tracetui: {nproc} NCCL ranks, one GPU each (cuda:0 .. cuda:{nproc - 1})"
    cores = usable_cores()
    threads = max(cores // nproc, 1)
    share = f"; {nproc} ranks on {cores} cores: they share them" if nproc > cores else ""
    return f"tracetui: {nproc} gloo ranks on the CPU, {threads} intra-op thread{'s' * (threads != 1)} each{share}"


def job_tag(args, device: str) -> tuple[str, str]:
    """The workload's folder name and the job's tag, without building anything."""
    from .target import mode_tag, user_function_name

    mode = mode_tag(args)
    if ":" in args.workload:
        return user_function_name(args.workload), mode
    w = WORKLOADS[args.workload]
    opts = w.options(device, vars(args))
    if w.job:
        from .job_workloads import job_tag as job_prefix

        return w.name, f"{job_prefix(w.name, opts)}_{args.dtype}_{mode}"
    from .workloads import tag_of

    return w.name, f"{tag_of(w.name, opts)}_{args.dtype}_{mode}"


def job_folder(args, device: str) -> tuple[Path, Path | None]:
    """The folder of the rank traces (traces/<workload>/<tag>-ranks, or -o), and the name that was taken."""
    workload, tag = job_tag(args, device)
    asked = Path(args.output) if args.output else Path("traces") / workload / f"{tag}-ranks"
    if args.force:
        for old in [*asked.glob("rank-*.json"), *asked.glob("rank-*.txt")]:  # no rank of an earlier job stays
            old.unlink()
        return asked, None
    out = free_name(asked)
    return out, (asked if out != asked else None)
