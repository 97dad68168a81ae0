"""A CUDA trace shaped like the series' 01_matmul_add, with the figures torch's own table printed for it.

Three profiled steps, each a record_function("matmul_add") block over aten::mm and aten::add, their
cudaLaunchKernel calls and kernels; Kineto's GPU-side copies of the step and of the block
(gpu_user_annotation, linked to no op); a cudaMemsetAsync that puts nothing on the device and a
cudaEventRecord (runtime calls, not launches); and an add kernel left running from warm-up, with
no External id and no launch in the window. The GPU runs each step's kernels as soon as they are
launched and it is free: in the large run a step's kernels outlast its CPU span. The kernel times add up to what torch printed for the
64 and 4096 runs (key_averages().table() on an H100): ProfilerStep* and the matmul_add CPU row 8.385 us
/ 6.546 ms of CUDA total, the GPU-side matmul_add row 15.041 us / 6.551 ms.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from conftest import X, write_trace

CPU, GPU = {"pid": 1, "tid": 1}, {"pid": 0, "tid": 7}
MM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_segment_k_off_kernel"
ADD = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<c10::BFloat16>, "
    "std::array<char*, 3ul> >(int, at::native::CUDAFunctorOnSelf_add<c10::BFloat16>, std::array<char*, 3ul>)"
)


@dataclass(frozen=True)
class Run:
    """One size of the series' run: per step, the kernels' and the GPU-side block's times (ns), torch's figures (us)."""

    mm_ns: tuple[int, int, int]
    add_ns: tuple[int, int, int]
    block_ns: tuple[int, int, int]  # the GPU-side matmul_add span of each step
    step_cpu_ns: tuple[int, int, int]  # each ProfilerStep#N on the CPU
    cuda_total_us: float  # torch: ProfilerStep* and matmul_add (CPU) CUDA total
    gpu_block_us: float  # torch: matmul_add (GPU side) Self CUDA = CUDA total


SMALL = Run((1_900, 1_950, 1_955), (860, 860, 860), (5_013, 5_014, 5_014), (90_000,) * 3, 8.385, 15.041)
LARGE = Run(
    (1_960_000, 1_960_000, 1_961_000),
    (221_000, 222_000, 222_000),
    (2_183_000, 2_184_000, 2_184_000),
    (341_000, 87_000, 41_000),
    6546.0,
    6551.0,
)
LEFTOVER_NS = 700  # the warm-up's add kernel, still running when the window opens


def _us(ns: int) -> float:
    return round(ns / 1000, 3)


def _cpu(name: str, ts: int, dur: int, cat: str = "cpu_op", **args) -> dict:
    return X(name, _us(ts), _us(dur), cat=cat, **CPU, **args)


def _gpu(name: str, ts: int, dur: int, cat: str = "kernel", **args) -> dict:
    return X(name, _us(ts), _us(dur), cat=cat, **GPU, **args)


def _step(k: int, base: int, gpu0: int, run: Run) -> list[dict]:
    """Step k at base (ns), its kernels from gpu0 on: its CPU events, then its GPU events; ids 10k+1.. and
    correlations 1000+10k+..."""
    ext, corr, step = 10 * k, 1000 + 10 * k, f"ProfilerStep#{k + 2}"
    block_end, add0 = gpu0 + run.block_ns[k], gpu0 + run.block_ns[k] - run.add_ns[k]
    rt = "cuda_runtime"
    return [
        _cpu(step, base, run.step_cpu_ns[k], "user_annotation", External_id=ext + 1),
        _cpu("matmul_add", base + 5_000, 15_000, "user_annotation", External_id=ext + 2),
        _cpu("aten::mm", base + 5_500, 3_500, External_id=ext + 3),
        _cpu("cudaLaunchKernel", base + 6_000, 2_000, rt, External_id=ext + 3, correlation=corr + 3),
        _cpu("aten::add", base + 9_000, 3_500, External_id=ext + 4),
        _cpu("cudaLaunchKernel", base + 9_500, 2_000, rt, External_id=ext + 4, correlation=corr + 4),
        _cpu("cudaMemsetAsync", base + 13_000, 2_000, rt, correlation=corr + 5),
        _cpu("cudaEventRecord", base + run.step_cpu_ns[k] - 3_000, 1_000, rt, correlation=corr + 6),
        _gpu(MM, gpu0, run.mm_ns[k], External_id=ext + 3, correlation=corr + 3),
        _gpu(ADD, add0, block_end - add0, External_id=ext + 4, correlation=corr + 4),
        _gpu("matmul_add", gpu0, run.block_ns[k], "gpu_user_annotation", External_id=ext + 2),
        _gpu(step, gpu0, run.block_ns[k], "gpu_user_annotation", External_id=ext + 1),
    ]


def matmul_add(tmp_path: Path, run: Run = SMALL, leftover_ns: int = LEFTOVER_NS) -> Path:
    """The trace of one run, written to tmp_path (leftover_ns: how long the warm-up's kernel runs from 1 us on)."""
    events = [_gpu(ADD, 1_000, leftover_ns, correlation=900)]
    base, gpu_free = 10_000, 1_000 + leftover_ns
    for k in range(3):
        gpu0 = max(base + 10_000, gpu_free)  # launched 6 us into the step: runs at 10 us, or once the GPU is free
        events += _step(k, base, gpu0, run)
        base, gpu_free = base + run.step_cpu_ns[k] + 10_000, gpu0 + run.block_ns[k]
    return write_trace(tmp_path / "matmul_add.json", events)
