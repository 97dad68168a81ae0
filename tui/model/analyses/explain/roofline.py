"""Explain rules that read the roofline: how close GEMMs come to their roof, memory-bound ops to fuse, fp32 GEMMs
that leave the tensor cores idle, and tiny GEMMs bound by overhead (figures as numbers; notes in tables/explain_roofline.py).
"""

from __future__ import annotations

import numpy as np

from ...analysis import Analysis
from ..kernel_roles import MATRIX, VECTOR
from ..roofline.peaks import Device, peak
from ..roofline.points import Roofline, RooflineRow, ridge, roof_words, roofline
from ..summary import Summary
from .findings import Figure, Finding, Quantity, Rule, us
from .uses import fp32_left, next_figures, uses_of

TOP_GEMMS = 3  # GEMM / conv / attention shapes told about, the most device time first
MIN_SHARE = 0.01  # ... each with at least this share of the modelled device time
FUSABLE = ("elementwise", "reduce", "softmax", "norm")
FUSE_SHARE = 0.1  # ... when they take at least this share of the modelled device time
NOT_FUSED = frozenset({"aten::copy_", "aten::copy"})  # copies are often host transfers: nothing to fuse
TINY_M = 64
FAR_BELOW = 10.0  # % of roof under which a GEMM is far below both roofs
# A GEMM call whose kernels take longer than this on average is not bound by its launch (a launch call takes 5-10 us
# of CPU and a kernel 2-5 us to start): far below its roofs, its few rows leave the GPU's SMs idle instead.
SHORT_CALL_US = 20.0
MAX_MARKED = 10_000


def table_of(a: Analysis) -> Roofline:
    """The roofline of the trace: the one Results keeps, else computed (a bare Analysis)."""
    found = getattr(a, "roofline", None)
    return found if isinstance(found, Roofline) else roofline(a)


def _row_calls(r: Roofline, rows: list[RooflineRow]) -> np.ndarray:
    """Every call the rows count (their op, shapes and dtype, outermost calls), in index order."""
    if not rows or not r.attribution.calls:
        return np.empty(0, np.int64)
    wanted = [k for k, x in enumerate(r.rows) if any(x is y for y in rows)]
    calls = np.frombuffer(r.attribution.calls, np.int64)
    return calls[np.isin(np.frombuffer(r.attribution.call_row, np.int64), wanted)]


def _marked(r: Roofline, rows: list[RooflineRow]) -> tuple[list[int], int]:
    """The rows' calls to mark on the timeline (at most MAX_MARKED), and how many there are."""
    calls = _row_calls(r, rows)
    return calls[:MAX_MARKED].tolist(), len(calls)


def gemm_roof(a: Analysis, s: Summary) -> list[Finding]:
    """The biggest GEMM, attention and conv shapes: their TFLOP/s as a share of the tensor-core roof of their dtype."""
    r = table_of(a)
    if r.device is None:
        return []
    total = sum(x.device_us for x in r.rows) or 1.0
    rows = [x for x in r.rows if x.unit == "matrix" and x.peak_tflops and x.device_us >= MIN_SHARE * total][:TOP_GEMMS]
    names = [x.name for x in rows]
    return [_gemm_finding(a, r, x, names.count(x.name) > 1) for x in rows]


def _gemm_finding(a: Analysis, r: Roofline, x: RooflineRow, by_shape: bool = False) -> Finding:
    """by_shape: another of the findings is of the same op, so the title names its input shapes too."""
    assert r.device is not None and x.peak_tflops is not None
    bw_pct = 100 * (x.gbps or 0.0) / r.device.peak_gbps if r.device.peak_gbps else 0.0
    figures: dict[str, Figure] = {
        "op": x.name,
        "shapes": x.input_shapes,
        "dtype": x.roof_dtype or x.dtype,
        "unit": "vector (CUDA-core)"
        if x.roof_unit == VECTOR
        else roof_words(r.device, x.unit, x.roof_dtype or x.dtype),
        "gpu": r.device.name,
        "tflops": Quantity(x.tflops or 0.0, "TFLOP/s"),
        "peak": Quantity(x.peak_tflops, "TFLOP/s"),
        "pct": 100 * (x.tflops or 0.0) / x.peak_tflops,
        "intensity": x.intensity or 0.0,
        "ridge": ridge(r.device, x.roof_unit or x.unit, x.roof_dtype or x.dtype) or 0.0,
        "gbps": x.gbps or 0.0,
        "bw": r.device.peak_gbps or 0.0,
        "bw_pct": bw_pct,
        "time": us(x.device_us),
        "calls": x.count,
    }
    parts = ["roofline-gemm", _bound_part(x, bw_pct)]
    marked, total = _marked(r, [x])
    title = f"{x.name} {x.input_shapes} against its roof" if by_shape else f"{x.name} against its roof"
    return Finding("roofline-gemm", title, figures, marked, parts, total)


def _bound_part(x: RooflineRow, bw_pct: float) -> str:
    """Compute-bound above the ridge; below it, memory-bound only when it moves a real share of the bandwidth, else
    far below both roofs (the roofline view's % of roof is that share): too little work per call."""
    if x.bound == "compute":
        return "roofline-gemm-compute"
    return "roofline-gemm-memory" if bw_pct >= FAR_BELOW else "roofline-gemm-latency"


def memory_bound(a: Analysis, s: Summary) -> list[Finding]:
    """Elementwise ops, reductions, softmax and norms under the memory roof: fusing them saves their traffic."""
    r = table_of(a)
    if r.device is None or not r.device.peak_gbps:
        return []
    rows = memory_rows(r)
    moved, time = sum(x.bytes for x in rows), sum(x.device_us for x in rows)
    if len(rows) < 2 or time < FUSE_SHARE * sum(x.device_us for x in r.rows):
        return []
    figures: dict[str, Figure] = {
        "rows": len(rows),
        "calls": sum(x.count for x in rows),
        "ops": _by_name(rows),
        "mb": moved / 1e6,
        "bytes": int(moved),
        "time": us(time),
        "bw": r.device.peak_gbps,
        "bw_pct": 100 * moved / (time * 1e3) / r.device.peak_gbps if time else 0.0,
    }
    marked, total = _marked(r, rows)
    parts = ["roofline-memory-compiled" if uses_of(a).compiled else "roofline-memory"]
    return [Finding("roofline-memory", "Memory-bound ops to fuse", figures, marked, parts, total)]


def memory_rows(r: Roofline) -> list[RooflineRow]:
    """The elementwise, reduction, softmax and norm rows under the memory roof (copies left out)."""
    return [x for x in r.rows if x.family in FUSABLE and x.bound == "memory" and x.name not in NOT_FUSED]


def _by_name(rows: list[RooflineRow], n: int = 4) -> list[Quantity]:
    """The ops' device time summed per name (all their shapes), the most first."""
    times: dict[str, float] = {}
    for x in rows:
        times[x.name] = times.get(x.name, 0.0) + x.device_us
    return [us(t, name) for name, t in sorted(times.items(), key=lambda kv: -kv[1])[:n]]


def fp32_gemm(a: Analysis, s: Summary) -> list[Finding]:
    """fp32 GEMMs measured against an fp32 roof (the CUDA cores, or an AMD GPU's fp32 matrix rate) whose TF32 (or bf16)
    tensor-core roof is several times higher. An fp32 GEMM whose kernels ran TF32 on the tensor cores is measured
    against the TF32 roof (roofline/units.py), so it is never here."""
    r = table_of(a)
    if r.device is None:
        return []
    rows = fp32_rows(r)
    matrix = fp32_on_matrix(r.device, rows)
    tc, tc_peak, fp32 = tensor_core_gain(r.device, matrix)
    if not rows or not fp32 or tc_peak < 1.5 * fp32:
        return []
    time, flops = sum(x.device_us for x in rows), sum(x.flops for x in rows)
    figures: dict[str, Figure] = {
        "rows": len(rows),
        "calls": sum(x.count for x in rows),
        "time": us(time),
        "tflops": Quantity(flops / (time * 1e6) if time else 0.0, "TFLOP/s"),
        "fp32": Quantity(fp32, "TFLOP/s"),
        "tc": tc.upper() if tc == "tf32" else tc,
        "tc_peak": Quantity(tc_peak, "TFLOP/s"),
        "ratio": Quantity(tc_peak / fp32, "x"),
        "top": rows[0].name,
        "top_shapes": rows[0].input_shapes,
    }
    marked, total = _marked(r, rows)
    title = "fp32 GEMMs at the matrix cores' fp32 rate" if matrix else "fp32 GEMMs off the tensor cores"
    u = uses_of(a)  # the advice from what the run already uses: autocast or TF32 on, these left out
    left = fp32_left(u)
    advice = "roofline-fp32-gemm-bf16" if matrix and left == "fp32-advice" else f"next/{left}"
    parts = ["roofline-fp32-gemm-matrix" if matrix else "roofline-fp32-gemm", advice]
    return [Finding("roofline-fp32-gemm", title, figures | next_figures(u), marked, parts, total)]


def fp32_rows(r: Roofline) -> list[RooflineRow]:
    """The fp32 GEMM rows measured against an fp32 roof (not TF32: their kernels do not run on tensor cores). A bf16
    GEMM the CUDA cores ran is measured against the fp32 units too, but its data is no fp32: autocast is in use."""
    return [x for x in r.rows if x.family == "gemm" and x.dtype == "fp32" and x.roof_dtype == "fp32" and x.peak_tflops]


def fp32_on_matrix(device: Device, rows: list[RooflineRow]) -> bool:
    """Do the fp32 rows run on an fp32 matrix unit (AMD's MFMA fp32), not the CUDA cores / vector ALUs?"""
    return bool(rows) and all(x.roof_unit == MATRIX for x in rows) and "matrix_fp32" in device.peak_tflops


def tensor_core_gain(device: Device, matrix: bool = False) -> tuple[str, float, float]:
    """(the tensor-core dtype an fp32 GEMM would move to: tf32, else bf16, else fp16 (V100); its peak; the fp32 peak
    it runs at)."""
    tc = next((t for t in ("tf32", "bf16", "fp16") if f"matrix_{t}" in device.peak_tflops), "bf16")
    fp32 = peak(device, MATRIX if matrix else VECTOR, "fp32") or 0.0
    return tc, device.peak_tflops.get(f"matrix_{tc}", 0.0), fp32


def row_of_call(r: Roofline, call: int) -> RooflineRow | None:
    """The row one modelled call is in (None: it is in none)."""
    calls = np.frombuffer(r.attribution.calls, np.int64)
    k = int(np.searchsorted(calls, call))
    if k >= len(calls) or calls[k] != call:
        return None
    return r.rows[int(np.frombuffer(r.attribution.call_row, np.int64)[k])]


def row_kernels(r: Roofline, rows: list[RooflineRow]) -> dict[str, float]:
    """The device work launched under the rows' calls, by name: device us, the most first."""
    wanted = {k for k, x in enumerate(r.rows) if any(x is y for y in rows)}
    times: dict[str, float] = {}
    for share in r.attribution.kernels:
        if share.row in wanted:
            times[share.kernel] = times.get(share.kernel, 0.0) + share.device_us
    return dict(sorted(times.items(), key=lambda kv: -kv[1]))


def tiny_gemm(a: Analysis, s: Summary) -> list[Finding]:
    """GEMMs with M <= 64 far below both roofs: too little work per launch, bound by overhead and latency."""
    r = table_of(a)
    rows = [
        x
        for x in r.rows
        if x.family == "gemm" and x.bmnk and x.bmnk[1] <= TINY_M and x.pct_of_roof is not None
        if x.pct_of_roof < FAR_BELOW
    ]
    if r.device is None or not rows:
        return []
    top = rows[0]
    figures: dict[str, Figure] = {
        "rows": len(rows),
        "calls": sum(x.count for x in rows),
        "time": us(sum(x.device_us for x in rows)),
        "best": max(x.pct_of_roof or 0.0 for x in rows),
        "example": f"{top.name} {top.input_shapes}",
        "example_tflops": Quantity(top.tflops or 0.0, "TFLOP/s"),
        "example_pct": top.pct_of_roof or 0.0,
        "m": TINY_M,
    }
    marked, total = _marked(r, rows)
    calls_us = sum(x.device_us for x in rows) / max(sum(x.count for x in rows), 1)
    if calls_us >= SHORT_CALL_US:  # long calls: their launches are not the cost, no word of them
        figures["per_call"] = us(calls_us)
        parts = ["roofline-tiny-gemm", "roofline-tiny-gemm-long", "roofline-tiny-gemm-batch"]
    else:
        u = uses_of(a)  # graphs in use: capture these too (or, most of the work replayed, no word on graphs)
        graph = "roofline-tiny-gemm-graph-more" if u.graph_launches else "roofline-tiny-gemm-graph"
        parts = ["roofline-tiny-gemm", "roofline-tiny-gemm-launch", "roofline-tiny-gemm-batch"]
        parts += [] if u.graphed else [graph]
    return [Finding("roofline-tiny-gemm", "Tiny GEMMs far below both roofs", figures, marked, parts, total)]


ROOFLINE_RULES = [
    Rule("roofline-gemm", gemm_roof),
    Rule("roofline-memory", memory_bound),
    Rule("roofline-fp32-gemm", fp32_gemm),
    Rule("roofline-tiny-gemm", tiny_gemm),
]
