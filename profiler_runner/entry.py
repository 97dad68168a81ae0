"""`tracetui profile`'s way in: one process, or a job of several ranks (--nproc N, or a job workload)."""

from __future__ import annotations

from .registry import WORKLOADS


def is_job(args) -> bool:
    """A job of several ranks: --nproc given, or a built-in workload that is one (allreduce, ddp)."""
    return bool(getattr(args, "nproc", None)) or (args.workload in WORKLOADS and WORKLOADS[args.workload].job)


def run(args, reader) -> int:
    if is_job(args):
        from .ranks import run_ranks

        return run_ranks(args, reader)
    from .runner import run_profile

    return run_profile(args, reader)
