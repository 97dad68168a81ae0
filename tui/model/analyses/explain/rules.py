"""Explain rules: what the patterns a beginner sees in a trace mean (the series' lessons).

Each rule is an id plus a finder that returns findings: data (a title, its figures as numbers with
units, the templates its note is made of, the events it marks), never prose; tui/tables/explain.py
writes the note at render time. explain() runs them all; NoteIndex finds an event's findings for the
details panel. Finders take the structure (Analysis) and the summary, so this module needs nothing above it.
The shapes (Finding, Quantity, Rule) live in findings.py, so rules in other modules share them.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable

import numpy as np

from ...analysis import Analysis
from ...cats import BUSY_CATS, GPU_CATS, Cat, of_cats
from ...nesting import subtree_reduce
from ...sets import distinct
from ...steps import STEP_NAME, cold_first, real_steps, typical
from ..kernel_roles import MATRIX, VECTOR, KernelClass, classify, role
from ..launches import launch_calls
from ..summary import Summary
from .comms import COMMS_RULES
from .compiling import COMPILING_RULES
from .copies import COPY_RULES
from .cpu import CPU_RULES
from .findings import Figure, Finding, Quantity, Rule, us
from .graphs import GRAPH_RULES
from .queue import QUEUE_RULES
from .readings import launches_cost_more, typical_said
from .roofline import ROOFLINE_RULES
from .savings import cpu_bound_path, with_savings
from .uses import TRANSPOSE, fp32_left, next_figures, uses_of

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
GEMM_ROLES = frozenset({"GEMM", "triton template (GEMM/conv)"})
GEMM_OR_CONV_ROLES = GEMM_ROLES | {"convolution"}
HALF = frozenset({"bf16", "fp16"})
SETUP_MIN_NS = 50_000  # a gap before the first op at least this long ...
SETUP_SHARE = 0.3  # ... and this share of the annotation ...
SETUP_VS_OTHERS = 3.0  # ... and this many times the same annotation's usual gap


def _names(a: Analysis, pattern: re.Pattern) -> np.ndarray:
    hit = np.array([bool(pattern.search(n)) for n in a.trace.names] or [False])
    return np.flatnonzero(hit[a.trace.x.name])


def _has_gpu(a: Analysis) -> bool:
    return bool(of_cats(a.trace.x.cat, GPU_CATS).any())


# ---- the rules ---------------------------------------------------------------------------------


def final_sync(a: Analysis, s: Summary) -> list[Finding]:
    last = _final_flush(a)
    if last is None:
        return []
    figures: dict[str, Figure] = {"call": a.trace.name_of(last), "dur": us(a.trace.x.dur[last] / 1000)}
    return [Finding("final-sync", "Final device synchronize", figures, [last])]


def _final_flush(a: Analysis) -> int | None:
    """The last device synchronize, when it ends the window: the profiler flushing (None: no such call)."""
    syncs = _names(a, SYNC)
    if not len(syncs):
        return None
    last = int(syncs[np.argmax(a.end[syncs])])
    host = of_cats(a.trace.x.cat, (Cat.CPU_OP, Cat.RUNTIME, Cat.USER_ANNOTATION))
    window_end = int(a.end[host].max())
    if window_end - int(a.end[last]) > max(0.01 * (window_end - int(a.trace.x.ts[host].min())), 50_000):
        return None
    return last


def activity_buffer(a: Analysis, s: Summary) -> list[Finding]:
    hits = _names(a, re.compile(r"^Activity Buffer Request$"))
    return [Finding("activity-buffer", "Profiler buffer request", {}, hits.tolist())] if len(hits) else []


def occupancy_query(a: Analysis, s: Summary) -> list[Finding]:
    hits, kernels = [], []
    for q in _names(a, re.compile(r"OccupancyMaxActiveBlocksPerMultiprocessor")).tolist():
        nxt = _next_launch(a, q)
        if nxt is not None and role(a.trace.name_of(nxt)) in GEMM_OR_CONV_ROLES:
            hits.append(q)
            kernels.append(nxt)
    if not hits:
        return []
    figures: dict[str, Figure] = {"kernel": a.trace.name_of(kernels[0])}
    return [Finding("occupancy-query", "Occupancy query before a GEMM/conv launch", figures, hits)]


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
    return [Finding("metadata-op", "Metadata-only ops launch no kernel", {}, quiet)] if quiet else []


def bias_copy(a: Analysis, s: Summary) -> list[Finding]:
    hits = []
    for g in _names(a, re.compile(r"^Memcpy DtoD")).tolist():
        addmm = _ancestor_named(a, int(a.links.launcher[g]), "aten::addmm")
        if addmm is None:
            continue
        launched = [int(k) for j in a.descendants(addmm, 64) for k in a.links.launched(j)]
        if any(role(a.trace.name_of(k)) in GEMM_ROLES and a.trace.x.ts[k] >= a.trace.x.ts[g] for k in launched):
            hits.append(g)
    return [Finding("bias-copy", "Bias copy before addmm's GEMM", {}, hits)] if hits else []


def _ancestor_named(a: Analysis, i: int, name: str, depth: int = 8) -> int | None:
    while i >= 0 and depth:
        if a.trace.name_of(i) == name:
            return i
        i, depth = int(a.nesting.parent[i]), depth - 1
    return None


def cold_start(a: Analysis, s: Summary) -> list[Finding]:
    """The first step much slower than the others, as the user waits for a step (its CPU span and its GPU work)."""
    steps = real_steps(s.steps)
    elapsed = [st.elapsed_us for st in steps]
    ratio = cold_first(elapsed)
    if ratio is None:
        return []
    first, others = steps[0], steps[1:]
    figures: dict[str, Figure] = {
        "step": first.name,
        "ratio": Quantity(ratio, "x"),
        "dur": us(first.elapsed_us),
        "typical": us(typical(elapsed[1:])),  # of the others: the one, or the median step (of two, the faster)
        "others": len(others),
        "other_step": others[0].name if len(others) == 1 else None,
        "cpu": us(first.dur_us),
        "gpu": us(first.device_us),
        "_typical_said": typical_said(others, typical(elapsed[1:]), first.elapsed_us),
    }
    parts = ["cold-start-cpu" if s.cpu_only else "cold-start"]
    return [Finding("cold-start", "Cold first step", figures, [first.event] if first.event >= 0 else [], parts)]


GAP_MIN_NS = 10_000  # a gap between kernels worth counting as evidence
GAPS_MARKED = 50  # the kernels after the longest gaps are marked


def overhead_gaps(a: Analysis, s: Summary) -> list[Finding]:
    """The GPU waits for the CPU (the verdict says so, or the critical path of its step runs mostly through CPU work):
    the gaps between device work as evidence, and what the CPU did meanwhile."""
    path = None if s.cpu_only or s.device_records_missing else cpu_bound_path(a)
    if s.cpu_only or s.device_records_missing or not (s.verdict == "overhead-bound" or path is not None):
        return []
    x = a.trace.x
    work = np.flatnonzero(of_cats(x.cat, BUSY_CATS))
    work = work[np.argsort(x.ts[work], kind="stable")]
    if len(work) < 2:
        return []
    ends = np.maximum.accumulate(x.ts[work] + x.dur[work])
    gaps = x.ts[work[1:]] - ends[:-1]
    big = np.flatnonzero(gaps > GAP_MIN_NS)
    longest = big[np.argsort(-gaps[big], kind="stable")][:GAPS_MARKED]
    figures: dict[str, Figure] = {
        "idle": Quantity(1 - s.gpu_utilization, "fraction"),
        "gaps": len(big),
        "gap_min": us(GAP_MIN_NS / 1000),
        "gaps_total": us(gaps[big].sum() / 1000),
        "longest": us(gaps[longest[0]] / 1000 if len(big) else 0.0),
        "marked": len(longest),
        "launches": s.per_launch_count,  # the launches the figures are per (the typical step's), and where
        "launch_step": s.launch_step,  # (None: the whole trace's)
        "per_launch_gpu": us(s.gpu_per_kernel_us),
        "per_launch_cpu": us(s.cpu_per_kernel_us),
        "call_cpu": us(s.call_us),  # the calls of those launches (the step's), as median_call
        "median_call": us(s.call_median_us),
        "cpu_while_idle": [us(t, name) for name, t in s.cpu_while_idle],
    }
    if path is not None:
        figures |= {
            "window": path.window,
            "path_cpu": Quantity(path.breakdown["cpu_bound"] / path.length_ns, "fraction"),
        }
    launching = launches_cost_more(s)
    cause = "overhead-launches" if launching else ("overhead-cpu" if s.cpu_while_idle else "overhead-cpu-unseen")
    parts = ["overhead-idle"] + (["overhead-path"] if path is not None else [])
    parts += [("overhead-evidence" if len(big) > 1 else "overhead-one-gap") if len(big) else "overhead-no-gap", cause]
    slow = [o for o in s.launch_outliers if not COPY_CALL.search(o.name)]
    if slow and not launching:  # the CPU's other work holds the one-time calls the launch figures leave out
        parts.append("overhead-one-time")
        figures |= {"one_time": us(sum(o.dur_us for o in slow)), "one_time_calls": len(slow)}
    u = uses_of(a)  # what comes next, from what the run already uses (no advice to compile a compiled run)
    if launching or u.graph_launches:  # (a graphed run: what is left outside its graphs, whatever the cause)
        parts.append(f"next/{u.cpu_next}")
        figures |= next_figures(u)
    title = "GPU idle between kernels while the CPU " + ("launches" if launching else "works")
    marked = [int(work[1 + k]) for k in longest.tolist()]  # the kernels after the longest gaps; all the gaps count
    return [Finding("overhead-gaps", title, figures, marked, parts, len(big))]


COPY_CALL = re.compile(r"Memcpy|Memset", re.IGNORECASE)
HIP_CALL = re.compile(r"^hip[A-Z]")  # a HIP runtime call (hipLaunchKernel, hipExtModuleLaunchKernel): a ROCm run


def slow_launch(a: Analysis, s: Summary) -> list[Finding]:
    """Launch calls far slower than the median: lazy module loading or a full queue (kernel launches), a
    copy that waits for the GPU (memcpy from or to pageable memory); the waits inside steps are cpu-waits'."""
    out, waits = [], {i for i, _ in step_waits(a)}  # the cpu-waits rule names these
    outliers = [o for o in s.launch_outliers if o.event not in waits]
    copies = [o for o in outliers if COPY_CALL.search(o.name)]
    launches = [o for o in outliers if not COPY_CALL.search(o.name)]
    if launches:
        title = "Launch calls far slower than the rest"
        # the slowest call says whose loader ran: HIP's lazy loading has its own switch, not CUDA_MODULE_LOADING
        part = "slow-kernel-hip" if HIP_CALL.match(launches[0].name) else "slow-kernel"
        out.append(Finding("slow-launch", title, _slowest(launches, s), [o.event for o in launches], [part]))
    if copies:
        title = "Copies that wait for the GPU"
        out.append(Finding("slow-launch", title, _slowest(copies, s), [o.event for o in copies], ["slow-copy"]))
    return out


def _slowest(outliers: list, s: Summary) -> dict[str, Figure]:
    worst = outliers[0]
    return {
        "calls": len(outliers),
        "median_launch": us(s.median_launch_us),
        "slowest": worst.name,
        "slowest_dur": us(worst.dur_us),
    }


def setup_gap(a: Analysis, s: Summary) -> list[Finding]:
    x = a.trace.x
    never = np.iinfo(np.int64).max
    first_op = subtree_reduce(a.nesting.parent, np.where(x.cat == int(Cat.CPU_OP), x.ts, never), np.minimum)
    gaps: dict[str, list[tuple[int, int]]] = {}
    for i in np.flatnonzero((x.cat == int(Cat.USER_ANNOTATION)) & (first_op < never)).tolist():
        name = a.trace.name_of(i)
        if not name.startswith("ProfilerStep#"):
            gaps.setdefault(name, []).append((i, int(first_op[i] - x.ts[i])))
    hits = [
        (i, gap) for found in gaps.values() for i, gap in found if _is_setup(a, i, gap, [g for j, g in found if j != i])
    ]
    if not hits:
        return []
    hits.sort(key=lambda hit: -hit[1])  # the longest gap first: the one its note sizes
    longest, gap = hits[0]
    dur = int(x.dur[longest])
    figures: dict[str, Figure] = {
        "gap": us(gap / 1000),
        "span": a.trace.name_of(longest),
        "span_dur": us(dur / 1000),
        "gap_share": Quantity(gap / dur if dur else 0.0, "fraction"),
        "longest": " (the longest of them)" if len(hits) > 1 else "",
    }
    return [Finding("setup-gap", "Setup before the first op", figures, [i for i, _ in hits])]


def _is_setup(a: Analysis, i: int, gap: int, others: list[int]) -> bool:
    if gap < SETUP_MIN_NS or gap < SETUP_SHARE * int(a.trace.x.dur[i]):
        return False
    return not others or gap >= SETUP_VS_OTHERS * statistics.median(others)


# The torch.compile runtime's own rows (tui/tables/explain.py says what each one is).
COMPILE_REGIONS = [
    "Torch-Compiled Region",
    "TorchDynamo Cache Lookup",
    "## Call CompiledFxGraph",
    "Pregraph bytecode",
    "AOTDispatcher Runtime Wrapper Prologue",
]


def compile_runtime(a: Analysis, s: Summary) -> list[Finding]:
    out = []
    for prefix in COMPILE_REGIONS:
        hits = _names(a, re.compile("^" + re.escape(prefix)))
        if len(hits):
            figures: dict[str, Figure] = {"region": prefix}
            parts = ["compile-runtime/" + prefix]
            out.append(Finding("compile-runtime", f"torch.compile: {prefix}", figures, hits.tolist(), parts))
    return out


# (rule id, what a kernel's class must be); tui/tables/explain.py has each one's note. Classes come from
# kernel_roles.py, the one classifier: it recognises Triton kernels first (a hand-written Triton kernel named
# *_flashinfer_* is not attention), and a kernel is on the CUDA cores or on the tensor cores, never both.
KERNEL_HINTS: list[tuple[str, Callable[[KernelClass], bool]]] = [
    ("kernel-fp32-gemm", lambda k: k.role in GEMM_OR_CONV_ROLES and k.unit == VECTOR and k.dtype == "fp32"),
    ("kernel-half-cuda-core", lambda k: k.role in GEMM_OR_CONV_ROLES and k.unit == VECTOR and k.dtype in HALF),
    ("kernel-tensor-core", lambda k: k.role in GEMM_OR_CONV_ROLES and k.unit == MATRIX),
    ("kernel-layout-transpose", lambda k: False),  # by name, not class (kernel_hints)
    ("kernel-triton", lambda k: k.role.startswith("triton")),
    ("kernel-attention", lambda k: k.role == "attention"),
    ("kernel-nccl", lambda k: k.role == "collective"),
]


def kernel_hints(a: Analysis, s: Summary) -> list[Finding]:
    gpu = np.flatnonzero(a.trace.x.cat == int(Cat.KERNEL))
    used = distinct(a.trace.x.name[gpu])
    classes = {int(n): classify(a.trace.names[int(n)]) for n in used.tolist()}
    out = []
    for rule_id, wanted in KERNEL_HINTS:
        hit = [n for n, k in classes.items() if wanted(k) or _by_name(rule_id, a.trace.names[n])]
        events = gpu[np.isin(a.trace.x.name[gpu], hit)] if hit else gpu[:0]
        if len(events):
            parts, figures = _hint_parts(a, rule_id)
            title = "Kernel name: " + rule_id.removeprefix("kernel-")
            out.append(Finding(rule_id, title, figures, events.tolist(), parts))
    return out


def _by_name(rule_id: str, name: str) -> bool:
    return rule_id == "kernel-layout-transpose" and bool(TRANSPOSE.search(name))


def _hint_parts(a: Analysis, rule_id: str) -> tuple[list[str], dict[str, Figure]]:
    """A note's advice from what the run uses: autocast or TF32 already on (these fp32 GEMMs were left out),
    channels_last already on (no advice to use it)."""
    u = uses_of(a)
    if rule_id == "kernel-fp32-gemm":
        return ["kernel-fp32-gemm", f"next/{fp32_left(u)}"], next_figures(u)
    if rule_id == "kernel-half-cuda-core":
        return [rule_id, "next/half-sizes" if u.channels_last else "next/half-channels-last"], {}
    if rule_id == "kernel-layout-transpose":
        return [rule_id, "next/channels-last"], {}
    return [], {}


def records_missing(a: Analysis, s: Summary) -> list[Finding]:
    """A CUDA run whose device records were lost: launch calls (and ac2g flows), but no kernel or copy record."""
    if not s.device_records_missing:
        return []
    launches = np.flatnonzero(launch_calls(a.trace, a.links.launcher)).tolist()
    figures: dict[str, Figure] = {"launches": s.launches, "flows": s.ac2g_flows, "ranges": s.profiler_ranges}
    title = "Device records missing: launches but no GPU activity"
    cause = "ranges" if s.profiler_ranges else ("cut" if s.cut_short else "")
    parts = [f"records-missing-{cause}" if cause else "records-missing"]
    return [Finding("records-missing", title, figures, launches, parts)]


# cuda_sync records by what made them: (kind, the record's name, a pattern of the call that made it or None)
SYNC_KINDS = [
    ("context", "Context Sync", None),
    ("stream", "Stream Sync", None),
    ("poll", "Event Sync", re.compile(r"EventQuery$")),
    ("event", "Event Sync", None),
    ("wait_event", "Stream Wait Event", None),
]


def sync_records(a: Analysis, s: Summary) -> list[Finding]:
    """What the cuda_sync records (CUPTI synchronization activity) on a trace are: who waited, and for what."""
    records = np.flatnonzero(a.trace.x.cat == int(Cat.SYNC)).tolist()
    counts = dict.fromkeys([k for k, _, _ in SYNC_KINDS], 0)
    for i in records:
        kind = _sync_kind(a, i)
        if kind:
            counts[kind] += 1
    if not any(counts.values()):
        return []
    parts = ["sync-records"] + [f"sync-{k.replace('_', '-')}" for k, n in counts.items() if n]
    figures: dict[str, Figure] = dict(counts)
    return [Finding("sync-records", "Synchronization records (cuda_sync)", figures, records, parts)]


def _sync_kind(a: Analysis, i: int) -> str:
    name, call = a.trace.name_of(i), int(a.links.launcher[i])
    called = a.trace.name_of(call) if call >= 0 else ""
    for kind, record, by in SYNC_KINDS:
        if name == record and (by is None or by.search(called)):
            return kind
    return ""


WAIT_CALL = re.compile(r"^(cuda|hip)(Device|Stream|Event|Ctx)Synchronize$|^cu(Ctx|Stream|Event)Synchronize$")
COPY_TO_HOST = re.compile(r"^(cuda|hip)Memcpy|^cuMemcpy", re.IGNORECASE)
WAIT_MIN_NS = 10_000  # a wait shorter than this is the call's own cost, not a wait worth naming
WAIT_SHARE = 0.01  # the waits inside a step are named when they add up to this share of it


def cpu_waits(a: Analysis, s: Summary) -> list[Finding]:
    """The CPU waits for the GPU inside a step: a synchronize, an event wait, or a copy to the host that returns
    only after the device copy ended (the profiler's final flush left out)."""
    found = step_waits(a)
    if not found:
        return []
    x = a.trace.x
    worst, step = found[0]
    op, inner, frame = _caller(a, worst, step)
    waits = [i for i, _ in found]
    figures: dict[str, Figure] = {
        "call": a.trace.name_of(worst),
        "dur": us(x.dur[worst] / 1000),
        "step": a.trace.name_of(step),
        "share": Quantity(float(x.dur[worst] / max(int(x.dur[step]), 1)), "fraction"),
        "op": op,
        "inner": inner,
        "frame": frame,
        "waits": len(waits),
        "total": us(x.dur[waits].sum() / 1000),
        "longest": [us(x.dur[i] / 1000, _caller(a, i, st)[0] or a.trace.name_of(i)) for i, st in found[:3]],
    }
    where = "cpu-wait-op-inner" if inner != op else "cpu-wait-op" if op else "cpu-wait-frame" if frame else ""
    parts = ["cpu-wait", where, "cpu-wait-more" if len(waits) > 1 else "", "cpu-wait-advice"]
    title = "The CPU waits for the GPU inside a step"
    return [Finding("cpu-waits", title, figures, waits, [p for p in parts if p])]


def step_waits(a: Analysis) -> list[tuple[int, int]]:
    """(wait, its step), the longest first: the blocking calls inside the steps whose waits add up to at least
    WAIT_SHARE of the step."""
    x = a.trace.x
    pairs = [(i, st) for i in _blocking_calls(a) if (st := _step_of(a, i)) is not None]
    total: dict[int, int] = {}
    for i, st in pairs:
        total[st] = total.get(st, 0) + int(x.dur[i])
    kept = [(i, st) for i, st in pairs if total[st] >= WAIT_SHARE * int(x.dur[st])]
    return sorted(kept, key=lambda p: (-int(x.dur[p[0]]), int(x.ts[p[0]])))


def _blocking_calls(a: Analysis) -> list[int]:
    """Runtime calls that made the CPU wait at least WAIT_MIN_NS for the device, but the final flush."""
    x = a.trace.x
    flush = _final_flush(a)
    long = (x.cat == int(Cat.RUNTIME)) & (x.dur >= WAIT_MIN_NS)
    waits = np.flatnonzero(long & np.isin(x.name, _name_ids(a, WAIT_CALL))).tolist()
    copies = np.flatnonzero(long & np.isin(x.name, _name_ids(a, COPY_TO_HOST))).tolist()
    return sorted(i for i in waits + [c for c in copies if _waited_for_copy(a, c)] if i != flush)


def _name_ids(a: Analysis, pattern: re.Pattern) -> list[int]:
    return [k for k, n in enumerate(a.trace.names) if pattern.search(n)]


def _waited_for_copy(a: Analysis, call: int) -> bool:
    """A copy call that returned only after its device-to-host copy ended: the CPU waited for the copy."""
    copies = [int(g) for g in a.links.launched(call) if "DtoH" in a.trace.name_of(int(g))]
    return any(a.end[call] >= a.end[g] for g in copies)


def _step_of(a: Analysis, i: int) -> int | None:
    """The ProfilerStep#N the event runs inside (None: outside every step)."""
    p = int(a.nesting.parent[i])
    while p >= 0:
        if a.trace.x.cat[p] == int(Cat.USER_ANNOTATION) and STEP_NAME.match(a.trace.name_of(p)):
            return p
        p = int(a.nesting.parent[p])
    return None


def _caller(a: Analysis, i: int, step: int) -> tuple[str, str, str]:
    """What called the wait inside the step: the outermost and innermost CPU ops above it, and the nearest
    Python frame (not a built-in) above it ("" where there is none)."""
    ops, frame = [], ""
    p = int(a.nesting.parent[i])
    while p >= 0 and p != step:
        cat, name = int(a.trace.x.cat[p]), a.trace.name_of(p)
        if cat == int(Cat.CPU_OP):
            ops.append(name)
        elif cat == int(Cat.PYTHON) and not frame and not name.startswith("<built-in"):
            frame = name
        p = int(a.nesting.parent[p])
    return (ops[-1], ops[0], frame) if ops else ("", "", frame)


RULES = [
    Rule("records-missing", records_missing),
    Rule("final-sync", final_sync),
    Rule("activity-buffer", activity_buffer),
    Rule("occupancy-query", occupancy_query),
    Rule("metadata-op", metadata_ops),
    Rule("bias-copy", bias_copy),
    Rule("cold-start", cold_start),
    *CPU_RULES,
    Rule("overhead-gaps", overhead_gaps),
    Rule("slow-launch", slow_launch),
    Rule("cpu-waits", cpu_waits),
    Rule("sync-records", sync_records),
    Rule("setup-gap", setup_gap),
    Rule("compile-runtime", compile_runtime),
    *COMPILING_RULES,
    Rule("kernel-names", kernel_hints),
    *GRAPH_RULES,
    *ROOFLINE_RULES,
    *QUEUE_RULES,
    *COPY_RULES,
    *COMMS_RULES,
]


def explain(a: Analysis, summary: Summary) -> list[Finding]:
    """Every finding of every rule, with what its fix would buy, the biggest saving first (savings.py)."""
    uses_of(a)  # what the run uses, found here (a worker) for the rules and the overview's readings
    return with_savings(a, advised_once([f for rule in RULES for f in rule.find(a, summary)]))


def advised_once(findings: list[Finding]) -> list[Finding]:
    """Where the roofline measured the fp32 GEMMs, the kernel-name hint about them says how to tell such kernels
    and leaves the advice to that finding (both gave the same TF32/autocast advice, one under the other)."""
    measured = next((f for f in findings if f.rule == "roofline-fp32-gemm"), None)
    for f in findings:
        if measured is not None and f.rule == "kernel-fp32-gemm":
            f.parts = ["kernel-fp32-gemm", "see/roofline-fp32-gemm"]
            f.figures = {"_see": measured.title}
    return findings


class NoteIndex:
    """The findings that mark any one event, found by binary search (no dict of every event noted)."""

    def __init__(self, findings: list[Finding]) -> None:
        self.entries = [(distinct(np.asarray(f.events, np.int64)), f) for f in findings if f.events]

    def notes(self, event: int) -> list[Finding]:
        """The findings that mark this event (tui/tables/explain.note() writes each one's note)."""
        out = []
        for events, finding in self.entries:
            k = int(np.searchsorted(events, event))
            if k < len(events) and events[k] == event:
                out.append(finding)
        return out
