"""What the run already uses, read from its trace, so no advice recommends it and each says what comes next.

- torch.compile: its runtime's regions (Torch-Compiled Region, ## Call CompiledFxGraph, CompiledFunction) or
  Inductor's kernels (triton_poi_/red_/per_/tem_);
- CUDA/HIP graphs: graph launches, and the share of the device time they replayed;
- the math's precision: the dtype of the GEMM, convolution and attention kernels (kernel_roles.classify, their names
  and template arguments), weighed by device time: bf16/fp16/fp8 is autocast or a half-precision model; tf32 is
  fp32 matmuls on the tensor cores (TF32 allowed);
- channels_last: convolution kernels in NHWC with no NCHW<->NHWC transposes around them (cuDNN transposes a
  channels-first model's tensors itself: nchwToNhwcKernel).

Then what comes next: a CPU-bound run that is eager gets torch.compile and CUDA graphs; one already compiled gets
CUDA graphs (mode="reduce-overhead"); one already replayed from graphs gets what is left outside them. A GPU-bound run
gets the tensor cores (bf16, TF32) and fusion where they are not in use, and where they all are, the kernels
themselves against their roofs. NEXT holds those sentences, one source for explain's notes, the overview's reading
and the critical report's advice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ...analysis import Analysis
from ...cats import BUSY_CATS, Cat, of_cats
from ..graphs.replay import graph_launches, graph_owner
from ..kernel_roles import classify
from .findings import Figure, Quantity

COMPILED = re.compile(r"^(Torch-Compiled Region|## Call CompiledFxGraph|CompiledFunction)")
INDUCTOR = re.compile(r"^triton_(poi|red|per|tem)_")
NHWC = re.compile(r"nhwc", re.IGNORECASE)
TRANSPOSE = re.compile(r"nchwToNhwc|nhwcToNchw", re.IGNORECASE)
LOW = ("bf16", "fp16", "fp8", "fp4", "int8")
REPLAYED = 0.5  # graphs replay at least this share of the device time: the run is on graphs


@dataclass(frozen=True)
class Uses:
    """What the run already uses (counts; shares of device time, 0..1)."""

    compiled: int = 0  # torch.compile regions called, or Inductor kernels run (0: eager)
    graph_launches: int = 0
    graph_share: float = 0.0  # of the device time, replayed from graphs
    math_dtype: str = ""  # the precision of most of the GEMM / conv / attention kernels' time ("": no such kernel)
    math_share: float = 0.0  # ... its share of their time
    tf32: bool = False  # some fp32 matmuls ran TF32 on the tensor cores
    channels_last: bool = False  # NHWC convolutions with no layout transposes around them
    transposes: bool = False  # cuDNN transposed NCHW tensors to NHWC and back around its kernels

    @property
    def graphed(self) -> bool:
        """Most of the device time is replayed from graphs."""
        return self.graph_launches > 0 and self.graph_share >= REPLAYED

    @property
    def low_precision(self) -> bool:
        return self.math_dtype in LOW

    @property
    def cpu_next(self) -> str:
        """What comes next for a run whose GPU waits for the CPU: a key of NEXT."""
        if self.graph_launches:
            return "cpu-graphed"
        return "cpu-compiled" if self.compiled else "cpu-eager"

    @property
    def gaps_next(self) -> str:
        """What comes next for gaps between kernels (many short kernels back to back): a key of NEXT."""
        if self.graph_launches:
            return "gaps-graphed"
        return "cpu-compiled" if self.compiled else "gaps-eager"

    @property
    def gpu_next(self) -> str:
        """What comes next for a run the GPU's own work bounds: a key of NEXT."""
        if self.math_dtype == "fp32" and not self.tf32:
            return "gpu-fp32"
        if not self.compiled:
            return "gpu-eager"
        return "gpu-kernels"


NEXT = {  # str.format over the Uses' fields and `graph_pct`, `dtype`
    "cpu-eager": "torch.compile (fewer, fused kernels) and CUDA graphs (torch.compile(mode='reduce-overhead'), or "
    "torch.cuda.CUDAGraph) cut the CPU work per kernel.",
    "cpu-compiled": "The run is already compiled (torch.compile): what comes next is CUDA graphs, "
    "torch.compile(mode='reduce-overhead'), which replays each compiled graph's kernels from one launch.",
    "cpu-graphed": "The run already replays {_what} from CUDA graphs ({_launches_said}, "
    "{graph_pct} of the device time): the CPU time left is outside the graph launches: the Python around each "
    "replay{_trees_said}, the ops between replays, and the parts not captured (graph breaks, a synchronize "
    "inside). Capture more of the step per graph{_regions_said}, or cut that Python.",
    "gaps-eager": "Fuse them (torch.compile).",
    "gaps-graphed": "The run already replays {_what} from CUDA graphs ({_launches_said}, "
    "{graph_pct} of the device time){_compiled_said}: the gaps left are kernels too short to fill the GPU, or "
    "waiting on other streams; fewer, larger kernels are what is left.",
    "gpu-fp32": "The run's matmuls run in fp32 on the CUDA cores: lower precision (torch.autocast: bf16, or fp16 before "
    "Ampere) or TF32 on Ampere and later (torch.set_float32_matmul_precision('high')) puts them on the tensor "
    "cores{_fuse_said}.",
    "fp32-advice": "bf16/fp16 (torch.autocast), or TF32 (torch.set_float32_matmul_precision('high')), would use them.",
    "fp32-left-autocast": "The run already computes most of its matmuls in {dtype} (autocast, or a {dtype} model): "
    "these stayed fp32, as ops autocast keeps in fp32 or code outside its region do. TF32 "
    "(torch.set_float32_matmul_precision('high')) puts them on the tensor cores too.",
    "fp32-left-tf32": "TF32 is already allowed (other fp32 GEMMs ran TF32 on the tensor cores): the library picked "
    "CUDA-core kernels for these shapes (small, or sizes not multiples of 8). Padding them, or bf16 "
    "(torch.autocast), reaches the tensor cores.",
    "half-channels-last": "channels_last (model.to(memory_format=torch.channels_last), and the inputs) and sizes "
    "padded to multiples of 8 let it pick one.",
    "half-sizes": "The run is already channels_last: sizes padded to multiples of 8 let it pick one.",
    "channels-last": "model.to(memory_format=torch.channels_last), and the inputs too, makes the tensors NHWC "
    "throughout, and cuDNN needs no such copies around its NHWC kernels.",
    "gpu-eager": "The run's matmuls already run {dtype} on the tensor cores: fusion (torch.compile) cuts the memory-bound "
    "ops between them, and the roofline view (tracetui roofline) shows how close each kernel runs to its roof.",
    "gpu-kernels": "The run already uses {dtype} on the tensor cores{_graphs_said}: what is left is "
    "the kernels themselves. The roofline view (tracetui roofline) shows how close each runs to its roof; those far "
    "below it are where the time is (shapes, tile choices: torch.compile(mode='max-autotune')).",
}


def fp32_left(u: Uses) -> str:
    """The advice for fp32 GEMMs on the CUDA cores: a key of NEXT (autocast, TF32, or neither in use)."""
    if u.low_precision:
        return "fp32-left-autocast"
    return "fp32-left-tf32" if u.tf32 else "fp32-advice"


def next_fields(u: Uses) -> dict[str, int | float | str]:
    """The fields NEXT's sentences are filled with (graph_share a fraction; the rest as they print). Those named
    with a leading _ are words that agree with the run, not figures: explain's JSON leaves them out."""
    return {
        "graph_launches": u.graph_launches,
        "_launches_said": f"{u.graph_launches:,} graph launch" + ("" if u.graph_launches == 1 else "es"),
        "_trees_said": " (torch.compile's guards and CUDA-graph trees cost tens of microseconds a call)"
        if u.compiled
        else "",
        "_regions_said": " (fewer, larger compiled regions)" if u.compiled else "",
        "graph_share": u.graph_share,
        "dtype": "TF32" if u.tf32 and u.math_dtype == "fp32" else u.math_dtype or "fp32",
        "_graphs_said": ", torch.compile and CUDA graphs" if u.graph_launches else " and torch.compile",
        "_compiled_said": " and is compiled" if u.compiled else "",
        "_what": "its work" if u.graphed else "part of its work",
        "_fuse_said": "" if u.compiled else "; fusion (torch.compile) cuts the memory-bound ops",
    }


def next_figures(u: Uses) -> dict[str, Figure]:
    """The same fields as a finding's figures (the share as a fraction), for its next/KEY template."""
    fields: dict[str, Figure] = {k: v for k, v in next_fields(u).items() if k != "graph_share"}
    return fields | {"graph_pct": Quantity(u.graph_share, "fraction")}


def next_words(u: Uses, key: str) -> str:
    """The NEXT sentence for a key, filled from what the run uses."""
    fields = next_fields(u)
    return NEXT[key].format(**fields, graph_pct=f"{u.graph_share:.0%}")


def uses_of(a: Analysis) -> Uses:
    """What the run uses: the one Results keeps, else computed (a bare Analysis)."""
    kept = getattr(a, "uses", None)
    return kept if isinstance(kept, Uses) else run_uses(a)


def run_uses(a: Analysis) -> Uses:
    """What the trace shows the run already uses."""
    t = a.trace
    x = t.x
    names = np.array([bool(COMPILED.match(n)) for n in t.names] or [False])
    compiled = int(names[x.name].sum())
    kernels = np.flatnonzero(x.cat == int(Cat.KERNEL))
    ids, inverse = np.unique(x.name[kernels], return_inverse=True)
    time = np.bincount(inverse, weights=x.dur[kernels].astype(np.float64)) if len(kernels) else np.zeros(0)
    kernel_names = [t.names[int(n)] for n in ids.tolist()]
    compiled += sum(1 for n in kernel_names if INDUCTOR.match(n))
    launches = len(graph_launches(t))
    return Uses(compiled, launches, _graph_share(a) if launches else 0.0, *_math(kernel_names, time))


def _graph_share(a: Analysis) -> float:
    owner = getattr(a, "graph_owner", None)
    owner = owner if isinstance(owner, np.ndarray) else graph_owner(a.trace)
    busy = of_cats(a.trace.x.cat, BUSY_CATS)
    total = float(a.trace.x.dur[busy].sum())
    return float(a.trace.x.dur[busy & (owner >= 0)].sum()) / total if total else 0.0


def _math(names: list[str], time: np.ndarray) -> tuple[str, float, bool, bool, bool]:
    """(the math's dtype, its share, TF32 seen, channels_last, layout transposes) from the kernels and their time."""
    by_dtype: dict[str, float] = {}
    nhwc = transposes = False
    for name, us in zip(names, time.tolist(), strict=True):
        transposes |= bool(TRANSPOSE.search(name))
        k = classify(name)
        if not k.unit:
            continue
        nhwc |= k.role == "convolution" and bool(NHWC.search(name))
        dtype = k.dtype or "?"
        by_dtype[dtype] = by_dtype.get(dtype, 0.0) + us
    known = {d: us for d, us in by_dtype.items() if d != "?"}
    total = sum(known.values())
    if not total:
        return "", 0.0, False, nhwc and not transposes, transposes
    if "tf32" in known:  # TF32 is fp32 data on the tensor cores
        known["fp32"] = known.get("fp32", 0.0) + known.pop("tf32")
    top = max(known, key=lambda d: known[d])
    return top, known[top] / total, "tf32" in by_dtype, nhwc and not transposes, transposes
