"""One rank of a job (runs in the rank's own process): its process group, its step, the series' capture."""

from __future__ import annotations

import os
from pathlib import Path

from .usercode import their_errors


def capture_rank(rank: int, job) -> None:
    """Make the process group from torchrun's environment, profile the step, write rank-K.json and rank-K.txt."""
    import torch
    import torch.distributed as dist

    from .runner import capture, write_trace

    args, device = job.args, job.device
    if device == "cuda":
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    else:  # torchrun's rule for several ranks on one machine: the cores shared out, not each rank taking all
        torch.set_num_threads(max((os.cpu_count() or 1) // job.nproc, 1))
    dist.init_process_group("nccl" if device == "cuda" else "gloo", init_method="env://")
    step, label = _step(args, device, rank)
    with their_errors():
        if args.warmup:
            for _ in range(3):
                step()
        prof = capture(torch, step, label, device, args, quiet=False)  # stderr is the rank's log: no pipe
    out = Path(job.folder) / f"rank-{rank}.json"
    write_trace(prof, out, args.with_stack)
    _write_table(prof, out, device, args.with_stack)
    # only on success: a failing rank keeps its connections until it has said it failed first (ranks.py). The
    # ranks leave together: a gloo rank that tore its group down while the other was still in it aborted ("terminate
    # called without an active exception", SIGABRT, once in a CI run of tests/cli/test_profile_ranks.py)
    dist.barrier()
    dist.destroy_process_group()


def _step(args, device: str, rank: int):
    """The step this rank calls and its record_function label."""
    from .registry import WORKLOADS
    from .target import load_user_function, resolve

    if ":" in args.workload:
        fn = load_user_function(args.workload)
        return fn, getattr(fn, "__name__", "step")
    w = WORKLOADS[args.workload]
    if not w.job:
        target = resolve(args, device)
        return target.step, target.label
    from .job_workloads import build_job

    with their_errors():
        return build_job(w.name, w.options(device, vars(args)), device, args.dtype, rank), w.label


def _write_table(prof, out: Path, device: str, with_stack: bool) -> None:
    """torch's key_averages table beside the rank's trace (none when torch cannot make it)."""
    from .runner import atomic_write_text, key_averages, table_path

    sort = "cuda_time_total" if device == "cuda" else "cpu_time_total"
    try:
        text = key_averages(prof, with_stack).table(sort_by=sort, row_limit=15)
    except Exception:  # noqa: BLE001 - torch's table is a courtesy here; the trace is what the job is read from
        return
    atomic_write_text(table_path(out), text)
