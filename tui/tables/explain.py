"""The explain findings as text: each note's templates, filled from the finding's figures at render time."""

from __future__ import annotations

from typing import Any

from ..model.analyses.explain.findings import Figure, Finding, Quantity
from ..model.analyses.explain.rules import KERNEL_HINTS
from ..model.analyses.explain.uses import NEXT
from ..model.words import duration, duration_as, took
from ..text.fmt import fmt_memory, plural, plurals
from ..text.sanitize import visible
from .explain_copies import COPY_TEMPLATES
from .explain_graphs import GRAPH_TEMPLATES
from .explain_roofline import ROOFLINE_TEMPLATES
from .explain_savings import saving_fields

OVERHEAD_TAIL = "The summary's median and average launch call leave these out (its launch CPU total counts them)."
COMPILE_WHAT = {
    "Torch-Compiled Region": "the whole call into a torch.compile'd function, guards and all",
    "TorchDynamo Cache Lookup": "Dynamo checking its guards to pick the compiled graph for these inputs",
    "## Call CompiledFxGraph": "the Inductor-compiled graph running (its kernels are below it)",
    "Pregraph bytecode": "Python bytecode Dynamo runs before the compiled graph",
    "AOTDispatcher Runtime Wrapper Prologue": "AOTAutograd's wrapper preparing inputs for the compiled graph",
}

# Each template is str.format text over a finding's figures. A duration prints as "1,234.5 us" by default
# ({x:.0f} gives "10 us", {x:long} "6.6 ms" or "3.06 s"); a fraction as "30%"; a ratio as "2.5x"; a list
# of quantities as "name (1.0 us), ...". Other figures print as Python formats them ({name:.80} cuts a name);
# {step:in} says " in ProfilerStep#3" of a name, nothing of None; {cpu:~dur} a duration in dur's unit, where the
# two are compared in one sentence (0.87 ms beside 1.09 ms, not 873.5 us).
OWN_TEMPLATES = {
    "final-sync": "The final {call} ({dur}) is the profiler flushing at the end of the window: it waits for every "
    "queued kernel to finish so the GPU timeline is complete. It is not a cost of your code.",
    "activity-buffer": "Activity Buffer Request is profiler overhead: CUPTI allocating a buffer for GPU activity "
    "records. Ignore it when reading the GPU lane.",
    "occupancy-query": "An occupancy query right before a launch is a cuBLAS/cuDNN heuristic asking how many blocks "
    "fit on an SM: the kernel that follows is GEMM- or convolution-style (here: {kernel:.80}).",
    "metadata-op": "This op only changes tensor metadata (shape, strides, a view of the same memory): it launches no "
    "GPU kernel, so it shows on the CPU lane with nothing below it on the GPU.",
    "bias-copy": "This device-to-device copy inside aten::addmm puts the bias into the output buffer; the GEMM that "
    "follows then adds the matrix product on top of it (beta = 1 in its epilogue).",
    "cold-start": "{step} took {dur} until its CPU span ({cpu:~dur}) and its GPU work ({gpu:~dur} busy) both ended: "
    "{ratio} the typical step, {_typical_said}. It is a cold start: first-call allocations, CUDA context and library "
    "setup, autotuning, and the profiler's own first-step cost. Warm up before profiling (tracetui profile --warmup) "
    "or skip more steps in the profiler schedule.",
    "cold-start-cpu": "{step} took {dur}: {ratio} the typical step, {_typical_said}. It is a cold start: first-call "
    "allocations, library setup and lazy initialization, and the profiler's own first-step cost. Warm up before "
    "profiling (tracetui profile --warmup) or skip more steps in the profiler schedule.",
    "overhead-idle": "The GPU is idle {idle} of the window.",
    "overhead-path": "CPU work is {path_cpu} of the critical path of {window}: the GPU waits for the CPU.",
    "overhead-evidence": "Evidence: {gaps:,} gaps of more than {gap_min:.0f} between kernels add up to {gaps_total}; "
    "the longest is {longest} (the kernels after the {marked} longest gaps are marked on the timeline).",
    "overhead-one-gap": "Evidence: one gap of more than {gap_min:.0f} between kernels, {longest} (the kernel after it is "
    "marked on the timeline).",
    "overhead-no-gap": "No single gap stands out: the GPU idles in many short gaps between kernels.",
    "overhead-launches": "Each of the {launches:,} launches{launch_step:in} buys {per_launch_gpu} of GPU work but costs {launch_step:whose} "
    "{per_launch_cpu} of CPU work on its critical path (the launch call itself takes {call_cpu}, median "
    "{median_call}): the CPU cannot launch fast enough.",
    "overhead-cpu": "Launch calls are not the cost (each takes {call_cpu} and buys {per_launch_gpu} of GPU work), the "
    "CPU's other work is: {per_launch_cpu} of it per launch on the critical path; across the profiled window, while no "
    "GPU worked, the CPU ran {cpu_while_idle}. Speed that work up, move it off the critical path, or overlap it with GPU work.",
    "overhead-one-time": "Of that CPU work, {one_time} is {one_time_calls} launch call(s) far slower than the rest "
    '(see "Launch calls far slower than the rest": a kernel\'s first use, which a warm step does not pay, or a '
    "full launch queue).",
    "overhead-cpu-unseen": "Launch calls are not the cost (each takes {call_cpu} and buys {per_launch_gpu} of GPU "
    "work), the CPU's other work is: {per_launch_cpu} of it per launch on the critical path, outside the profiled ops. "
    "Speed that work up, move it off the critical path, or overlap it with GPU work.",
    "slow-kernel": "{calls} call(s) took far longer than the median launch call ({median_launch}); the slowest, "
    "{slowest}, took {slowest_dur:long}. A kernel launch this slow is lazy module loading on a kernel's first use "
    "(CUDA loads a kernel's module when it first runs: CUDA_MODULE_LOADING=LAZY, the default since CUDA 11.7), or a "
    "launch blocked behind a full launch queue. Warm up before profiling (tracetui profile --warmup), or set "
    "CUDA_MODULE_LOADING=EAGER to confirm: the cost moves to startup. " + OVERHEAD_TAIL,
    # HIP defers loading a kernel's code object to its first launch unless HIP_ENABLE_DEFERRED_LOADING=0 (ROCm/clr,
    # hipamd/src/hip_platform.cpp, __hipRegisterFunction: the variable defaults to 1; at 0 each kernel is loaded
    # on every device when it is registered, at startup). CUDA_MODULE_LOADING means nothing to the HIP runtime.
    "slow-kernel-hip": "{calls} call(s) took far longer than the median launch call ({median_launch}); the slowest, "
    "{slowest}, took {slowest_dur:long}. A kernel launch this slow is lazy code object loading on a kernel's first "
    "use (HIP loads a kernel's code object when it is first launched: HIP_ENABLE_DEFERRED_LOADING=1, the default), "
    "or a launch blocked behind a full launch queue. Warm up before profiling (tracetui profile --warmup), or set "
    "HIP_ENABLE_DEFERRED_LOADING=0 to confirm: the cost moves to startup. " + OVERHEAD_TAIL,
    "slow-copy": "{calls} call(s) took far longer than the median launch call ({median_launch}); the slowest, "
    "{slowest}, took {slowest_dur:long}. An async copy this slow is waiting: a copy to or from pageable (not pinned) "
    "host memory runs synchronously, after every kernel queued before it. Pin the host tensors (pin_memory=True, and "
    ".to(device, non_blocking=True)), or move the copy off the step's critical path. " + OVERHEAD_TAIL,
    "records-missing": "The trace made {launches:,} launches ({flows:,} launch-to-device flows point at device "
    "work) but recorded no device activity: no kernel, memcpy or memset record. It is a GPU run whose device records "
    "were lost, so nothing here can say how busy the GPU was. Likely causes: the profiler ran "
    "without ProfilerActivity.CUDA for the device side, CUPTI could not start (another profiler such as Nsight or "
    "DCGM held it, or profiling is restricted to admin users: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES), or the run ended "
    "before the device buffers were flushed. Profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], "
    "look for CUPTI errors in the run's log, and let the profiler stop normally.",
    "cpu-in-ops": "{lead} Ops run {share} of the {window} window, so their own "
    "work is the cost; the most self time: {top}. Make those ops cheaper (fewer or larger calls, a better algorithm, "
    "torch.compile to fuse them).",
    "cpu-in-small-ops": "{lead} Ops run {share} of the {window} window, but "
    "{short_share} of the aten ops' own time is in calls of under {short_call} each ({op_avg} on average), so fixed "
    "per-op costs (dispatch, Python) are much of it; the most own time in such calls: {short_top}; the most in all: "
    "{top}. Bigger tensors per call, fewer small ops, or torch.compile would help.",
    "cpu-also-between": "The other {between_share} of the window ({between}) is between the ops: Python and framework "
    "code the profiler does not record as ops. {python}",
    "cpu-between-ops": "{lead} Ops run only {share} of the {window} window: most of the time is between them (Python, "
    "data loading, framework code the profiler does not record as ops). The most self time inside ops: {top}. "
    "{python}",
    "records-missing-cut": "The trace made {launches:,} launches ({flows:,} launch-to-device flows point at device "
    "work) but recorded no device activity: no kernel, memcpy or memset record. The file is cut short, and torch "
    "writes the GPU records after the CPU ones: they are most likely in the lost part. Open the whole file (let the "
    "profiler finish writing it, or copy it again).",
    "records-missing-ranges": "The trace made {launches:,} launches but recorded no kernel, memcpy or memset: it "
    "is a CUPTI range-profiler capture ({ranges:,} cuda_profiler_range events carry hardware counters per range), a "
    "mode that records counters instead of kernel records: the GPU ran, its kernels are not listed. Profile again "
    "without profiler_metrics in experimental_config to see the kernels and their times.",
    "sync-records": "The cuda_sync records are CUPTI's synchronization activity, each on the lane of the stream it "
    "concerns (stream -1: the whole device):",
    "sync-context": "{context:,} Context Sync: cudaDeviceSynchronize, the CPU waits for all work on the device.",
    "sync-stream": "{stream:,} Stream Sync: cudaStreamSynchronize, the CPU waits for one stream (.item() and .cpu() "
    "do this).",
    "sync-event": "{event:,} Event Sync from cudaEventSynchronize: the CPU waits for an event recorded on a stream.",
    "sync-poll": "{poll:,} Event Sync from cudaEventQuery: a poll that returns at once (event.query(), or the "
    "caching allocator checking whether memory used on another stream is free yet); the CPU does not wait.",
    "sync-wait-event": "{wait_event:,} Stream Wait Event: cudaStreamWaitEvent, one stream waits on the GPU for an "
    "event of another, so its work runs after that event; the CPU does not wait.",
    "cpu-wait": "{call} holds the CPU for {dur} inside {step} ({share:.1%} of the step): the CPU waits there until "
    "the GPU has finished the work queued before it, and queues no new work meanwhile.",
    "cpu-wait-op": "It comes from {op}.",
    "cpu-wait-op-inner": "It comes from {op}, through {inner}.",
    "cpu-wait-frame": "It is called from {frame}.",
    "cpu-wait-more": "{waits:,} such waits inside steps add up to {total} (the longest: {longest}); all are marked.",
    "cpu-wait-advice": "Reading a GPU value on the CPU (.item(), .cpu(), .tolist(), printing a tensor, an if on a "
    "tensor) or an explicit torch.cuda.synchronize() forces this wait. Keep values on the GPU, read them once per "
    "step or less, or copy them with .to('cpu', non_blocking=True) into pinned memory and read them later.",
    "setup-gap": "{span} ran {gap} from its start to its first aten op, {gap_share} of its {span_dur}{longest}: "
    "one-time setup (first-call Python and framework work: lazy initialization, caches, tracing or compile guards). "
    "Later calls do not pay it.",
    "kernel-fp32-gemm": "fp32 GEMM or convolution on the CUDA cores (its name says so: sgemm, ffma, simt, scudnn, "
    "gemv; or an AMD Tensile kernel without an MFMA instruction): no tensor cores.",
    "see/roofline-fp32-gemm": "What they cost and what to do: the finding '{_see}'.",
    "kernel-half-cuda-core": "bf16/fp16 GEMM or convolution on the CUDA cores (its name says sgemm, simt or gemv; its "
    "template arguments say bf16/fp16): the data is already half precision, yet the library picked a kernel without "
    "tensor cores. cuDNN and cuBLAS do for shapes their tensor-core kernels do not take: channel counts or "
    "dimensions not multiples of 8, tiny batches, a layout they have no such kernel for.",
    "kernel-layout-transpose": "cuDNN's layout transpose (nchwToNhwc, nhwcToNchw): the model's tensors are "
    "channels-first (NCHW), its chosen kernels work channels-last, so cuDNN copies each tensor to NHWC and back "
    "around the convolution.",
    "kernel-tensor-core": "Tensor-core (matrix-core) kernel (its name says so: hmma, s16816/s1688 shapes, tensorop, "
    "xmma, wgmma, nvjet, FlashAttention/FMHA; MFMA or xdlops on AMD): the fast path for matrix multiplies.",
    "kernel-triton": "Triton kernel. Inductor names its kernels triton_poi_ (pointwise), triton_red_ / triton_per_ "
    "(reduction, persistent reduction) and triton_tem_ (a GEMM or conv template), then the ops fused into it; other "
    "names are hand-written Triton kernels (vLLM, FlashInfer, your own).",
    "kernel-attention": "Fused attention kernel (FlashAttention 2/3, FlashInfer prefill/decode, memory-efficient, "
    "cuDNN SDPA or CK FMHA): softmax(QK^T)V in one kernel.",
    "no-kernel": "{calls:,} collective call(s) ({names}) launched no collective kernel: no data moved between GPUs on "
    "the device, and their {cpu} are CPU time.",
    "no-kernel-one-rank": "The process group has one rank (world size {world_size}): there is nothing to exchange, so "
    "the backend returns without launching anything. The run looks distributed and is not: its communication cost is "
    "not measured here. Profile with the ranks you train with to see it, or leave the collectives out on one GPU.",
    "no-kernel-host": "The {backend} backend moves CUDA tensors through the host: {copies:,} copies to and from the GPU "
    "under the calls, the reduction on the CPU. For GPU tensors use NCCL (torch.distributed.init_process_group('nccl')).",
    "no-kernel-unknown": "Neither a one-rank group nor a host backend is recorded (distributedInfo): look at the process "
    "group's size and backend.",
    "kernel-nccl": "Collective communication between GPUs (NCCL/RCCL all-reduce, all-gather, send/recv ...): time "
    "here is communication, or waiting for a slower rank.",
}
COMPILE_TEMPLATES = {
    f"compile-runtime/{prefix}": f"torch.compile runtime: {what}. CPU time here is the price of calling compiled code."
    for prefix, what in COMPILE_WHAT.items()
}
COMPILING_TEMPLATES = {
    "compiling": "torch.compile compiled for {us:long} of the {wall:long} window ({share}): {frames:,} frame compile(s), "
    "{graphs:,} compiled graph(s) called. Compiling is paid once per shape, before the compiled code runs: a window "
    "that holds it measures the compiler, not the model.",
    "compiling-recompiles": "{recompiles:,} of the frame compiles are recompiles: a guard failed (a new input shape, "
    "dtype or Python value), so Dynamo compiled the frame again. torch._logging.set_logs(recompiles=True) says which "
    "guard; mark changing sizes dynamic (torch._dynamo.mark_dynamic) or pad them to a few sizes.",
    "compiling-steps": "{steps:,} step(s) compiled: they are left out of the typical step, as a cold first step is. "
    "Profile after warm-up steps (a schedule with warmup, or tracetui profile --warmup).",
}
QUEUE_TEMPLATES = {
    "queue-empty": "{stream}'s launch queue is always empty: {idle} of its {activities:,} device activities ({share} of "
    "the launched device time) were launched onto an idle stream, never more than {max_length:,} waiting at once, "
    "{median_latency:.1f} from launch call to start (median). The CPU cannot keep the GPU fed: each kernel waits for "
    "its launch and the GPU idles between them.",
    "queue-full": "{stream}'s launch queue is always full: up to {max_length:,} launches wait to start, and the queue "
    "is at least half that deep {full} of the time (mean {mean_length:.0f}; {median_latency:long} from launch call to "
    "start, median). The CPU runs far ahead and waits on the full queue: launch calls block until a slot frees, so "
    "the GPU's own work bounds the run; make the kernels faster, not the launches.",
}
# What comes next, from what the run already uses (explain/uses.py: the sentences the overview and critical share)
NEXT_TEMPLATES = {f"next/{key}": text for key, text in NEXT.items()}
TEMPLATES = (
    OWN_TEMPLATES | COMPILE_TEMPLATES | COMPILING_TEMPLATES | GRAPH_TEMPLATES | ROOFLINE_TEMPLATES | QUEUE_TEMPLATES
)
TEMPLATES |= NEXT_TEMPLATES
TEMPLATES |= COPY_TEMPLATES


# What each rule's events are, as a finding's heading counts them: "(15 calls of aten::mm, aten::gelu)".
COUNTED = {
    **dict.fromkeys(
        ["cpu-time", "metadata-op", "graph-input-copies", "collective-no-kernel", "cpu-waits", "final-sync"], "call"
    ),
    **dict.fromkeys(["roofline-gemm", "roofline-memory", "roofline-fp32-gemm", "roofline-tiny-gemm"], "call"),
    **dict.fromkeys(["slow-launch", "occupancy-query", "records-missing", "graph-launches"], "call"),
    "graph-capture-in-window": "call",  # (the calls that begin a capture)
    **dict.fromkeys([rule for rule, _ in KERNEL_HINTS], "kernel"),
    **dict.fromkeys(["graph-uncredited", "launch-queue"], "activity"),  # (kernels, copies and sets alike)
    **dict.fromkeys(["slow-copies", "bias-copy"], "copy"),
    **dict.fromkeys(["compiling", "compile-runtime", "setup-gap", "activity-buffer"], "span"),
    "sync-records": "record",
    "cold-start": "step",
    "overhead-gaps": "gap",  # (the kernels after the longest gaps are marked: the note says so)
}
_NOUNS = {  # a noun: its plural, and what leads from the count to the events' names ("": none named)
    "call": ("calls", " of "),
    "copy": ("copies", " of "),
    "span": ("spans", " of "),
    "record": ("records", " of "),
    "kernel": ("kernels", ": "),
    "activity": ("activities", ": "),
    "step": ("steps", ": "),
    "event": ("events", ": "),
    "gap": ("gaps", ""),  # (the kernel after the longest is named: counted)
}


def counted(f: Finding, names: list[str]) -> str:
    """What a finding's heading says of its events: how many, what they are (COUNTED), and the names given (those
    of the events, as many as the heading has room for): "15 calls of aten::mm, aten::gelu", "1 step: ProfilerStep#2",
    "1,089 gaps, the longest before Kernel2<…>(…)" (a gap's events are the kernels after the longest, longest first)."""
    noun = COUNTED.get(f.rule, "event")
    many, lead = _NOUNS[noun]
    said = plural(f.count, noun, many)
    if noun == "gap" and names:
        return f"{said}, {'the longest ' if f.count > 1 else ''}before {names[0]}"
    return f"{said}{lead}{', '.join(names)}" if names else said


class Shown:
    """One figure as a template prints it (its format spec read by unit; the note's other figures for {x:~y})."""

    def __init__(self, figure: Figure, figures: dict[str, Figure] | None = None) -> None:
        self.figure, self.figures = figure, figures or {}

    def __format__(self, spec: str) -> str:
        f = self.figure
        if spec.startswith("~"):  # in the unit of a comparable figure of the same sentence: 0.87 ms beside 1.09 ms
            like = self.figures[spec[1:]]
            assert isinstance(f, Quantity) and isinstance(like, Quantity), spec
            return duration_as(f.value, like.value)
        if spec == "in":  # where, after what it says of: " in ProfilerStep#3" (None: nowhere to name)
            return f" in {visible(str(f))}" if f is not None else ""
        if "|" in spec:  # a word that agrees with a count: {rows:runs|run} says runs of 1, run of any other
            one, many = spec.split("|", 1)
            return one if (f.value if isinstance(f, Quantity) else f) == 1 else many
        if spec == "whose":  # what a step's figure is of: "the step", or "the window" where no step is read (None)
            return "the step" if f is not None else "the window"
        if spec == "size":  # bytes, as every size tracetui prints (KiB, MiB, GiB)
            return fmt_memory(int(f.value if isinstance(f, Quantity) else f))  # type: ignore[arg-type]
        if isinstance(f, list):  # names in prose: shown as data (a newline of theirs would split the line)
            return ", ".join(f"{visible(q.label)} ({Shown(q):{spec}})" for q in f)
        if not isinstance(f, Quantity):
            return visible(format(f, spec))
        if f.unit == "us":
            if spec == "long":
                return took(f.value)
            return f"{f.value:{spec}} us" if spec else duration(f.value)
        if f.unit == "fraction":
            return f"{f.value:{spec or '.0%'}}"
        if f.unit == "x":
            return f"{f.value:{spec or '.1f'}}x"
        return f"{f.value:{spec}} {f.unit}".rstrip()


def note(f: Finding) -> str:
    """The finding's note: its templates filled with its figures, in order."""
    shown = {k: Shown(v, f.figures) for k, v in f.figures.items()}
    return plurals(" ".join(TEMPLATES[t].format_map(shown) for t in f.templates))


def figure_json(figure: Figure) -> Any:
    """A figure for JSON: {"value": 14102.5, "unit": "us"} (a label when it names what it is of), lists of those,
    or the plain number or name."""
    if isinstance(figure, list):
        return [figure_json(q) for q in figure]
    if isinstance(figure, Quantity):
        return {"value": figure.value, "unit": figure.unit} | ({"label": figure.label} if figure.label else {})
    return figure


def fields(f: Finding, examples: list[str]) -> dict[str, Any]:
    """A finding as JSON: its rule, title, figures as numbers, the note as text, its events' count and examples, and
    what its fix would buy (saving_us, what_if; explain_savings.py)."""
    return {
        "rule": f.rule,
        "title": f.title,
        "figures": {k: figure_json(v) for k, v in f.figures.items() if not k.startswith("_")},  # _: words
        "note": note(f),
        "count": f.count,
        "examples": examples,
    } | saving_fields(f)
