"""The ops' kernel sequences table (`ops --kernels`): per op and the sequence it launched, how often, its delays."""

from __future__ import annotations

from ..model.analyses.op_kernels import OpKernels
from ..text.fmt import fmt_time, truncate
from ..text.names import shorten_names
from .base import KEEP, Column, Field, SortKey, UnknownSort

NAME_WIDTH = 120
OP_WIDTH = 48  # an op's name cut as torch's table cuts names (with ...)
KERNEL_WIDTH = 48  # each kernel's name in a sequence, cut in the middle to this
SHOWN = 4  # kernels of a sequence shown in the text table (JSON and CSV: all)
SORTS = {
    "count": SortKey("count", means="calls"),
    "op_to_launch": SortKey("op_to_launch_ns"),
    "launch_to_start": SortKey("launch_to_start_ns", means="latency"),
    "device": SortKey("device_ns", means="device_avg"),
    "name": SortKey("op", False, "name"),
}
DEFAULT_SORT = "count"
NOTE = (
    "An op's launches are those under it on its thread with no aten op between (a launch under no aten op: its "
    "innermost op's); its kernels, copies and sets in launch order. Op→launch: the op's start to its first launch "
    "call's start; launch→start: that call's start to its activity's start; both averaged over the calls, as HTA's "
    "get_aten_op_kernels_and_delay. Graph launches are left out."
)


def resolve_sort(key: str | None) -> str:
    key = key or DEFAULT_SORT
    if key not in SORTS:
        raise UnknownSort(key, list(SORTS))
    return key


def cut_names(rows: list[OpKernels]) -> dict[str, str]:
    """Every kernel name of the rows cut to KERNEL_WIDTH in the middle, names that differ kept apart."""
    names = sorted({k for r in rows for k in r.kernels})
    return dict(zip(names, shorten_names(names, KERNEL_WIDTH), strict=True))


def sequence(r: OpKernels, cut: dict[str, str]) -> str:
    """ "bn_fw_tr_1C11_singleread<float, …>(…) → …": the first SHOWN kernels, cut, then how many more."""
    text = " → ".join(cut.get(k, k) for k in r.kernels[:SHOWN])
    return text + (f" → … {len(r.kernels) - SHOWN} more" if len(r.kernels) > SHOWN else "")


def columns() -> list[Column[OpKernels, dict[str, str]]]:
    return [
        Column("Op", lambda r, c, w: truncate(r.op, OP_WIDTH), priority=KEEP, left=True),
        Column("Calls", lambda r, c, w: f"{r.count:,}", "count", KEEP),
        Column("Op→launch", lambda r, c, w: fmt_time(r.op_to_launch_ns / 1000), "op_to_launch", KEEP),
        Column("Launch→start", lambda r, c, w: fmt_time(r.launch_to_start_ns / 1000), "launch_to_start", 1),
        Column("Device/call", lambda r, c, w: fmt_time(r.device_ns / 1000), "device", 2),
        Column("Kernels", lambda r, c, w: sequence(r, c), name=True, min_width=24),
    ]


FIELDS: list[Field[OpKernels]] = [
    Field(
        "op",
        lambda r: r.op,
        "the op whose launches these are (its innermost aten op, else its innermost op)",
        "VARCHAR",
    ),
    Field("kernels", lambda r: r.kernels, "the kernels, copies and sets it launched, in launch order", "VARCHAR[]"),
    Field("count", lambda r: r.count, "the op calls that launched exactly this sequence", "BIGINT"),
    Field(
        "op_to_launch_us", lambda r: r.op_to_launch_ns / 1000, "the op's start to its first launch call's start, mean"
    ),
    Field(
        "launch_to_start_us", lambda r: r.launch_to_start_ns / 1000, "that call's start to its activity's start, mean"
    ),
    Field("device_us", lambda r: r.device_ns / 1000, "the sequence's device time per call, mean"),
    Field("example_id", lambda r: r.example, "one op call that launched it: an events id", "BIGINT"),
]
CSV_FIELDS = [f if f.key != "kernels" else Field("kernels", lambda r: " -> ".join(r.kernels)) for f in FIELDS]


def footers(rows: list[OpKernels]) -> list[str]:
    return [NOTE] if rows else ["No op launched device work in this trace."]
