"""The critical path: its JSON document, bars, the top of the path, advice, notes and what-if sentences, defined once.

critical_document() is the one entry point the command line, the Python API and the MCP server share: it
returns exactly what `tracetui critical --format json` prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..model.analyses import critical as model
from ..model.analyses.critical import (
    CLASSES,
    CriticalPath,
    Spec,
    WhatIf,
    WhatIfError,
    critical_path,
    find_window,
    parse_spec,
)
from ..model.analyses.critical.classes import BLOCKING_COPY, is_blocking
from ..model.analyses.critical.groups import PathGroup, has_frames, path_groups
from ..model.analyses.critical.ranks import JobPath, job_path
from ..model.analyses.critical.replay import ALREADY
from ..model.analyses.explain.uses import Uses, next_words
from ..model.analyses.kernel_select import parse as selector
from ..model.analyses.results import Results
from ..model.analyses.verdict import cpu_word, path_reason, verdict_words
from ..model.steps import STEP_NAME
from ..model.words import UNIT_US, duration, duration_as, saving_said
from ..text.names import short_name, shorten_names
from ..text.sanitize import visible

TITLES = {
    "cpu_bound": "CPU work",
    "gpu_compute_bound": "GPU compute",
    "gpu_communication_bound": "GPU communication",
    "gpu_memcpy_bound": "GPU copies",
    "gpu_kernel_launch_overhead": "Launch delays",
    "gpu_kernel_kernel_overhead": "Gaps between kernels",
    "data_loading": "Data loading",
    "idle": "Nothing recorded",
    "sync": "Back from a wait",
    "compiling": "Compiling",
    "communication": "CPU in collectives",
}
THROUGH = {  # "the path then runs through ..."
    "cpu_bound": "the CPU",
    "gpu_compute_bound": "GPU compute",
    "gpu_communication_bound": "collectives",
    "gpu_memcpy_bound": "copies",
    "gpu_kernel_launch_overhead": "launch delays",
    "gpu_kernel_kernel_overhead": "gaps between kernels",
    "data_loading": "data loading",
    "idle": "unrecorded time",
    "sync": "returns from waits on the device",
    "compiling": "torch.compile compiling",
    "communication": "the CPU inside collective calls",
}
ADVICE_MIN = 0.05  # a class gets a line of advice from this share of the path on
EMPTY_MIN = 0.9  # a window whose own span, with nothing recorded in it, holds this share of its path is empty
TOP = 10  # items of the path listed, the most time first
# Advice per class: {share} of the path, {time} on it, {top} its leading items.
ADVICE = {
    "cpu_bound": "CPU work is {share} of the path ({time}); the GPU waits for it. Most of it: {top}. Cut Python "
    "and per-op overhead: torch.compile, CUDA graphs, fewer and larger ops.",
    "gpu_compute_bound": "GPU compute is {share} of the path ({time}): faster kernels shorten the step. Most of "
    "it: {top}. See how close they run to the GPU's roofs (tracetui roofline); bf16/tf32 and fusion "
    "(torch.compile) help.",
    "gpu_communication_bound": "Collectives are {share} of the path ({time}): {top}. Overlap them with compute "
    "(DDP bucket size, FSDP prefetch), or find the slow rank they wait for (tracetui ranks).",
    "gpu_memcpy_bound": "Copies are {share} of the path ({time}): {top}. Pin host memory and copy with "
    "non_blocking=True; keep data on the GPU.",
    "gpu_kernel_launch_overhead": "Kernels wait for their launch for {share} of the path ({time}): the CPU cannot "
    "keep the GPU fed. CUDA graphs (torch.compile mode='reduce-overhead') or fewer, larger kernels.",
    "gpu_kernel_kernel_overhead": "Gaps between kernels are {share} of the path ({time}): many short kernels back "
    "to back, or kernels waiting on other streams. Fuse them (torch.compile).",
    "data_loading": "Data loading is {share} of the path ({time}): {top}. More DataLoader workers, "
    "pin_memory=True, prefetching.",
    "idle": "{time} of the path ({share}) has nothing recorded on it: no thread or stream of the trace "
    "explains that stretch.",
    "sync": "The CPU coming back from waits on the device is {share} of the path ({time}): {top}. The waits "
    "themselves follow the device work they waited for; fewer synchronizations (no .item(), .cpu() or printing "
    "of GPU values inside the step) let the CPU run ahead.",
    "compiling": "torch.compile compiling is {share} of the path ({time}): {top}. It is paid once per shape: "
    "profile after warm-up steps, and mark changing sizes dynamic (or pad them) to avoid recompiles.",
    "communication": "The CPU inside collective calls is {share} of the path ({time}): {top}. There it runs the "
    "collective (gloo), launches it (NCCL) or waits for the other ranks: the slowest rank sets the pace (tracetui "
    "ranks on the job's folder finds it); overlap communication with compute (DDP bucket size, gradient "
    "accumulation with no_sync, FSDP prefetch).",
}
# Launch delays held mostly by a few long waits: the calls were made, so the CPU was not what the device waited for.
LONG_LAUNCH_WAIT_NS = 1_000_000  # a launch delay this long is no launch's latency (a few to tens of us)
LONG_LAUNCH_ADVICE = (
    "Device work waits for its launch for {share} of the path ({time}), most of it in {n} wait{s} of over 1 ms: the "
    "longest, {top}, started {longest} after its launch call. The call had been made, so the CPU is not what it "
    "waited for: something the trace does not show held the device (a wait on another stream's event, another "
    "process's work, the profiler's device tracing starting late). See what ran on the GPU then (Nsight Systems, "
    "nvidia-smi)."
)
# A capture without device activity: the CPU advice is about CPU work (no GPU waits for it).
CPU_ONLY_ADVICE = (
    "CPU work is {share} of the path ({time}): with no device activity recorded, the step lasts as long as its CPU "
    "work. Most of it: {top}. Make that work cheaper: fewer and larger ops, less Python per op, torch.compile, "
    "intra-op threads (torch.set_num_threads)."
)
NOTES = {  # {s}: a plural's s; {activities}, {have}, {they}, {their}, {start}, {are}: the words that agree with n
    "job_rank": "a job of several ranks: this is the path of rank {n}",
    "device_records_missing": "the trace made {n:,} launch call{s} but recorded no device activity: the path is "
    "CPU only, and every wait on the GPU counts as CPU time",
    "cpu_only": "no device activity: the path runs through the CPU threads",
    "graph_replays": "{n:,} graph replay{s}: {their} kernels run in order on {their} streams after the graph launch",
    "unlinked_device": "{n:,} device {activities} {have} no launch call recorded: {their} stream alone explains "
    "{their} start",
    "syncs_inferred": "{n:,} synchronize call{s} {have} no cuda_sync record: what {they} waited for is inferred from "
    "{their} own span{s} (the records are opt-in, torch 2.2 and later: pass "
    "experimental_config=_ExperimentalConfig(enable_cuda_sync_events=True) to torch.profiler.profile, after "
    "from torch._C._profiler import _ExperimentalConfig)",
    "hidden_waits": "{n:,} hidden wait{s} (CPU time inside an op that ends when the device has finished the work "
    "queued before it, with no synchronize recorded: a spin on host memory, a .item() inside a library): the path "
    "follows the device work {they} waited for, and only the CPU's time after it is back from a wait",
    "final_sync": "the profiler's final synchronize (torch.autograd.profiler's exit waits for the device before the "
    "profiler stops) waits for the device work still running: that work is on the path, as the run waited for it",
    "launch_skew": "{n:,} device {activities} {start} before {their} launch call{s} (the GPU's clock runs ahead): "
    "{their} launch edge{s} {are} left out",
}


def _note(code: str, n: int) -> str:
    """A caveat's note, its words agreeing with its count (1 synchronize call has, 2 synchronize calls have)."""
    one = n == 1
    words = {
        "s": "" if one else "s",
        "activities": "activity" if one else "activities",
        "stretches": "stretch" if one else "stretches",
        "have": "has" if one else "have",
        "they": "it" if one else "they",
        "them": "it" if one else "them",
        "their": "its" if one else "their",
        "start": "starts" if one else "start",
        "end": "ends" if one else "end",
        "are": "is" if one else "are",
    }
    return NOTES[code].format(n=n, **words)


WHATIF_NOTES = {
    "graph_syncs": "the region holds {n:,} blocking call{s} (a synchronize, a copy to the host): a CUDA graph cannot "
    "capture {them}, so the prediction keeps {their} waits; take {them} out of the region before capturing it",
    "replay_cpu_trace_trees": "each replay costs {us} of CPU, as this trace's own reduce-overhead replays do",
    "replay_cpu_trace": "each replay costs {us} of CPU, this trace's median graph launch",
    "replay_cpu_trees": "each replay costs {us} of CPU: a warm call of torch.compile's CUDA-graph trees (mode="
    "'reduce-overhead') measured on an H200; inputs that are not parameters or buffers are also copied into the "
    "graph's memory before each replay, which the prediction leaves out",
    "replay_cpu_launch": "each replay costs {us} of CPU (one cudaGraphLaunch; the trace has none to measure)",
    "one_time_launches": "{us} of the recorded path is launch calls far slower than the rest (lazy module loading "
    "on a kernel's first use, or a full queue): a replay takes {them} away, but a warm step pays none of it without "
    "graphs either; profile after a warm-up (tracetui profile --warmup) to see what graphs buy a warm step",
    "already_replayed": "already replayed: {n:,} graph launch{es} in the region: that work runs from CUDA graphs "
    "now, so it is left as recorded (its launch delays and replays' CPU are what a replay costs)",
}


@dataclass
class Report:
    """A critical path, and the what-if on it if one was asked for; on a folder of ranks, the job's paths too
    (path is then the path of the rank that bounds the job's step)."""

    path: CriticalPath
    whatif: WhatIf | None = None
    job: JobPath | None = None


def compute(
    results: Results,
    *,
    step: int | None = None,
    annotation: str | None = None,
    instance: int = 0,
    what_if: Sequence[str | Spec] = (),
) -> Report:
    """The path of the window asked for (the cached default without one), and the what-if if specs are given."""
    specs = [parse_spec(s) if isinstance(s, str) else s for s in what_if]
    if results.trace.job:
        if specs:
            raise WhatIfError("--what-if works on one rank's path: give that rank's trace file")
        if step is None and annotation is None:  # the typical step, as the summary's verdict reads it
            typical = STEP_NAME.match(results.typical_window.name)
            step = int(typical.group(1)) if typical else None
        job = job_path(results, results.graph_owner, step, annotation, instance)
        return Report(job.paths[job.bound_rank], job=job)
    if step is None and annotation is None and not specs:
        return Report(results.critical)
    asked = step is not None or annotation is not None
    window = find_window(results.trace, step, annotation, instance) if asked else results.typical_window
    if not specs:
        return Report(critical_path(results, window, results.graph_owner))
    found = model.what_if(results, window, specs, results.graph_owner)
    return Report(found.before, found)


def critical_document(
    results: Results,
    *,
    step: int | None = None,
    annotation: str | None = None,
    instance: int = 0,
    what_if: Sequence[str | Spec] = (),
) -> dict[str, Any]:
    """Exactly what `tracetui critical --format json` prints (WindowError, WhatIfError: bad usage)."""
    report = compute(results, step=step, annotation=annotation, instance=instance, what_if=what_if)
    return document(report, results)


def document(report: Report, results: Results, python_frames: bool = False) -> dict[str, Any]:
    if report.job is not None:
        return job_document(report.job, results, python_frames)
    return path_document(report, results, python_frames)


def job_document(job: JobPath, results: Results, python_frames: bool = False) -> dict[str, Any]:
    """A folder of ranks: each rank's path and its waits, and the rank that bounds the job's step."""
    held = job.held_ns()
    bound = job.bound_rank
    own = job.own_breakdown(bound)
    return {
        "window": job.window,
        "ranks": [
            {
                "rank": r,
                **path_document(Report(p), results, python_frames),
                "waits": [
                    {
                        "for_rank": w.for_rank,
                        "collective": w.collective,
                        "id": w.event,
                        "wait_us": us(w.wait_ns),
                        "on_path_us": us(w.on_path_ns),
                    }
                    for w in job.waits
                    if w.rank == r
                ],
            }
            for r, p in job.paths.items()
        ],
        "left_out": [{"rank": r, "why": why} for r, why in job.left_out.items()],
        "job": {
            "bound_rank": bound,
            "bound_by": max(own, key=lambda c: own[c]),
            "held_us": {str(r): us(ns) for r, ns in held.items()},
            "matched_by": job.matched_by,
            "verdict": job_verdict(job),
        },
    }


def path_document(report: Report, results: Results, python_frames: bool = False) -> dict[str, Any]:
    """One path as the text report says it (verdict, breakdown, grouped table, advice, notes, what-if), with every
    stretch of it; python_frames as the command's flag (else each frame's time is its op's group's)."""
    p = report.path
    groups, folded = shown_groups(results, p, python_frames)
    doc: dict[str, Any] = {
        "window": {"name": p.window, "start_us": us(p.start_ns), "end_us": us(p.end_ns)},
        "length_us": us(p.length_ns),
        "verdict": verdict_line(results, p).removeprefix("Verdict: "),
        "breakdown": {c: us(p.breakdown.get(c, 0)) for c in CLASSES},
        "groups": [group_fields(g, p) for g in groups],
        "python_frames_folded": folded,
        "advice": advice(p, groups, results.uses),
        "path": [
            {
                "id": it.event,
                "name": it.name,
                "kind": it.kind,
                "start_us": us(it.start_ns),
                "dur_us": us(it.dur_ns),
                "bound_by": it.bound_by,
                "waits_for": it.waits_for,
            }
            for it in p.items
        ],
        "notes": notes(p),
    }
    if report.whatif is not None:
        doc["what_if"] = whatif_fields(report.whatif)
    return doc


def us(ns: int) -> float:
    return round(ns / 1000.0, 3)


def group_fields(g: PathGroup, p: CriticalPath) -> dict[str, Any]:
    """A row of the grouped table (tables/critical_path.py's columns) as numbers."""
    return {
        "name": g.name,
        "label": group_label(g),
        "kind": g.kind,
        "time_us": us(g.dur_ns),
        "share": g.dur_ns / p.length_ns if p.length_ns else 0.0,
        "calls": g.calls,
        "bound_by": g.bound_by,
        "python_frames_us": us(g.python_ns),
    }


def notes(p: CriticalPath) -> list[str]:
    out = [_note(code, n) for code, n in p.caveats if code in NOTES]
    out += hidden_wait_notes(p)
    after = p.end_ns - p.span_end_ns
    if p.event >= 0 and after > 0:
        out.insert(
            0, f"the device work launched in {p.window} ends {when(after)} after its CPU side: the path covers it"
        )
    return out


HIDDEN_NAMED = 3  # the hidden waits on the path named in the notes, the longest first
NAME_LIMIT = 60  # a kernel's name in a note, folded to this many characters


def hidden_wait_notes(p: CriticalPath) -> list[str]:
    """A line per hidden wait on the path (the longest first): the op and the device work it waited for. A hidden
    wait's stretch is kind sync on an op, not on a blocking call, and the path reaches it from that device work."""
    found: dict[tuple[str, str], int] = {}
    for before, it in zip(p.items, p.items[1:], strict=False):
        hidden = it.kind == "sync" and not is_blocking(it.name) and not BLOCKING_COPY.search(it.name)
        if hidden and before.kind in ("kernel", "memcpy", "memset"):
            work = short_name(before.name, NAME_LIMIT)
            key = (it.name, f"{work} ({it.waits_for})" if it.waits_for else work)
            found[key] = found.get(key, 0) + before.dur_ns
    top = sorted(found.items(), key=lambda kv: -kv[1])[:HIDDEN_NAMED]
    return [f"hidden wait: {op} waits for {work}, {when(ns)} of it on the path" for (op, work), ns in top]


def whatif_fields(w: WhatIf) -> dict[str, Any]:
    a = w.after
    return {
        "specs": [s.text for s in w.specs],
        "matched": w.matched,
        "length_us": us(a.length_ns),
        "saving_us": us(w.saving_ns),
        "saving_share": w.saving_ns / w.before.length_ns if w.before.length_ns else 0.0,
        "breakdown": {c: us(a.breakdown.get(c, 0)) for c in CLASSES},
        "bound_by": a.bound_by,
        "sentence": sentence(w),
        "notes": whatif_notes(w),
    }


def whatif_notes(w: WhatIf) -> list[str]:
    """What a what-if could not model, and where its figures come from."""
    return caveat_notes(w.caveats)


def caveat_notes(caveats: list[tuple[str, int]], only: tuple[str, ...] = ()) -> list[str]:
    """The notes of a what-if's caveats (only: these codes)."""
    one = {"s": "", "es": "", "them": "it", "their": "its"}
    many = {"s": "s", "es": "es", "them": "them", "their": "their"}
    return [
        WHATIF_NOTES[code].format(n=n, us=when(n), **(one if n == 1 else many))
        for code, n in caveats
        if code in WHATIF_NOTES and (not only or code in only)
    ]


def verdict_line(results: Results, p: CriticalPath) -> str:
    """Verdict: overhead-bound: CPU work ... hold 97% of the path: the one verdict; on the summary's own window
    (the typical step, or the whole trace) the summary's verdict and reason, word for word."""
    s = results.summary
    if s.path.length_us > 0 and p.event == s.path.event and p.window == s.path.window:
        return f"Verdict: {s.verdict}: {path_reason(s)} (the summary's verdict)"
    words = verdict_words({c: float(ns) for c, ns in p.breakdown.items() if ns > 0}, s.cpu_only, cpu_word(s))
    return f"Verdict: {words}"  # a CPU-only rank in the summary's word, as ranks says it


def when(ns: float) -> str:
    """A duration from nanoseconds, as every sentence says one (words.duration): 12.3 us, 324.9 us, 2.18 ms, 1.23 s.
    (It said 324.9 us as "0.32 ms", beside the verdict's "324.9 us" for the same path.)"""
    return duration(ns / 1000.0)


def sentence(w: WhatIf) -> str:
    """sm90_xmma_gemm… 2× faster saves 0.31 ms of 2.18 ms (14%); the path then runs through the CPU"""
    return said(
        w.specs, w.matched, w.before.length_ns, w.after.length_ns, w.before.bound_by, w.after.bound_by, w.on_path
    )


def said(
    specs: Sequence[Spec],
    matched: Sequence[list[str]],
    before: int,
    after: int,
    old: str,
    new: str,
    on_path: bool | None = None,
) -> str:
    """The what-if sentence from its figures (ns, the classes bounding the path before and after): what the
    critical report prints, and what each explain finding's saving says. on_path: whether what it changes lies on
    the recorded path, which says why it saves nothing (None: the caller says why, as explain does)."""
    saving = before - after
    pairs = list(zip(specs, matched, strict=True))
    if saving == 0 and pairs and all(s.what == "graphs" and names[:1] and _already(names[0]) for s, names in pairs):
        # the region's work runs from CUDA graphs already: nothing to re-simulate
        return f"CUDA graphs: {pairs[0][1][0]}; the step is predicted unchanged ({when(before)})"
    change = " and ".join(_change(s, names) for s, names in zip(specs, matched, strict=True))
    share = f"{saving / before:.0%}" if before else "0%"
    if saving > 0:
        by, of = saving_said(before / 1000.0, after / 1000.0)  # Before - After as the tables print them, in one unit
        effect = f"saves {by} of {of} ({share})"
    elif saving < 0:
        effect = f"costs {_cost(before / 1000.0, after / 1000.0)} (+{share.lstrip('-')})"
    else:
        same = all(sp.factor == 1 and sp.what != "graphs" for sp in specs)  # 1x faster: nothing changed at all
        effect = f"saves nothing of {when(before)}" + (AT_ONE if same else NO_CHANGE.get(on_path, ""))
    through = THROUGH.get(new, new)
    if after <= 0:  # nothing else on the path: no class to run through
        return f"{change} {effect}; the window would take no time: nothing else is on its path"
    tail = (
        f"the path then runs mostly through {through}"
        if new != old
        else f"the path still runs mostly through {through}"
    )
    return f"{change} {effect}; {tail}"


def _cost(before: float, after: float) -> str:
    """55.9 us: 463.0 us instead of 407.1 us, in one unit: the longer one's, or the cost's where it is finer (2.0 us:
    1,522.3 us instead of 1,520.3 us, never 1.52 ms instead of 1.52 ms)."""
    by, then = saving_said(after, before)  # After - Before, in the longer one's unit
    if by.split()[1] == then.split()[1]:
        return f"{by}: {then} instead of {duration_as(before, after)}"
    unit = by.split()[1]
    scale = UNIT_US[unit]
    return f"{by}: {after / scale:,.1f} {unit} instead of {before / scale:,.1f} {unit}"


AT_ONE = ": at 1× nothing changes"  # a what-if at 1x, whatever it touches
NO_CHANGE: dict[bool | None, str] = {  # why a change saves nothing, from whether what it changes is on the path
    False: ": what it changes is not on the critical path",
    True: ": what it changes is on the path, and another path as long takes its place",
}


def _already(name: str) -> bool:
    return name.startswith(ALREADY.split("{", 1)[0])


def _change(s: Spec, names: list[str]) -> str:
    what = _what(s, names)
    if s.what == "graphs" and s.event >= 0:
        return f"{_region(s, names)} as one CUDA graph replay (its CPU work replaced by the replay's)"
    if s.what == "graphs":
        return f"{_region(s, names)} as CUDA graph replays (their CPU work replaced by one replay each)"
    if s.what == "sync":
        return f"without the waits of {what}"
    if s.what == "launch":
        return (
            "no launch overhead (the launch calls and delays gone)" if s.factor == 0 else f"{_times(s.factor)} launches"
        )
    if s.factor == 0:
        return f"without {what}"
    return f"{what} {_times(s.factor)}"


def _region(s: Spec, names: list[str]) -> str:
    """What a graphs what-if replays: the compiled graphs, the forward and backward, or the spans it names."""
    if s.event >= 0 or (s.pattern and len(set(names)) == 1):
        return _cut(names[0]) if names else "the region"
    if s.pattern:
        return f"the spans matching /{s.pattern}/"
    if names and all(n.startswith("## Call CompiledFxGraph") for n in names):
        return "the compiled graphs"
    return "the step (all its CPU work but the optimizer's and data loading)"


def _times(factor: float) -> str:
    if factor >= 1:
        return f"{factor:g}× faster"
    return f"{1 / factor:.3g}× slower"


def _what(s: Spec, names: list[str]) -> str:
    if s.what == "cpu":
        return "CPU"
    one = names[0] if len(names) == 1 else ""
    if s.what == "kernel" and (picked := selector(s.pattern)) is not None:
        return picked.describe()
    if s.what == "kernel":
        return _cut(one) if one else f"kernels matching /{s.pattern}/"
    if s.what == "op":
        return f"{_cut(one) if one else f'ops matching /{s.pattern}/'} (self time)"
    if s.what == "event":
        return _cut(names[0]) if names else "event"
    return _cut(one) if one else f"calls matching /{s.pattern}/"


def _cut(name: str, width: int = 40) -> str:
    name = visible(name)  # a name in prose: its newline would split the line
    return short_name(name, width) if len(name) > width else name


OWN = " (self)"  # a span's own stretch of the path: the time between its ops, as torch's Self CPU counts it
OWN_PYTHON = " (self: its Python)"  # ... mostly the hidden Python frames that ran in it, between its ops


# A device event's group bound by what came before it started is that wait, not the event running: said after its
# name, so that "a kernel, 12.83 ms, Launch delays" is not read as the kernel running that long (its Kind stays
# what the event is: the row is still that kernel's).
BEFORE = {"gpu_kernel_launch_overhead": " (its launch delay)", "gpu_kernel_kernel_overhead": " (the gap before it)"}
DEVICE_KINDS = frozenset({"kernel", "copy", "set"})


def own_tag(g: PathGroup) -> str:
    """What a group's name leaves unsaid, never cut (the name is): a step's or an annotation's group is its self
    time, between its ops (with frames hidden, mostly the Python that ran there says so); a device event's group
    bound by a launch delay or a gap is the time before it started (BEFORE)."""
    if g.kind in DEVICE_KINDS and g.bound_by in BEFORE:
        return BEFORE[g.bound_by]
    if not (g.kind == "annotation" or (g.kind == "op" and STEP_NAME.match(g.name))):
        return ""
    return OWN_PYTHON if 2 * g.python_ns >= g.dur_ns > 0 else OWN


def group_label(g: PathGroup) -> str:
    """A group's name as the table reads it, whole: `ProfilerStep#6 (self)`."""
    return g.name + own_tag(g)


def shown_groups(results: Results, p: CriticalPath, python_frames: bool = False) -> tuple[list[PathGroup], bool]:
    """The path's groups as the `critical` table shows them, the most time first, and whether Python frames were
    folded into their ops (a with_stack trace without python_frames). The table and the advice both read these,
    so the advice never names a row the table hides."""
    folded = not python_frames and has_frames(results.trace, p)
    return path_groups(results.trace, p, results.frameless if folded else None), folded


def cpu_only(p: CriticalPath) -> bool:
    """A path of a capture with no device activity at all."""
    return any(code == "cpu_only" for code, _n in p.caveats)


def advice(p: CriticalPath, groups: Sequence[PathGroup], uses: Uses | None = None) -> list[str]:
    """One line per class with at least ADVICE_MIN of the path, the most first, with its numbers and its leading
    groups (shown_groups: the table's rows, in its words); with what the run already uses, the remedy says what
    comes next instead (explain/uses.py: never compile a compiled run)."""
    total = p.length_ns or 1
    if unrecorded_ns(p) >= EMPTY_MIN * total:
        return [empty_advice(p)]
    out: list[str] = []
    said: set[str] = set()  # a remedy two classes share is said once (CPU work and launch delays on graphs)
    for cls, ns in sorted(p.breakdown.items(), key=lambda kv: -kv[1]):
        if ns / total < ADVICE_MIN:
            continue
        tops = [g for g in groups if g.bound_by == cls][:3]  # groups come the most time first
        cut = shorten_names([visible(g.name) for g in tops], 50)  # told apart, as in the tables; the tag kept whole
        top = ", ".join(name + own_tag(g) for name, g in zip(cut, tops, strict=True)) or "-"
        waits = long_launch_advice(p, ns, total) if cls == "gpu_kernel_launch_overhead" else ""
        if waits:  # not the CPU: no CPU remedy follows
            out.append(waits)
            continue
        text = CPU_ONLY_ADVICE if cls == "cpu_bound" and cpu_only(p) else ADVICE[cls]
        line = text.format(share=f"{ns / total:.0%}", time=when(ns), top=top)
        out.append(_next(line, cls, uses, said) if uses is not None and not cpu_only(p) else line)
    return out


def long_launch_advice(p: CriticalPath, ns: int, total: int) -> str:
    """The launch delays' advice when waits of LONG_LAUNCH_WAIT_NS or more hold half their ns or more ("": they do
    not, and the usual words stand)."""
    long = [it for it in p.items if it.bound_by == "gpu_kernel_launch_overhead" and it.dur_ns >= LONG_LAUNCH_WAIT_NS]
    if not long or 2 * sum(it.dur_ns for it in long) < ns:
        return ""
    worst = max(long, key=lambda it: it.dur_ns)
    return LONG_LAUNCH_ADVICE.format(
        share=f"{ns / total:.0%}",
        time=when(ns),
        top=shorten_names([visible(worst.name)], 50)[0],
        longest=when(worst.dur_ns),
        n=len(long),
        s="" if len(long) == 1 else "s",
    )


def unrecorded_ns(p: CriticalPath) -> int:
    """The path's time on its window's own span (a step, an annotation) with no op open inside it: time the
    profiler recorded nothing in, an idle host or code it did not trace."""
    return sum(it.dur_ns for it in p.items if p.event >= 0 and it.event == p.event)


def empty_advice(p: CriticalPath) -> str:
    """An empty window gets no remedy: there is no recorded work to make cheaper."""
    return (
        f"{p.window} is empty: nothing is recorded in {when(unrecorded_ns(p))} of its {when(p.length_ns)} (an idle "
        "host, or code the profiler did not trace), so there is no work on its path to advise on. Profile a step "
        "that runs the workload (schedule's wait and warmup steps), or record Python with with_stack=True."
    )


# Where each class's generic remedy starts in its advice, and what comes next instead, from what the run uses.
REMEDY = {
    "cpu_bound": ("Cut Python", lambda u: u.cpu_next),
    "gpu_kernel_launch_overhead": ("CUDA graphs", lambda u: u.cpu_next),
    "gpu_compute_bound": ("See how close", lambda u: u.gpu_next),
    "gpu_kernel_kernel_overhead": ("Fuse them", lambda u: u.gaps_next),
}


def _next(line: str, cls: str, uses: Uses, said: set[str]) -> str:
    """The line with its remedy replaced by what comes next (unchanged where the remedy is not found); a remedy
    already said above is pointed to, not repeated."""
    marker, key = REMEDY.get(cls, ("", None))
    at = line.find(marker) if marker else -1
    if at < 0 or key is None:
        return line
    words = next_words(uses, key(uses))
    if words in said:
        return line[:at] + "What comes next is the same as above."
    said.add(words)
    return line[:at] + words


def job_verdict(job: JobPath) -> str:
    """Rank 1 bounds the job's step: the other ranks' paths wait 0.10 ms for it in their collectives; its own path
    runs mostly through the CPU (96%)."""
    bound, held = job.bound_rank, job.held_ns()
    own = job.own_breakdown(bound)
    total = sum(own.values()) or 1
    cls = max(own, key=lambda c: own[c])
    mostly = f"its own path runs mostly through {THROUGH[cls]} ({own[cls] / total:.0%})"
    if held[bound]:
        return f"Rank {bound} bounds the job's step: the other ranks' paths wait {when(held[bound])} for it in their collectives; {mostly}"
    return f"Rank {bound} has the longest path ({when(job.paths[bound].length_ns)}), and no rank waits for another on its path; {mostly}"


# ---- the viewer: the status line, the breakdown as bars, the path as a table -------------------------------

EIGHTHS = " ▏▎▍▌▋▊▉"


def bar(share: float, width: int) -> str:
    """A bar of share (0..1) of width cells, in eighths."""
    eighths = round(max(share, 0.0) * width * 8)
    return "█" * (eighths // 8) + (EIGHTHS[eighths % 8] if eighths % 8 else "")


def status(p: CriticalPath) -> str:
    """critical path of ProfilerStep#6: 2.18 ms, bound by GPU compute (64%)"""
    cls = p.bound_by
    share = f" ({p.breakdown[cls] / p.length_ns:.0%})" if cls and p.length_ns else ""
    bound = f", bound by {TITLES.get(cls, cls)}{share}" if cls else ", with nothing on it"
    return f"critical path of {p.window}: {when(p.length_ns)}{bound}"


def breakdown_rows(p: CriticalPath) -> list[tuple[str, str, float]]:
    """(title, time, share) per class on the path, the most first (classes with no time left out)."""
    total = p.length_ns or 1
    shown = sorted((c for c in CLASSES if p.breakdown.get(c, 0) > 0), key=lambda c: -p.breakdown[c])
    return [(TITLES[c], when(p.breakdown[c]), p.breakdown[c] / total) for c in shown]


def breakdown_line(p: CriticalPath, most: int = 3) -> str:
    """The breakdown in one line: GPU compute 64% · CPU work 30% · Launch delays 6%."""
    rows = breakdown_rows(p)
    line = " · ".join(f"{title} {share:.0%}" for title, _time, share in rows[:most])
    return line + (f" · {len(rows) - most} more" if len(rows) > most else "")


def event_saving(w: WhatIf, event_on_path: bool) -> str:
    """What the what-if key says: the saving, or why there is none (an event off the path saves nothing)."""
    if w.saving_ns > 0 or event_on_path:
        return sentence(w)
    p = w.before
    through = THROUGH.get(p.bound_by, p.bound_by)
    return (
        f"{_change(w.specs[0], w.matched[0])} saves nothing: it is off the critical path of {p.window} "
        f"({when(p.length_ns)}, mostly through {through})"
    )
