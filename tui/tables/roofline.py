"""The roofline table: per (op, input shapes, dtype), FLOPs, bytes, achieved FLOP/s and GB/s, the bound and % of roof."""

from __future__ import annotations

from ..model.analyses.roofline.links import host_link, peer_link
from ..model.analyses.roofline.peaks import Device
from ..model.analyses.roofline.points import NO_SHAPES, Roofline, RooflineRow
from ..text.fmt import compact_shapes, fmt_memory, fmt_time, plural, truncate
from ..text.sanitize import visible
from .base import FULL, KEEP, Column, Field, SortKey, UnknownSort
from .rates import BYTE_RATES, FLOP_RATES, fmt_rate, rate_column

NAME_WIDTH = 60
SORTS = {
    "device": SortKey("device_us"),
    "count": SortKey("count"),
    "flops": SortKey("flops"),
    "bytes": SortKey("bytes"),
    "intensity": SortKey("intensity"),
    "tflops": SortKey("tflops"),
    "gbps": SortKey("gbps"),
    "pct": SortKey("pct_of_roof"),
    "name": SortKey("name", False),
}
DEFAULT_SORT = "device"
HOW_TO_SHAPES = NO_SHAPES


def resolve_sort(key: str | None) -> str:
    key = key or DEFAULT_SORT
    if key not in SORTS:
        raise UnknownSort(key, list(SORTS))
    return key


def fmt_count(value: float, unit: str) -> str:
    """FLOPs with an SI prefix (241.6 GFLOP, 153.1 MFLOP); bytes as every size tracetui prints, torch's binary
    units named as such (317.12 KiB, 1.25 GiB)."""
    if unit == "B":
        return fmt_memory(int(value))
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.1f} {prefix}{unit}"
    return f"{value:.0f} {unit}"


def _time(r: RooflineRow, t: Roofline, width: int) -> str:
    """An op's time: the device time it launched, or on a CPU capture its CPU time (the column then says so)."""
    return fmt_time(r.device_us)


def dtype_text(r: RooflineRow) -> str:
    """The data's dtype, and the roof's when it differs (fp32 GEMMs that ran on TF32 tensor cores: fp32/tf32; a bf16
    elementwise op, measured against the fp32 vector units: bf16/fp32)."""
    return r.dtype if r.roof_dtype in ("", r.dtype) else f"{r.dtype}/{r.roof_dtype}"


def _bound(r: RooflineRow) -> str:
    """compute, memory, or the link a copy crossed (host link, peer link): the roof % of roof is of."""
    return f"{r.link} link" if r.bound == "link" else r.bound or "-"


def _pct(r: RooflineRow) -> str:
    return "-" if r.pct_of_roof is None else f"{r.pct_of_roof:.1f}%"


COLUMNS: list[Column[RooflineRow, Roofline]] = [
    Column("Name", lambda r, t, w: truncate(r.name, w), "name", KEEP, name=True, min_width=20),
    Column(
        "Input shapes",
        lambda r, t, w: r.input_shapes if w >= FULL else truncate(r.input_shapes, 48),
        None,
        1,
        left=True,
        fold=lambda r: compact_shapes(r.input_shapes),
    ),
    Column("Dtype", lambda r, t, w: dtype_text(r), None, 3, left=True),
    Column("Calls", lambda r, t, w: str(r.count), "count", 2),
    Column("Device", _time, "device", KEEP, made_for=lambda rows, t: ("CPU time" if t.on_cpu else "Device", _time)),
    Column("FLOPs", lambda r, t, w: fmt_count(r.flops, "FLOP"), "flops", 2),
    Column("Bytes", lambda r, t, w: fmt_count(r.bytes, "B"), "bytes", 2),
    Column("FLOP/B", lambda r, t, w: fmt_rate(r.intensity), "intensity", 3),
    rate_column(FLOP_RATES, lambda r, t: r.tflops, "tflops", KEEP),  # in T-, G- or MFLOP/s, as its top rate reads
    rate_column(BYTE_RATES, lambda r, t: r.gbps, "gbps", 3),
    Column("Bound", lambda r, t, w: _bound(r), None, KEEP, left=True),  # says which roof % of roof is of
    Column("% of roof", lambda r, t, w: _pct(r), "pct", KEEP),
]

FIELDS: list[Field[RooflineRow]] = [
    Field("name", lambda r: r.name),
    Field("input_shapes", lambda r: r.input_shapes),
    Field("dtype", lambda r: r.dtype),
    Field("count", lambda r: r.count),
    Field("device_us", lambda r: r.device_us),
    Field("flops", lambda r: r.flops),
    Field("bytes", lambda r: r.bytes),
    Field("intensity", lambda r: r.intensity),
    Field("tflops", lambda r: r.tflops),
    Field("gbps", lambda r: r.gbps),
    Field("bound", lambda r: r.bound or None),
    Field("link", lambda r: r.link or None),
    Field("roof_dtype", lambda r: r.roof_dtype or None),
    Field("pct_of_roof", lambda r: r.pct_of_roof),
]


def device_doc(t: Roofline) -> dict:
    """The JSON "device": what the roofs are (null figures for a GPU not in the table)."""
    d = t.device
    return {
        "name": d.name if d else t.gpu,
        "peak_tflops": dict(d.peak_tflops) if d else {},
        "peak_gbps": d.peak_gbps if d else None,
        "source": d.source if d else "",
    } | ({"links": links_doc(d)} if d else {})


def links_doc(d: Device) -> dict:
    """The links copies are measured against: each one's name, rate each way and whether it is the assumed default."""
    return {
        kind: {"name": link.name, "gbps": link.gbps, "default": link.default}
        for kind, link in (("host", host_link(d)), ("peer", peer_link(d)))
    }


def not_modelled_doc(t: Roofline) -> dict:
    return {"ops": t.not_modelled_ops, "device_us": t.not_modelled_us}


def device_line(t: Roofline) -> str:
    """Which roofs the percentages are of, in words."""
    time = "CPU time of the ops (no device activity in this trace)" if t.on_cpu else "device time launched by each op"
    if t.device is None:
        who = "the CPU" if t.on_cpu else f"GPU {t.gpu or '(unnamed)'}"
        return f"No peaks for {who}: rates without % of roof (--gpu NAME or --peaks FILE gives them); times are {time}."
    bw = f"{t.device.peak_gbps:,.0f} GB/s" if t.device.peak_gbps else "no bandwidth"
    return f"Roofs of {t.device.name} ({bw}; the source is in --format json); times are {time}."


def fp32_units_line(t: Roofline) -> str | None:
    """Why bf16/fp16 vector rows read '/fp32': their roof is the fp32 units, and the reason (None: no such row)."""
    half = sorted({r.dtype for r in t.rows if r.unit == "vector" and r.roof_dtype == "fp32" and r.dtype != "fp32"})
    if not half or t.device is None:
        return None
    kinds = "/".join(half)
    return (
        f"{kinds}/fp32: {kinds} elementwise, reduction and norm ops are measured against the fp32 vector units: "
        f"PyTorch computes their math in fp32 (opmath), and the {t.device.name}'s source gives no non-tensor "
        f"{kinds} rate."
    )


def links_line(t: Roofline) -> str | None:
    """Which link the copy rows are measured against (None: no such row)."""
    kinds = [k for k in ("host", "peer") if any(r.bound == "link" and r.link == k for r in t.rows)]
    if not kinds or t.device is None:
        return None
    words = {"host": "host-device copies", "peer": "peer copies"}
    told = []
    for k in kinds:
        link = host_link(t.device) if k == "host" else peer_link(t.device)
        said = "an assumed default: the GPU table gives no link for this GPU" if link.default else t.device.name + "'s"
        told.append(f"{words[k]} against {link.name}, {link.gbps:,.0f} GB/s each way ({said})")
    return "Copies over a link are measured against the link, not the memory: " + "; ".join(told) + "."


def footers(t: Roofline) -> list[str]:
    lines = [device_line(t)]
    link = links_line(t)
    lines += [link] if link else []
    units = fp32_units_line(t)
    lines += [units] if units else []
    if t.not_modelled:
        top = ", ".join(f"{visible(n.name)} ({n.count:,}, {fmt_time(n.device_us)})" for n in t.not_modelled[:5])
        more = f" and {len(t.not_modelled) - 5} more" if len(t.not_modelled) > 5 else ""
        lines.append(f"Not modelled: {plural(t.not_modelled_ops, 'op')}, {fmt_time(t.not_modelled_us)}: {top}{more}.")
    if not t.rows:
        lines.append("No op with a FLOPs model ran device work in this trace.")
    return lines
