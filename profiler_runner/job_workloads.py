"""The built-in workloads of a job of several ranks (imports torch; built in each rank, its process group made).

allreduce: a step of compute (matmuls), then one all_reduce of a gradient-sized tensor; the rank named by
--slow-rank sleeps --delay-ms before its collective, so every other rank waits that long in it: a known truth.
ddp: an MLP in DistributedDataParallel; its gradients are all-reduced in buckets while the backward runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch
import torch.distributed as dist
from torch.profiler import record_function

from .workloads import DTYPES

MATMULS = 8  # the compute of an allreduce step: this many (dim, dim) matmuls
BLOCKS = 4  # the ddp MLP's blocks (Linear, GELU, Linear): several buckets, so they overlap the backward
BUCKET_MB = {"cpu": 1, "cuda": 25}  # DDP's bucket_cap_mb: its default (25) on CUDA; the CPU model is smaller
SLEEP_LABEL = "sleep (--delay-ms)"  # the slow rank's sleep, named on its timeline


def build_job(name: str, opts: dict, device: str, dtype: str, rank: int) -> Callable[[], object]:
    """The zero-argument step of a job workload on this rank (the process group is made)."""
    return {"allreduce": _allreduce, "ddp": _ddp}[name](opts, device, DTYPES[dtype], rank)


def job_tag(name: str, opts: dict) -> str:
    """The file tag's prefix for a job workload's options (the rank's delay included: it is the run's truth)."""
    if name == "allreduce":
        slow = f"_slow{opts['slow_rank']}-{opts['delay_ms']:g}ms" if opts.get("slow_rank") is not None else ""
        return f"{opts['size']}x{opts['dim']}{slow}"
    return f"{opts['batch']}x{opts['dim']}x{opts['hidden']}"


def _allreduce(o, device, dt, rank):
    a = torch.randn(o["dim"], o["dim"], device=device, dtype=dt)
    grad = torch.randn(o["size"], device=device, dtype=dt)
    delay = (o.get("delay_ms") or 0.0) / 1000.0 if o.get("slow_rank") == rank else 0.0

    def step():
        for _ in range(MATMULS):
            a @ a
        if delay:
            if device == "cuda":
                torch.cuda.synchronize()  # the sleep delays the collective's launch, not only the CPU
            with record_function(SLEEP_LABEL):
                time.sleep(delay)
        dist.all_reduce(grad)
        return grad

    return step


def _ddp(o, device, dt, rank):
    from torch.nn.parallel import DistributedDataParallel

    dim, hidden = o["dim"], o["hidden"]
    layers: list[torch.nn.Module] = []
    for _ in range(BLOCKS):
        layers += [torch.nn.Linear(dim, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, dim)]
    model = torch.nn.Sequential(*layers).to(device=device, dtype=dt)
    ids = [torch.cuda.current_device()] if device == "cuda" else None
    ddp = DistributedDataParallel(model, device_ids=ids, bucket_cap_mb=BUCKET_MB[device])
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    x = torch.randn(o["batch"], dim, device=device, dtype=dt)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = ddp(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        return loss

    return step
