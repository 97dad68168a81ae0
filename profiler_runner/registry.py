"""The registry of built-in workloads: names, labels, options and defaults (no torch here)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Workload:
    """A built-in workload: its label, one-line description and per-device defaults."""

    name: str
    label: str
    summary: str
    cuda_defaults: dict = field(default_factory=dict)
    cpu_defaults: dict = field(default_factory=dict)
    job: bool = False  # a job of several ranks: runs only under --nproc N (ranks.py)

    def options(self, device: str, given: dict) -> dict:
        """The defaults for the device, overridden by what the user gave."""
        base = dict(self.cuda_defaults if device == "cuda" else self.cpu_defaults)
        base.update({k: v for k, v in given.items() if k in base and v is not None})
        return base


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            "matmul_add",
            "matmul_add",
            "torch.add(torch.matmul(x, w), b) on (size, size) tensors (series part 1)",
            {"size": 64},
            {"size": 64},
        ),
        Workload(
            "linear",
            "linear_fwd",
            "nn.Linear forward, batch 1024, 32 -> 64 features (series part 2)",
            {"batch": 1024, "in_features": 32, "out_features": 64},
            {"batch": 1024, "in_features": 32, "out_features": 64},
        ),
        Workload(
            "mlp",
            "mlp_fwd",
            "GeGLU MLP: gate/up/down projections, tanh GELU, multiply (series part 2)",
            {"batch": 64, "seq": 128, "dim": 768, "hidden": 3072},
            {"batch": 2, "seq": 32, "dim": 128, "hidden": 512},
        ),
        Workload(
            "attention",
            "attn_fwd",
            "causal attention: naive masked_fill, in-place masked_fill_, or sdpa (series part 3)",
            {"batch": 8, "heads": 16, "seq": 1024, "head_dim": 64, "variant": "sdpa", "backend": "auto"},
            {"batch": 1, "heads": 4, "seq": 64, "head_dim": 32, "variant": "sdpa", "backend": "auto"},
        ),
        Workload(
            "allreduce",
            "allreduce",
            "a job (--nproc N): matmuls, then all_reduce of a gradient-sized tensor; --slow-rank R --delay-ms D",
            {"size": 64 * 2**20, "dim": 4096, "slow_rank": None, "delay_ms": None},
            {"size": 2**20, "dim": 256, "slow_rank": None, "delay_ms": None},
            job=True,
        ),
        Workload(
            "ddp",
            "ddp_train",
            "a job (--nproc N): an MLP in DistributedDataParallel, its buckets all-reduced during the backward",
            {"batch": 64, "dim": 4096, "hidden": 4 * 4096},
            {"batch": 32, "dim": 256, "hidden": 1024},
            job=True,
        ),
    )
}


def describe() -> str:
    """One line per workload, for `tracetui workloads`."""
    width = max(len(n) for n in WORKLOADS)
    lines = [f"{w.name:<{width}}  {w.summary}" for w in WORKLOADS.values()]
    lines.append(f"{'FILE.py:fn':<{width}}  your own function, called once per step (also package.module:fn)")
    return "\n".join(lines)
