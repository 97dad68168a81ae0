"""What fixing each explain finding would change, as a --what-if spec (savings.py solves it), or why none applies.

One function per rule whose fix a what-if can express: the CPU side of an idle GPU gone (graphs: the step as CUDA
graph replays), a wait removed (sync:CALL=0), a slow copy made asynchronous by pinned memory (op:CALL=0), fp32
GEMMs on the tensor cores (kernel:role=gemm,unit=vector,dtype=fp32=R, R the GPU's TF32 (or bf16) peak over its fp32
peak, from gpus.toml), a GEMM shape at its roof (its kernels 100/pct% faster, 10x at most), memory-bound ops fused (their kernels'
roles 2x faster: fusion keeps the intermediates on chip), collectives hidden (kernel:role=collective=0: the most
overlap could buy), an always-empty launch queue fed (launch=0), collectives that launched nothing removed. Every
spec is one `tracetui critical --what-if` takes, so the sentence a finding prints is the one that command prints.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ...analysis import Analysis
from ..host_collectives import collective_calls
from ..kernel_roles import classify
from ..kernel_select import Selector
from ..roofline.points import Roofline
from .findings import Finding, Quantity
from .roofline import fp32_rows, memory_rows, row_kernels, row_of_call, table_of, tensor_core_gain
from .uses import uses_of

# Why no what-if applies (worded by tui/tables/explain.py).
NOTE = "note"  # a note on what the trace shows, not a change to make
PROFILER = "profiler"  # the profiler's own cost
ONE_TIME = "one-time"  # a one-time cost: warm up before profiling
CHANGES_WORK = "changes-work"  # the fix changes the work itself (batching): no what-if models it
GPU_BOUND = "gpu-bound"  # a full launch queue: the GPU's own work bounds the run (see the GPU findings)
NO_PEAKS = "no-peaks"  # the GPU's peaks are unknown, so the gain of the tensor cores is too
AT_ROOF = "at-roof"  # already at its roof
IN_USE = "in-use"  # the fix is what the run already does (CUDA graphs replay most of its work)
FUSION_GAIN = 2.0  # fused memory-bound ops: their kernels as if half their traffic were kept on chip
AT_ROOF_PCT = 90.0  # a shape at this % of its roof or more has nothing left to gain
ROOF_GAIN_MOST = 10.0  # a shape far below its roof is asked what 10x faster kernels buy, not 300x

Fix = tuple[str, str]  # (the spec, "") or ("", why none applies)
REASONS = {
    "final-sync": PROFILER,
    "activity-buffer": PROFILER,
    "cold-start": ONE_TIME,
    "setup-gap": ONE_TIME,
    "graph-capture-in-window": ONE_TIME,
    "compiling": ONE_TIME,
    "roofline-tiny-gemm": CHANGES_WORK,
}


def fix(a: Analysis, f: Finding) -> Fix:
    """The what-if spec of a finding's fix, or ("", why there is none)."""
    maker = FIXES.get(f.rule)
    return maker(a, f) if maker else ("", REASONS.get(f.rule, NOTE))


def _cpu_side(a: Analysis, f: Finding) -> Fix:
    """The GPU idles while the CPU launches or works: the step as CUDA graph replays, all the CPU work of its compiled
    graphs (else of its forward and backward) gone, not only the launch calls: what torch.compile's reduce-overhead
    mode buys where the region can be captured (the what-if says what it cannot: a synchronize inside). A run that
    replays most of its work from graphs already is not asked what graphs would buy: its note says what is left."""
    return ("", IN_USE) if uses_of(a).graphed else ("graphs", "")


def _wait(a: Analysis, f: Finding) -> Fix:
    return f"sync:^{re.escape(str(f.figures['call']))}$=0", ""


def _slow_copy(a: Analysis, f: Finding) -> Fix:
    """A copy that waits (pageable host memory): pinned, it returns at once, its CPU time gone."""
    if "slow-copy" not in f.parts:
        return "", ONE_TIME  # a slow kernel launch: lazy module loading on a first use
    return _exact("op", {a.trace.name_of(e) for e in f.events}, 0), ""


def _fp32_kernels(a: Analysis, f: Finding) -> Fix:
    """fp32 GEMM and conv kernels on the CUDA cores, at the GPU's tensor-core rate."""
    r = table_of(a)
    if r.device is None:
        return "", NO_PEAKS
    _tc, tc_peak, fp32 = tensor_core_gain(r.device)
    if not fp32 or not tc_peak:
        return "", NO_PEAKS
    return _fp32_spec({a.trace.name_of(e) for e in f.events}, tc_peak / fp32), ""


def _fp32_rows(a: Analysis, f: Finding) -> Fix:
    """The kernels under the fp32 GEMM rows, at the tensor-core rate the finding names."""
    r = table_of(a)
    rows, ratio = fp32_rows(r), f.figures["ratio"]
    if not isinstance(ratio, Quantity) or not rows:
        return "", NO_PEAKS
    names = _math_kernels(r, rows) or set(row_kernels(r, rows))
    return (_fp32_spec(names, ratio.value), "") if names else ("", NOTE)


def _gemm_roof(a: Analysis, f: Finding) -> Fix:
    """A GEMM, attention or conv shape's kernels as fast as its roof allows."""
    r = table_of(a)
    row = row_of_call(r, f.events[0]) if f.events else None
    if row is None or not row.pct_of_roof:
        return "", NOTE
    if row.pct_of_roof >= AT_ROOF_PCT:
        return "", AT_ROOF
    names = _math_kernels(r, [row]) or set(row_kernels(r, [row]))
    return _exact("kernel", names, min(100.0 / row.pct_of_roof, ROOF_GAIN_MOST)), ""


def _fuse(a: Analysis, f: Finding) -> Fix:
    """The memory-bound ops' kernels, by their roles, as if fusion halved their traffic."""
    r = table_of(a)
    roles = sorted({classify(n).role for n in row_kernels(r, memory_rows(r))} - {"other"})  # "other" says nothing
    if not roles:
        return "", NOTE
    return f"kernel:{_text(Selector(terms=tuple(roles)))}={_factor(FUSION_GAIN)}", ""


def _collectives(a: Analysis, f: Finding) -> Fix:
    return "kernel:role=collective=0", ""


def _queue(a: Analysis, f: Finding) -> Fix:
    return ("launch=0", "") if "queue-empty" in f.parts else ("", GPU_BOUND)


def _no_kernel_collectives(a: Analysis, f: Finding) -> Fix:
    """The collective calls gone: c10d's op, record_param_comms and the backend's span, all their own CPU time."""
    return _exact("op", {a.trace.name_of(int(e)) for e in collective_calls(a.trace)}, 0), ""


def _math_kernels(r: Roofline, rows: list) -> set[str]:
    """The kernels under the rows whose names say where their math ran (the GEMM, conv, attention kernels)."""
    return {n for n in row_kernels(r, rows) if classify(n).unit}


def _fp32_spec(names: set[str], factor: float) -> str:
    """fp32 GEMM (and conv) kernels at a faster rate: by their class when their names say it (the fix, TF32 or bf16,
    applies to every such kernel, and the spec then reads on any GPU), else by their names."""
    classes = {classify(n) for n in names}
    units = {k.unit for k in classes}
    if not names or len(units) != 1 or "" in units or {k.dtype for k in classes} != {"fp32"}:
        return _exact("kernel", names, factor)
    roles = "gemm|convolution" if any(k.role == "convolution" for k in classes) else "gemm"
    return f"kernel:role={roles},unit={units.pop()},dtype=fp32={_factor(factor)}"


def _text(s: Selector) -> str:
    parts = [f"role={'|'.join(t.lower() for t in s.terms)}"] if s.terms else []
    parts += [f"unit={s.unit}"] if s.unit else []
    parts += [f"dtype={s.dtype}"] if s.dtype else []
    return ",".join(parts)


def _exact(what: str, names: set[str], factor: float) -> str:
    """A spec that picks these names exactly."""
    alternatives = "|".join(re.escape(n) for n in sorted(names))
    pattern = f"^{alternatives}$" if len(names) == 1 else f"^(?:{alternatives})$"
    return f"{what}:{pattern}={_factor(factor)}"


def _factor(x: float) -> str:
    """A factor as a spec writes it: 0, 2, 7.38, 12.5."""
    return "0" if x == 0 else f"{x:.3g}" if x < 1000 else f"{x:.0f}"


def _cpu_top(a: Analysis, f: Finding) -> Fix:
    """CPU only, time in the ops: the op with the most time on the typical step's critical path (where the saving is
    solved) twice as fast, else the one with the most self time in the window; small ops: the short ops with the
    most own time twice as fast, their fixed costs halved (time between the ops: no op to speed up, a note)."""
    if "cpu-between-ops" in f.parts:
        return "", NOTE
    short = f.figures.get("short_top")
    if "cpu-in-small-ops" in f.parts:
        names = {q.label for q in short} if isinstance(short, list) else set()
        return (_exact("op", names, 2), "") if names else ("", NOTE)
    top = str(f.figures.get("path_op") or f.figures.get("top_op", ""))
    return (_exact("op", {top}, 2), "") if top else ("", NOTE)


FIXES: dict[str, Callable[[Analysis, Finding], Fix]] = {
    "cpu-time": _cpu_top,
    "overhead-gaps": _cpu_side,
    "cpu-waits": _wait,
    "slow-launch": _slow_copy,
    "kernel-fp32-gemm": _fp32_kernels,
    "roofline-fp32-gemm": _fp32_rows,
    "roofline-gemm": _gemm_roof,
    "roofline-memory": _fuse,
    "kernel-nccl": _collectives,
    "launch-queue": _queue,
    "collective-no-kernel": _no_kernel_collectives,
}
