"""Explain rules: what the patterns a beginner sees in a trace mean (the series' lessons).

Each rule is an id plus a finder that returns findings (a title, a note and the events they
apply to). explain() runs them all; notes_by_event() indexes the notes for the details panel.
Finders take the structure (Analysis) and the summary, so this module needs nothing above it.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..analysis import Analysis
from ..cats import BUSY_CATS, GPU_CATS, Cat
from ..nesting import subtree_reduce
from ..steps import cold_first, step_events
from .kernel_roles import role
from .readings import launches_cost_more
from .summary import Summary, took

METADATA_OPS = {
    "aten::t",
    "aten::transpose",
    "aten::view",
    "aten::reshape",
    "aten::as_strided",
    "aten::_reshape_alias",
    "aten::expand",
    "aten::permute",
    "aten::unsqueeze",
    "aten::squeeze",
    "aten::slice",
    "aten::select",
    "aten::detach",
    "aten::alias",
    "aten::_unsafe_view",
    "aten::view_as",
    "aten::numpy_T",
    "aten::split",
}
SYNC = re.compile(r"^(cuda|hip)DeviceSynchronize$")
LAUNCH = re.compile(r"Launch", re.IGNORECASE)
GEMM_KERNEL = re.compile(r"gemm|cutlass|xmma|nvjet|Cijk_|matmul", re.IGNORECASE)
GEMM_OR_CONV = re.compile(
    r"gemm|cutlass|xmma|nvjet|Cijk_|matmul|conv|cudnn|implicit|winograd|wgrad|dgrad|fprop", re.IGNORECASE
)
SETUP_MIN_NS = 50_000  # a gap before the first op at least this long ...
SETUP_SHARE = 0.3  # ... and this share of the annotation ...
SETUP_VS_OTHERS = 3.0  # ... and this many times the same annotation's usual gap


@dataclass
class Finding:
    """A rule that fired: its note, and the events it applies to (maybe none: trace-wide)."""

    rule: str
    title: str
    note: str
    events: list[int] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.events)


@dataclass(frozen=True)
class Rule:
    id: str
    find: Callable[[Analysis, Summary], list[Finding]]


def _names(a: Analysis, pattern: re.Pattern) -> np.ndarray:
    hit = np.array([bool(pattern.search(n)) for n in a.trace.names] or [False])
    return np.flatnonzero(hit[a.trace.x.name])


def _has_gpu(a: Analysis) -> bool:
    return bool(np.isin(a.trace.x.cat, [int(c) for c in GPU_CATS]).any())


# ---- the rules ---------------------------------------------------------------------------------


def final_sync(a: Analysis, s: Summary) -> list[Finding]:
    syncs = _names(a, SYNC)
    if not len(syncs):
        return []
    last = int(syncs[np.argmax(a.end[syncs])])
    host = np.isin(a.trace.x.cat, [int(Cat.CPU_OP), int(Cat.RUNTIME), int(Cat.USER_ANNOTATION)])
    window_end = int(a.end[host].max())
    if window_end - int(a.end[last]) > max(0.01 * (window_end - int(a.trace.x.ts[host].min())), 50_000):
        return []
    dur = a.trace.x.dur[last] / 1000
    note = (
        f"The final {a.trace.name_of(last)} ({dur:,.1f} us) is the profiler flushing at the end of the window: it waits "
        "for every queued kernel to finish so the GPU timeline is complete. It is not a cost of your code."
    )
    return [Finding("final-sync", "Final device synchronize", note, [last])]


def activity_buffer(a: Analysis, s: Summary) -> list[Finding]:
    hits = _names(a, re.compile(r"^Activity Buffer Request$"))
    note = (
        "Activity Buffer Request is profiler overhead: CUPTI allocating a buffer for GPU activity records. "
        "Ignore it when reading the GPU lane."
    )
    return [Finding("activity-buffer", "Profiler buffer request", note, hits.tolist())] if len(hits) else []


def occupancy_query(a: Analysis, s: Summary) -> list[Finding]:
    hits, kernels = [], []
    for q in _names(a, re.compile(r"OccupancyMaxActiveBlocksPerMultiprocessor")).tolist():
        nxt = _next_launch(a, q)
        if nxt is not None and GEMM_OR_CONV.search(a.trace.name_of(nxt)):
            hits.append(q)
            kernels.append(nxt)
    if not hits:
        return []
    example = a.trace.name_of(kernels[0])[:80]
    note = (
        "An occupancy query right before a launch is a cuBLAS/cuDNN heuristic asking how many blocks fit on an SM: "
        f"the kernel that follows is GEMM- or convolution-style (here: {example})."
    )
    return [Finding("occupancy-query", "Occupancy query before a GEMM/conv launch", note, hits)]


def _next_launch(a: Analysis, q: int) -> int | None:
    """The first GPU kernel launched by a later sibling call of q under the same op."""
    p = int(a.nesting.parent[q])
    siblings = a.children(p) if p >= 0 else np.empty(0, int)
    later = siblings[a.trace.x.ts[siblings] >= a.trace.x.ts[q]]
    for s in later[:4].tolist():
        if s != q and LAUNCH.search(a.trace.name_of(s)) and len(a.links.launched(s)):
            return int(a.links.launched(s)[0])
    return None


def metadata_ops(a: Analysis, s: Summary) -> list[Finding]:
    if not _has_gpu(a):
        return []
    ids = [k for k, n in enumerate(a.trace.names) if n in METADATA_OPS]
    cand = np.flatnonzero(np.isin(a.trace.x.name, ids) & (a.trace.x.cat == int(Cat.CPU_OP)))
    quiet = cand[a.launches_below[cand] == 0].tolist()
    if not quiet:
        return []
    note = (
        "This op only changes tensor metadata (shape, strides, a view of the same memory): it launches no GPU "
        "kernel, so it shows on the CPU lane with nothing below it on the GPU."
    )
    return [Finding("metadata-op", "Metadata-only ops launch no kernel", note, quiet)]


def bias_copy(a: Analysis, s: Summary) -> list[Finding]:
    hits = []
    for g in _names(a, re.compile(r"^Memcpy DtoD")).tolist():
        addmm = _ancestor_named(a, int(a.links.launcher[g]), "aten::addmm")
        if addmm is None:
            continue
        launched = [int(k) for j in a.descendants(addmm, 64) for k in a.links.launched(j)]
        if any(GEMM_KERNEL.search(a.trace.name_of(k)) and a.trace.x.ts[k] >= a.trace.x.ts[g] for k in launched):
            hits.append(g)
    note = (
        "This device-to-device copy inside aten::addmm puts the bias into the output buffer; the GEMM that follows "
        "then adds the matrix product on top of it (beta = 1 in its epilogue)."
    )
    return [Finding("bias-copy", "Bias copy before addmm's GEMM", note, hits)] if hits else []


def _ancestor_named(a: Analysis, i: int, name: str, depth: int = 8) -> int | None:
    while i >= 0 and depth:
        if a.trace.name_of(i) == name:
            return i
        i, depth = int(a.nesting.parent[i]), depth - 1
    return None


def cold_start(a: Analysis, s: Summary) -> list[Finding]:
    steps = step_events(a.trace)
    ratio = cold_first((a.trace.x.dur[steps] / 1000).tolist())
    if ratio is None:
        return []
    note = (
        f"{a.trace.name_of(int(steps[0]))} took {ratio:.1f}x a typical step: a cold start (first-call "
        "allocations, CUDA context and library setup, autotuning, and the profiler's own first-step cost). Warm up "
        "before profiling (tracetui profile --warmup) or skip more steps in the profiler schedule."
    )
    return [Finding("cold-start", "Cold first step", note, [int(steps[0])])]


GAP_MIN_NS = 10_000  # a gap between kernels worth counting as evidence
GAPS_MARKED = 50  # the kernels after the longest gaps are marked


def overhead_gaps(a: Analysis, s: Summary) -> list[Finding]:
    """The GPU waits for the CPU: the gaps between device work as evidence, and what the CPU did meanwhile."""
    if s.cpu_only or s.verdict != "overhead-bound":
        return []
    x = a.trace.x
    work = np.flatnonzero(np.isin(x.cat, [int(c) for c in BUSY_CATS]))
    work = work[np.argsort(x.ts[work], kind="stable")]
    if len(work) < 2:
        return []
    ends = np.maximum.accumulate(x.ts[work] + x.dur[work])
    gaps = x.ts[work[1:]] - ends[:-1]
    big = np.flatnonzero(gaps > GAP_MIN_NS)
    longest = big[np.argsort(-gaps[big], kind="stable")][:GAPS_MARKED]
    evidence = (
        f"Evidence: {len(big):,} gaps of more than {GAP_MIN_NS / 1000:.0f} us between kernels add up to "
        f"{gaps[big].sum() / 1000:,.1f} us; the longest is {gaps[longest[0]] / 1000:,.1f} us (the kernels after the "
        f"{len(longest)} longest gaps are marked). "
        if len(big)
        else "No single gap stands out: the GPU idles in many short gaps between kernels. "
    )
    if launches_cost_more(s):
        cause = (
            f"Kernels average {s.avg_kernel_us:,.1f} us but the median launch call takes {s.median_launch_us:,.1f} us "
            "of CPU time: the CPU cannot launch fast enough. Batch more work per kernel, use torch.compile, or CUDA "
            "graphs."
        )
    else:
        ran = ", ".join(f"{name} ({us:,.1f} us)" for name, us in s.cpu_while_idle) or "code outside the profiled ops"
        cause = (
            f"Launches are not the cost (median {s.median_launch_us:,.1f} us); while no GPU worked, the CPU ran {ran}. "
            "Speed that work up, move it off the critical path, or overlap it with GPU work."
        )
    note = f"The GPU is idle {1 - s.gpu_utilization:.0%} of the window. " + evidence + cause
    title = "GPU idle between kernels while the CPU " + ("launches" if launches_cost_more(s) else "works")
    return [Finding("overhead-gaps", title, note, [int(work[1 + k]) for k in longest.tolist()])]


COPY_CALL = re.compile(r"Memcpy|Memset", re.IGNORECASE)


def slow_launch(a: Analysis, s: Summary) -> list[Finding]:
    """Launch calls far slower than the median: lazy module loading or a full queue (kernel launches), a
    copy that waits for the GPU (memcpy from or to pageable memory)."""
    out = []
    copies = [o for o in s.launch_outliers if COPY_CALL.search(o.name)]
    launches = [o for o in s.launch_outliers if not COPY_CALL.search(o.name)]
    tail = "The summary's launch figures use the median and leave these out."
    if launches:
        note = (
            f"{_slowest(launches, s)} A kernel launch this slow is lazy module loading on a kernel's first use (CUDA "
            "loads a kernel's module when it first runs: CUDA_MODULE_LOADING=LAZY, the default since CUDA 11.7), or "
            "a launch blocked behind a full launch queue. Warm up before profiling (tracetui profile --warmup), or "
            f"set CUDA_MODULE_LOADING=EAGER to confirm: the cost moves to startup. {tail}"
        )
        out.append(Finding("slow-launch", "Launch calls far slower than the rest", note, [o.event for o in launches]))
    if copies:
        note = (
            f"{_slowest(copies, s)} An async copy this slow is waiting: a copy to or from pageable (not pinned) host "
            "memory runs synchronously, after every kernel queued before it. Pin the host tensors (pin_memory=True, "
            f"and .to(device, non_blocking=True)), or move the copy off the step's critical path. {tail}"
        )
        out.append(Finding("slow-launch", "Copies that wait for the GPU", note, [o.event for o in copies]))
    return out


def _slowest(outliers: list, s: Summary) -> str:
    worst = outliers[0]
    return (
        f"{len(outliers)} call(s) took far longer than the median launch call ({s.median_launch_us:,.1f} us); the "
        f"slowest, {worst.name}, took {took(worst.dur_us)}."
    )


def setup_gap(a: Analysis, s: Summary) -> list[Finding]:
    x = a.trace.x
    never = np.iinfo(np.int64).max
    first_op = subtree_reduce(a.nesting.parent, np.where(x.cat == int(Cat.CPU_OP), x.ts, never), np.minimum)
    gaps: dict[str, list[tuple[int, int]]] = {}
    for i in np.flatnonzero((x.cat == int(Cat.USER_ANNOTATION)) & (first_op < never)).tolist():
        name = a.trace.name_of(i)
        if not name.startswith("ProfilerStep#"):
            gaps.setdefault(name, []).append((i, int(first_op[i] - x.ts[i])))
    hits = [i for found in gaps.values() for i, gap in found if _is_setup(a, i, gap, [g for j, g in found if j != i])]
    note = (
        "The gap between this annotation's start and its first aten op is one-time setup (first-call Python and "
        "framework work: lazy initialization, caches, tracing or compile guards). Later calls do not pay it."
    )
    return [Finding("setup-gap", "Setup before the first op", note, hits)] if hits else []


def _is_setup(a: Analysis, i: int, gap: int, others: list[int]) -> bool:
    if gap < SETUP_MIN_NS or gap < SETUP_SHARE * int(a.trace.x.dur[i]):
        return False
    return not others or gap >= SETUP_VS_OTHERS * statistics.median(others)


COMPILE_NOTES = {
    "Torch-Compiled Region": "the whole call into a torch.compile'd function, guards and all",
    "TorchDynamo Cache Lookup": "Dynamo checking its guards to pick the compiled graph for these inputs",
    "## Call CompiledFxGraph": "the Inductor-compiled graph running (its kernels are below it)",
    "Pregraph bytecode": "Python bytecode Dynamo runs before the compiled graph",
    "AOTDispatcher Runtime Wrapper Prologue": "AOTAutograd's wrapper preparing inputs for the compiled graph",
}


def compile_runtime(a: Analysis, s: Summary) -> list[Finding]:
    out = []
    for prefix, what in COMPILE_NOTES.items():
        hits = _names(a, re.compile("^" + re.escape(prefix)))
        if len(hits):
            note = f"torch.compile runtime: {what}. CPU time here is the price of calling compiled code."
            out.append(Finding("compile-runtime", f"torch.compile: {prefix}", note, hits.tolist()))
    return out


# (rule id, the roles it is about, an extra name pattern or None, the note). Roles come from kernel_roles.py,
# which recognises Triton kernels first: a hand-written Triton kernel named *_flashinfer_* is not attention.
KERNEL_HINTS = [
    (
        "kernel-fp32-gemm",
        ("GEMM",),
        re.compile(r"sgemm(?!.*tensorop)", re.IGNORECASE),
        "FP32 GEMM on CUDA cores ('sgemm'): no tensor cores. bf16/fp16, or TF32 (torch.backends.cuda.matmul."
        "allow_tf32 = True), would use them.",
    ),
    (
        "kernel-tensor-core",
        ("GEMM", "convolution"),
        re.compile(r"s16816|s1688|tensorop|xmma|hmma|wgmma|nvjet|sm90_|sm100_|_MI\d+x\d+", re.IGNORECASE),
        "Tensor-core (matrix-core) kernel (s16816/tensorop/xmma/wgmma/nvjet, MI.. on AMD): the fast path for matrix "
        "multiplies.",
    ),
    (
        "kernel-triton",
        ("triton pointwise", "triton reduction", "triton template (GEMM/conv)", "triton"),
        None,
        "Triton kernel. Inductor names its kernels triton_poi_ (pointwise), triton_red_ / triton_per_ (reduction, "
        "persistent reduction) and triton_tem_ (a GEMM or conv template), then the ops fused into it; other names "
        "are hand-written Triton kernels (vLLM, FlashInfer, your own).",
    ),
    (
        "kernel-attention",
        ("attention",),
        None,
        "Fused attention kernel (FlashAttention 2/3, FlashInfer prefill/decode, memory-efficient, cuDNN SDPA or CK "
        "FMHA): softmax(QK^T)V in one kernel.",
    ),
    (
        "kernel-nccl",
        ("collective",),
        None,
        "Collective communication between GPUs (NCCL/RCCL all-reduce, all-gather, send/recv ...): time here is "
        "communication, or waiting for a slower rank.",
    ),
]


def kernel_hints(a: Analysis, s: Summary) -> list[Finding]:
    gpu = np.flatnonzero(a.trace.x.cat == int(Cat.KERNEL))
    used = np.unique(a.trace.x.name[gpu])
    roles = {int(n): role(a.trace.names[int(n)]) for n in used.tolist()}
    out = []
    for rule_id, wanted, pattern, note in KERNEL_HINTS:
        hit = [n for n, r in roles.items() if r in wanted and (pattern is None or pattern.search(a.trace.names[n]))]
        events = gpu[np.isin(a.trace.x.name[gpu], hit)] if hit else gpu[:0]
        if len(events):
            out.append(Finding(rule_id, "Kernel name: " + rule_id.removeprefix("kernel-"), note, events.tolist()))
    return out


RULES = [
    Rule("final-sync", final_sync),
    Rule("activity-buffer", activity_buffer),
    Rule("occupancy-query", occupancy_query),
    Rule("metadata-op", metadata_ops),
    Rule("bias-copy", bias_copy),
    Rule("cold-start", cold_start),
    Rule("overhead-gaps", overhead_gaps),
    Rule("slow-launch", slow_launch),
    Rule("setup-gap", setup_gap),
    Rule("compile-runtime", compile_runtime),
    Rule("kernel-names", kernel_hints),
]


def explain(a: Analysis, summary: Summary) -> list[Finding]:
    """Every finding of every rule, in rule order."""
    return [f for rule in RULES for f in rule.find(a, summary)]


class NoteIndex:
    """The explain notes of any one event, found by binary search (no dict of every event noted)."""

    def __init__(self, findings: list[Finding]) -> None:
        self.entries = [(np.unique(np.asarray(f.events, np.int64)), f.note) for f in findings if f.events]

    def notes(self, event: int) -> list[str]:
        out = []
        for events, note in self.entries:
            k = int(np.searchsorted(events, event))
            if k < len(events) and events[k] == event:
                out.append(note)
        return out
